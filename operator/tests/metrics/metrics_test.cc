#include "metrics/metrics.h"

#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <string>

#include "contract/release_version.h"
#include "metrics/catalog.h"

namespace ncclop::metrics {
namespace {

TEST(Histogram, BucketsAreCumulative) {
  Histogram h({1, 5});
  h.Observe(0.5);
  h.Observe(3);
  h.Observe(100);
  std::string out;
  h.Render("x", &out);
  EXPECT_NE(out.find("x_bucket{le=\"1\"} 1\n"), std::string::npos) << out;
  EXPECT_NE(out.find("x_bucket{le=\"5\"} 2\n"), std::string::npos) << out;
  EXPECT_NE(out.find("x_bucket{le=\"+Inf\"} 3\n"), std::string::npos) << out;
  EXPECT_NE(out.find("x_sum 103.5\n"), std::string::npos) << out;
  EXPECT_NE(out.find("x_count 3\n"), std::string::npos) << out;
}

TEST(Metrics, RendersCountersGaugesAndHistograms) {
  Metrics m;
  m.ReconcileStarted();
  m.ReconcileDone(0.002, ReconcileEnd::kSuccess);
  m.ReconcileStarted();
  m.ReconcileDone(0.2, ReconcileEnd::kError);
  m.Restarted();
  m.IdPublished(1.5);
  std::string out = m.Render({.jobs_by_state = {{"Running", 2}, {"Failed", 1}}, .leader = true});
  EXPECT_NE(out.find("# TYPE ncclop_reconcile_total counter\nncclop_reconcile_total 2\n"), std::string::npos);
  EXPECT_NE(out.find("ncclop_reconcile_errors_total 1\n"), std::string::npos);
  EXPECT_NE(out.find("ncclop_reconcile_duration_seconds_count 2\n"), std::string::npos);
  EXPECT_NE(out.find("ncclop_jobs{state=\"Running\"} 2\n"), std::string::npos);
  EXPECT_NE(out.find("ncclop_restarts_total 1\n"), std::string::npos);
  EXPECT_NE(out.find("ncclop_id_publish_latency_seconds_bucket{le=\"2\"} 1\n"), std::string::npos);
  EXPECT_NE(out.find("ncclop_leader 1\n"), std::string::npos);
}

TEST(Metrics, EveryJobStateIsReportedZeroIncludedAndNoLabelIsEmpty) {
  std::string out = Metrics().Render({.jobs_by_state = {{"Running", 2}, {"", 1}, {"Bogus", 1}}});
  for (const char* state : {"Pending", "Restarting", "Succeeded", "Failed", "Suspended"}) {
    EXPECT_NE(out.find(std::string("ncclop_jobs{state=\"") + state + "\"} 0\n"), std::string::npos) << state << "\n" << out;
  }
  EXPECT_NE(out.find("ncclop_jobs{state=\"Running\"} 2\n"), std::string::npos);
  EXPECT_NE(out.find("ncclop_jobs{state=\"Unknown\"} 2\n"), std::string::npos) << "no state and an unknown one";
  EXPECT_EQ(out.find("=\"\""), std::string::npos) << "an empty label value:\n" << out;
}

TEST(Metrics, BuildInfoAndProcessMetrics) {
  std::string out = Metrics().Render({.leader = true});
  const std::string build_info = "ncclop_build_info{version=\"" + std::string(contract::kReleaseVersion) + "\"} 1\n";
  EXPECT_NE(out.find(build_info), std::string::npos) << out;
  for (const char* name : {"process_cpu_seconds_total ", "process_resident_memory_bytes ", "process_open_fds ",
                           "process_start_time_seconds ", "process_virtual_memory_bytes "}) {
    EXPECT_NE(out.find(std::string("\n") + name), std::string::npos) << name;
  }
}

TEST(Metrics, WorkQueueAndApiRequests) {
  Metrics m;
  m.WorkQueueAdded();
  m.WorkQueueAdded();
  m.WorkQueueWaited(0.0005);
  m.ApiResponse("POST", 201, 0.004);
  m.ApiResponse("POST", 201, 0.2);
  m.ApiResponse("GET", 429, 0.0005);
  m.ApiResponse("GET", 0, 70);
  std::string out = m.Render({.leader = true, .queue_ready = 3});
  EXPECT_NE(out.find("ncclop_workqueue_depth 3\n"), std::string::npos) << out;
  EXPECT_NE(out.find("ncclop_workqueue_adds_total 2\n"), std::string::npos);
  EXPECT_NE(out.find("ncclop_workqueue_queue_duration_seconds_bucket{le=\"0.001\"} 1\n"), std::string::npos);
  EXPECT_NE(out.find("ncclop_api_requests_total{verb=\"POST\",code=\"201\"} 2\n"), std::string::npos);
  EXPECT_NE(out.find("ncclop_api_requests_total{verb=\"GET\",code=\"429\"} 1\n"), std::string::npos) << "429s visible";
  EXPECT_NE(out.find("ncclop_api_requests_total{verb=\"GET\",code=\"error\"} 1\n"), std::string::npos);
  // Latency by verb: buckets cumulative, the verb before le, sum and count labelled too.
  EXPECT_NE(out.find("ncclop_api_request_duration_seconds_bucket{verb=\"POST\",le=\"0.005\"} 1\n"), std::string::npos)
      << out;
  EXPECT_NE(out.find("ncclop_api_request_duration_seconds_bucket{verb=\"POST\",le=\"0.25\"} 2\n"), std::string::npos);
  EXPECT_NE(out.find("ncclop_api_request_duration_seconds_bucket{verb=\"GET\",le=\"60\"} 1\n"), std::string::npos);
  EXPECT_NE(out.find("ncclop_api_request_duration_seconds_bucket{verb=\"GET\",le=\"+Inf\"} 2\n"), std::string::npos);
  EXPECT_NE(out.find("ncclop_api_request_duration_seconds_count{verb=\"POST\"} 2\n"), std::string::npos);
  EXPECT_NE(out.find("ncclop_api_request_duration_seconds_sum{verb=\"POST\"} 0.204\n"), std::string::npos);
}

TEST(Metrics, ControllerRuntimeNamesCountReconcilesByResult) {
  Metrics m;
  for (ReconcileEnd end : {ReconcileEnd::kSuccess, ReconcileEnd::kSuccess, ReconcileEnd::kRequeueAfter,
                           ReconcileEnd::kRequeue, ReconcileEnd::kError}) {
    m.ReconcileStarted();
    m.ReconcileDone(0.12, end);
  }
  m.ReconcileStarted();  // one still running
  std::string out = m.Render({.max_concurrent_reconciles = 4});
  const std::string total = "controller_runtime_reconcile_total{controller=\"nccljob\",result=";
  EXPECT_NE(out.find(total + "\"success\"} 2\n"), std::string::npos) << out;
  EXPECT_NE(out.find(total + "\"requeue_after\"} 1\n"), std::string::npos);
  EXPECT_NE(out.find(total + "\"requeue\"} 1\n"), std::string::npos);
  EXPECT_NE(out.find(total + "\"error\"} 1\n"), std::string::npos);
  EXPECT_NE(out.find("controller_runtime_reconcile_errors_total{controller=\"nccljob\"} 1\n"), std::string::npos);
  EXPECT_NE(out.find("controller_runtime_active_workers{controller=\"nccljob\"} 1\n"), std::string::npos);
  EXPECT_NE(out.find("controller_runtime_max_concurrent_reconciles{controller=\"nccljob\"} 4\n"), std::string::npos);
  // controller-runtime's buckets: 0.1 holds none of the five 0.12 s reconciles, 0.15 all.
  const std::string time = "controller_runtime_reconcile_time_seconds_bucket{controller=\"nccljob\",le=";
  EXPECT_NE(out.find(time + "\"0.1\"} 0\n"), std::string::npos);
  EXPECT_NE(out.find(time + "\"0.15\"} 5\n"), std::string::npos);
  EXPECT_NE(out.find(time + "\"60\"} 5\n"), std::string::npos);
  EXPECT_NE(out.find("controller_runtime_reconcile_time_seconds_count{controller=\"nccljob\"} 5\n"), std::string::npos);
  EXPECT_NE(out.find("ncclop_reconcile_total 5\n"), std::string::npos) << "ours go on counting";
}

TEST(Metrics, ClientGoQueueRestClientAndLeaderElection) {
  Metrics m;
  m.QueueQueued();
  m.QueueQueued();
  m.QueueRetried();
  m.QueueTaken(0.00002);
  m.QueueDone(2.5);
  m.ApiResponse("POST", 201, 0.004, "10.96.0.1:443");
  m.ApiResponse("GET", 0, 70, "10.96.0.1:443");
  std::string out = m.Render({.leader = false, .queue_waiting = 1, .unfinished_seconds = 7.5,
                              .longest_running_seconds = 5, .lease_name = "nccl-operator-leader"});
  const std::string q = "{name=\"nccljob\",controller=\"nccljob\"}";
  EXPECT_NE(out.find("workqueue_depth" + q + " 1\n"), std::string::npos) << out;
  EXPECT_NE(out.find("workqueue_adds_total" + q + " 2\n"), std::string::npos);
  EXPECT_NE(out.find("workqueue_retries_total" + q + " 1\n"), std::string::npos);
  EXPECT_NE(out.find("workqueue_unfinished_work_seconds" + q + " 7.5\n"), std::string::npos);
  EXPECT_NE(out.find("workqueue_longest_running_processor_seconds" + q + " 5\n"), std::string::npos);
  // client-go's buckets, 10 ns to 1000 s by tens.
  const std::string taken = "workqueue_queue_duration_seconds_bucket{name=\"nccljob\",controller=\"nccljob\",le=";
  EXPECT_NE(out.find(taken + "\"1e-05\"} 0\n"), std::string::npos);
  EXPECT_NE(out.find(taken + "\"0.0001\"} 1\n"), std::string::npos);
  EXPECT_NE(out.find(taken + "\"1000\"} 1\n"), std::string::npos);
  EXPECT_NE(out.find("workqueue_work_duration_seconds_bucket{name=\"nccljob\",controller=\"nccljob\",le=\"10\"} 1\n"),
            std::string::npos);
  EXPECT_NE(out.find("rest_client_requests_total{code=\"201\",method=\"POST\",host=\"10.96.0.1:443\"} 1\n"),
            std::string::npos);
  EXPECT_NE(out.find("rest_client_requests_total{code=\"<error>\",method=\"GET\",host=\"10.96.0.1:443\"} 1\n"),
            std::string::npos);
  EXPECT_NE(out.find("leader_election_master_status{name=\"nccl-operator-leader\"} 0\n"), std::string::npos);
  EXPECT_EQ(Metrics().Render({.leader = true}).find("leader_election_master_status"), std::string::npos)
      << "no Lease, no series (as controller-runtime without leader election)";
}

// Every family Render writes is a row of the catalog with its type, and every row but the
// optional ones (process_max_fds where unlimited) is written.
TEST(Catalog, RenderWritesExactlyTheCatalog) {
  Metrics m;
  m.ApiResponse("GET", 200, 0.01, "h:1");
  std::istringstream lines(m.Render({.lease_name = "lease"}));
  std::set<std::string> rendered;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("# TYPE ", 0) != 0) continue;
    rendered.insert(line.substr(7));
  }
  std::set<std::string> declared;
  for (const Family& f : kCatalog) declared.insert(std::string(f.name) + " " + std::string(TypeName(f.type)));
  for (const std::string& family : rendered) EXPECT_TRUE(declared.count(family)) << "not in the catalog: " << family;
  for (const std::string& family : declared) {
    if (family.rfind("process_max_fds", 0) == 0) continue;
    EXPECT_TRUE(rendered.count(family)) << "never rendered: " << family;
  }
  std::set<std::string_view> names;
  for (const Family& f : kCatalog) EXPECT_TRUE(names.insert(f.name).second) << "twice: " << f.name;
}

}  // namespace
}  // namespace ncclop::metrics

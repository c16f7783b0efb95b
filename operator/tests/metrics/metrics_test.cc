#include "metrics/metrics.h"

#include <gtest/gtest.h>

#include <string>

#include "contract/release_version.h"

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
  m.ReconcileDone(0.002, true);
  m.ReconcileDone(0.2, false);
  m.Restarted();
  m.IdPublished(1.5);
  std::string out = m.Render({{"Running", 2}, {"Failed", 1}}, true);
  EXPECT_NE(out.find("# TYPE ncclop_reconcile_total counter\nncclop_reconcile_total 2\n"), std::string::npos);
  EXPECT_NE(out.find("ncclop_reconcile_errors_total 1\n"), std::string::npos);
  EXPECT_NE(out.find("ncclop_reconcile_duration_seconds_count 2\n"), std::string::npos);
  EXPECT_NE(out.find("ncclop_jobs{state=\"Running\"} 2\n"), std::string::npos);
  EXPECT_NE(out.find("ncclop_restarts_total 1\n"), std::string::npos);
  EXPECT_NE(out.find("ncclop_id_publish_latency_seconds_bucket{le=\"2\"} 1\n"), std::string::npos);
  EXPECT_NE(out.find("ncclop_leader 1\n"), std::string::npos);
}

TEST(Metrics, EveryJobStateIsReportedZeroIncludedAndNoLabelIsEmpty) {
  std::string out = Metrics().Render({{"Running", 2}, {"", 1}, {"Bogus", 1}}, false);
  for (const char* state : {"Pending", "Restarting", "Succeeded", "Failed", "Suspended"}) {
    EXPECT_NE(out.find(std::string("ncclop_jobs{state=\"") + state + "\"} 0\n"), std::string::npos) << state << "\n" << out;
  }
  EXPECT_NE(out.find("ncclop_jobs{state=\"Running\"} 2\n"), std::string::npos);
  EXPECT_NE(out.find("ncclop_jobs{state=\"Unknown\"} 2\n"), std::string::npos) << "no state and an unknown one";
  EXPECT_EQ(out.find("=\"\""), std::string::npos) << "an empty label value:\n" << out;
}

TEST(Metrics, BuildInfoAndProcessMetrics) {
  std::string out = Metrics().Render({}, true);
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
  std::string out = m.Render({}, true, 3);
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

}  // namespace
}  // namespace ncclop::metrics

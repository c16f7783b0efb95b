// Disruptions (preemption, eviction, a lost node) restart the attempt without using a restart.
#include <gtest/gtest.h>

#include "observed/disruption.h"
#include "policy/failure_policy.h"
#include "policy/decide.h"
#include "test_jobs.h"

namespace ncclop::policy {
namespace {

using namespace std::chrono_literals;
using Json = nlohmann::json;
using observed::ObservedConfigMap;
using observed::ObservedPod;
using observed::ObservedKueueWorkload;
using observed::Disruption;
using observed::DisruptionOf;
using observed::ObservePod;
using testing::FailedPod;
using testing::Pod;

const api::Time kNow = *api::ParseTime("2024-01-01T00:00:00Z");

Json Status(const char* text) { return Json::parse(text); }

api::NcclJob RunningJob(int restarts = 0, int disruptions = 0) {
  auto job = testing::Job(4, 2);
  job.status.attempt = 1 + restarts + disruptions;
  job.status.restarts = restarts;
  job.status.disruptions = disruptions;
  job.status.start_time = "2023-12-31T23:59:00Z";
  job.status.attempt_start_time = "2023-12-31T23:59:30Z";
  // Its id is published (Published(attempt) below) and recorded: the status follows the ConfigMap.
  job.status.id_published_time = "2024-01-01T00:00:00Z";
  job.status.conditions.push_back({"IdPublished", "True", "Published", "the id is in ConfigMap demo-nccl",
                                   "2024-01-01T00:00:00Z", 1});
  return job;
}

std::vector<ObservedPod> AllPods(int attempt) {
  std::vector<ObservedPod> pods;
  for (int i = 0; i < 4; ++i) pods.push_back(Pod(i, attempt));
  return pods;
}

ObservedPod EvictedPod(int index, int attempt) {
  ObservedPod p = FailedPod(index, attempt, 143);
  p.terminating = true;
  p.disruption = Disruption{"Eviction", "evicted through the Eviction API, e.g. by a node drain (EvictionByEvictionAPI)"};
  return p;
}

ObservedConfigMap Published(int attempt) { return {true, attempt, true, "2024-01-01T00:00:00Z", "uid-1"}; }

TEST(DisruptionOf, TheDisruptionTargetConditionSaysWhoEndedThePod) {
  auto evicted = DisruptionOf(Status(R"({"phase":"Running","conditions":[
      {"type":"Ready","status":"True"},
      {"type":"DisruptionTarget","status":"True","reason":"EvictionByEvictionAPI"}]})"));
  ASSERT_TRUE(evicted);
  EXPECT_EQ(evicted->kind, "Eviction");
  EXPECT_NE(evicted->account.find("Eviction API"), std::string::npos);
  EXPECT_NE(evicted->account.find("(EvictionByEvictionAPI)"), std::string::npos);

  auto preempted = DisruptionOf(Status(R"({"conditions":[{"type":"DisruptionTarget","status":"True","reason":"PreemptionByScheduler"}]})"));
  ASSERT_TRUE(preempted);
  EXPECT_EQ(preempted->kind, "Preemption");

  auto node_gone = DisruptionOf(Status(R"({"conditions":[{"type":"DisruptionTarget","status":"True","reason":"DeletionByPodGC"}]})"));
  ASSERT_TRUE(node_gone);
  EXPECT_EQ(node_gone->kind, "NodeLost");

  auto unknown = DisruptionOf(Status(R"({"conditions":[{"type":"DisruptionTarget","status":"True","reason":"SomethingNew"}]})"));
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->kind, "Disruption");
  EXPECT_EQ(unknown->account, "disrupted (SomethingNew)");
}

TEST(DisruptionOf, TheKubeletsReasonsOnAFailedPod) {
  auto pressure = DisruptionOf(Status(R"({"phase":"Failed","reason":"Evicted","message":"low on memory"})"));
  ASSERT_TRUE(pressure);
  EXPECT_EQ(pressure->kind, "NodePressure");
  auto shutdown = DisruptionOf(Status(R"({"phase":"Failed","reason":"Terminated"})"));
  ASSERT_TRUE(shutdown);
  EXPECT_EQ(shutdown->kind, "NodeShutdown");
  EXPECT_FALSE(DisruptionOf(Status(R"({"phase":"Running","reason":"Evicted"})"))) << "only a Failed pod carries them";
}

TEST(DisruptionOf, ACrashOrAFalseConditionIsNoDisruption) {
  EXPECT_FALSE(DisruptionOf(Status(R"({"phase":"Failed","reason":"Error"})")));
  EXPECT_FALSE(DisruptionOf(Status(R"({"phase":"Failed","conditions":[{"type":"DisruptionTarget","status":"False"}]})")));
  EXPECT_FALSE(DisruptionOf(Status(R"({})")));
  EXPECT_FALSE(DisruptionOf(Json()));
}

TEST(ObservePod, CarriesTheDisruption) {
  ObservedPod p = ObservePod(Json::parse(R"({"metadata":{"name":"demo-2","deletionTimestamp":"2024-01-01T00:00:00Z",
      "labels":{"nccl.dev/index":"2","nccl.dev/attempt":"1"}},
    "status":{"phase":"Running","conditions":[{"type":"DisruptionTarget","status":"True","reason":"EvictionByEvictionAPI"}],
      "containerStatuses":[{"name":"trainer","state":{"terminated":{"exitCode":143}}}]}})"), "trainer");
  ASSERT_TRUE(p.disruption);
  EXPECT_EQ(p.disruption->kind, "Eviction");
  EXPECT_TRUE(p.terminating);
  EXPECT_TRUE(p.failed);
}

TEST(FindAttemptFailure, ADisruptedPodIsTheCauseEvenWhenAPeerCrashedFirst) {
  auto pods = AllPods(1);
  pods[0] = FailedPod(0, 1, 1);  // lost its peer, exited 1
  pods[2] = EvictedPod(2, 1);
  auto f = FindAttemptFailure("demo", observed::ViewAttempt(pods, 1, 4), true);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->pod, "demo-2");
  ASSERT_TRUE(f->disruption);
  EXPECT_EQ(f->detail, "pod demo-2 was evicted through the Eviction API, e.g. by a node drain (EvictionByEvictionAPI)");
}

TEST(FindAttemptFailure, ADisruptionTargetOnAPodStillRunningEndsNothing) {
  auto pods = AllPods(1);
  pods[1].disruption = Disruption{"Preemption", "preempted"};
  EXPECT_FALSE(FindAttemptFailure("demo", observed::ViewAttempt(pods, 1, 4), true));
}

TEST(Judge, DisruptionsUseTheirOwnCountAndCap) {
  api::FailurePolicy fp;
  fp.max_restarts = 0;
  fp.fail_fast_exit_codes = {143};
  AttemptFailure disrupted{"p", "", 143, Disruption{"Eviction", "evicted"}};
  EXPECT_EQ(Judge(fp, disrupted, 0, 0), FailureVerdict::kRestartAfterDisruption)
      << "neither maxRestarts 0 nor a fail-fast code stops a disruption's restart";
  EXPECT_EQ(Judge(fp, disrupted, 0, 100), FailureVerdict::kRestartAfterDisruption) << "no cap unless set";
  fp.max_disruptions = 2;
  EXPECT_EQ(Judge(fp, disrupted, 0, 1), FailureVerdict::kRestartAfterDisruption);
  EXPECT_EQ(Judge(fp, disrupted, 0, 2), FailureVerdict::kDisruptionsExhausted);
  EXPECT_EQ(Judge(fp, {"p", "", 1, std::nullopt}, 0, 2), FailureVerdict::kRestartsExhausted) << "a crash still counts";
}

TEST(Decide, AnEvictionRestartsWithoutUsingARestart) {
  auto job = RunningJob();
  auto pods = AllPods(1);
  pods[2] = EvictedPod(2, 1);
  Plan p = Decide(job, pods, Published(1), kNow);
  EXPECT_EQ(p.status.state, "Restarting");
  EXPECT_EQ(p.status.restarts, 0);
  EXPECT_EQ(p.status.disruptions, 1);
  EXPECT_EQ(p.status.restart_after, "2024-01-01T00:00:10Z");
  const api::Condition* restarting = p.status.Find("Restarting");
  ASSERT_NE(restarting, nullptr);
  EXPECT_EQ(restarting->reason, "PodDisrupted");
  EXPECT_NE(restarting->message.find("attempt 1 was disrupted (Eviction: pod demo-2 was evicted"), std::string::npos) << restarting->message;
  ASSERT_EQ(p.events.size(), 1u);
  EXPECT_EQ(p.events[0].reason, "Restarting");
  EXPECT_NE(p.events[0].message.find("Eviction API"), std::string::npos) << p.events[0].message;
  EXPECT_NE(p.events[0].message.find("not counted in failurePolicy.maxRestarts"), std::string::npos);
  EXPECT_TRUE(p.disrupted);
  EXPECT_FALSE(p.restarted);
  EXPECT_EQ(p.delete_pods.size(), 3u) << "demo-2 is already being deleted";

  job.status = p.status;
  Plan next = Decide(job, {}, Published(1), kNow + 10s);
  EXPECT_EQ(next.status.attempt, 2);
  ASSERT_FALSE(next.events.empty());
  EXPECT_NE(next.events[0].message.find("after disruption 1"), std::string::npos) << next.events[0].message;
}

TEST(Decide, ACrashAfterADisruptionStillCounts) {
  auto job = RunningJob(0, 1);
  auto pods = AllPods(2);
  pods[1] = FailedPod(1, 2, 137);
  Plan p = Decide(job, pods, Published(2), kNow);
  EXPECT_EQ(p.status.restarts, 1);
  EXPECT_EQ(p.status.disruptions, 1);
  EXPECT_EQ(p.status.Find("Restarting")->reason, "PodFailed");
  EXPECT_TRUE(p.restarted);
}

TEST(Decide, TooManyDisruptionsFailTheJobWhenCapped) {
  auto job = RunningJob(0, 1);
  job.spec.failure_policy.max_disruptions = 1;
  auto pods = AllPods(2);
  pods[3] = EvictedPod(3, 2);
  Plan p = Decide(job, pods, Published(2), kNow);
  EXPECT_EQ(p.status.state, "Failed");
  const api::Condition* failed = p.status.Find("Failed");
  ASSERT_NE(failed, nullptr);
  EXPECT_EQ(failed->reason, "MaxDisruptionsExceeded");
  EXPECT_NE(failed->message.find("1 disruption of failurePolicy.maxDisruptions"), std::string::npos) << failed->message;
  EXPECT_EQ(p.status.disruptions, 1);
}

}  // namespace
}  // namespace ncclop::policy

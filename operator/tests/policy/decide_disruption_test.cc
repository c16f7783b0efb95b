// Decide after a disruption (preemption, eviction, a lost node; observed/disruption.h): the
// attempt restarts without using a restart, unless failurePolicy.maxDisruptions is reached.
#include "policy/decide.h"

#include <gtest/gtest.h>

#include "test_jobs.h"

namespace ncclop::policy {
namespace {

using namespace std::chrono_literals;
using observed::ObservedConfigMap;
using testing::AllPods;
using testing::EvictedPod;
using testing::FailedPod;
using testing::kNow;

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

ObservedConfigMap Published(int attempt) { return {true, attempt, true, "2024-01-01T00:00:00Z", "uid-1"}; }

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

// The reconcile came only after the evicted pod was gone: its delete event, remembered, says why.
TEST(Decide, AnEvictedPodSeenOnlyGoneIsADisruption) {
  auto job = RunningJob();
  auto pods = AllPods(1);
  pods.erase(pods.begin() + 2);
  Plan forgotten = Decide(job, pods, Published(1), kNow);
  EXPECT_EQ(forgotten.status.restarts, 1) << "without the delete event: a pod that disappeared";

  Remembered remembered;
  remembered.gone_disrupted[2] =
      observed::Disruption{"Eviction", "evicted through the Eviction API, e.g. by a node drain"};
  Plan p = Decide(job, pods, Published(1), kNow, remembered);
  EXPECT_EQ(p.status.restarts, 0);
  EXPECT_EQ(p.status.disruptions, 1);
  EXPECT_TRUE(p.disrupted);
  ASSERT_EQ(p.events.size(), 1u);
  EXPECT_NE(p.events[0].message.find("was disrupted (Eviction: pod demo-2 was evicted through the Eviction API"),
            std::string::npos)
      << p.events[0].message;
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

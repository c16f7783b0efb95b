// Decide when an attempt fails: the backoff, the next attempt's pods as the old names free, a
// fail-fast exit code, no restarts left, and a pod that cannot start until initTimeoutSeconds.
#include "policy/decide.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "decide_fixtures.h"

namespace ncclop::policy {
namespace {

using namespace std::chrono_literals;
using observed::ObservedPod;
using testing::AllPods;
using testing::Cm;
using testing::FailedPod;
using testing::HasEvent;
using testing::kNow;
using testing::Pod;
using testing::RunningJob;

ObservedPod BlockedPod(int index, int attempt) {
  ObservedPod p = Pod(index, attempt, "Pending");
  p.start_blocked_reason = "ErrImagePull";
  p.start_blocked_detail = "container trainer: ErrImagePull: not found";
  return p;
}

TEST(Decide, AFailedPodStartsABackoffAndDeletesTheAttempt) {
  auto pods = AllPods(1);
  pods[2] = FailedPod(2, 1, 1);
  Plan p = Decide(RunningJob(), pods, Cm(1, true), kNow);
  EXPECT_EQ(p.status.state, "Restarting");
  EXPECT_EQ(p.status.restarts, 1);
  EXPECT_EQ(p.status.attempt, 1) << "the next attempt is recorded only when it starts";
  EXPECT_EQ(p.status.restart_after, "2024-01-01T00:00:10Z");
  EXPECT_TRUE(p.status.IsTrue("Restarting"));
  EXPECT_EQ(p.delete_pods.size(), 4u);
  EXPECT_TRUE(p.create_pods.empty());
  EXPECT_EQ(p.requeue_after, 10s);
  EXPECT_TRUE(HasEvent(p, "Restarting"));
  EXPECT_TRUE(p.restarted);
}

TEST(Decide, BackoffWaitsThenStartsTheNextAttemptAndItsPodsAsOldNamesFree) {
  auto job = RunningJob(1, 1);
  job.status.restart_after = "2024-01-01T00:00:10Z";
  job.status.conditions.push_back({"Restarting", "True", "PodFailed", "", "2024-01-01T00:00:00Z", 1});

  Plan waiting = Decide(job, {FailedPod(2, 1, 1)}, Cm(1, true), kNow + 4s);
  EXPECT_EQ(waiting.status.attempt, 1);
  EXPECT_EQ(waiting.requeue_after, 6s);
  EXPECT_EQ(waiting.delete_pods, std::vector<std::string>{"demo-2"});

  auto terminating = FailedPod(2, 1, 1);
  terminating.terminating = true;
  Plan started = Decide(job, {terminating}, Cm(1, true), kNow + 10s);
  EXPECT_EQ(started.status.attempt, 2);
  EXPECT_FALSE(started.status.IsTrue("Restarting"));
  EXPECT_TRUE(started.status.id_published_time.empty());
  EXPECT_TRUE(started.write_configmap) << "the ConfigMap is reset to attempt 2 without an id";
  EXPECT_FALSE(started.publish);
  EXPECT_EQ(started.create_pods, (std::vector<int>{0, 1, 3})) << "demo-2 of attempt 1 still holds its name";

  job.status = started.status;
  Plan creating = Decide(job, {Pod(0, 2), Pod(1, 2), Pod(3, 2)}, Cm(2), kNow + 11s);
  EXPECT_EQ(creating.create_pods, (std::vector<int>{2}));
  EXPECT_EQ(creating.status.attempt, 2);
}

// A restart makes pod i of the new attempt as soon as the old pod i is gone, without waiting
// for the last old pod (names are reused, so never two pods of one name); the id waits for
// every old pod to be gone.
TEST(Decide, PodsOfANewAttemptAreMadeAsTheirNamesFreeButTheIdWaitsForEveryOldPod) {
  auto old_pod = Pod(1, 1);
  old_pod.terminating = true;
  Plan p = Decide(RunningJob(2, 1), {old_pod}, Cm(2), kNow);
  EXPECT_TRUE(p.delete_pods.empty()) << "already being deleted";
  EXPECT_EQ(p.create_pods, (std::vector<int>{0, 2, 3}));

  Plan undeleted = Decide(RunningJob(2, 1), {Pod(1, 1)}, Cm(2), kNow);
  EXPECT_EQ(undeleted.delete_pods, std::vector<std::string>{"demo-1"});
  EXPECT_EQ(undeleted.create_pods, (std::vector<int>{0, 2, 3}));

  auto root = Pod(0, 2);
  root.unique_id = "QUJD";
  root.unique_id_attempt = 2;
  std::vector<ObservedPod> pods = {root, Pod(2, 2), Pod(3, 2), old_pod};
  Plan held = Decide(RunningJob(2, 1), pods, Cm(2), kNow);
  EXPECT_FALSE(held.publish) << "demo-1 of attempt 1 is still there";
  EXPECT_TRUE(held.create_pods.empty());

  pods.back() = Pod(1, 2);
  Plan published = Decide(RunningJob(2, 1), pods, Cm(2), kNow);
  ASSERT_TRUE(published.publish);
  EXPECT_EQ(published.publish->unique_id, "QUJD");
}

// A stale pod whose name is not one of the attempt's (a hand-made pod with the job's labels)
// holds back nothing but the id.
TEST(Decide, AStalePodOfAnotherNameHoldsBackOnlyTheId) {
  auto odd = Pod(7, 1);
  odd.name = "demo-extra";
  Plan p = Decide(RunningJob(2, 1), {odd}, Cm(2), kNow);
  EXPECT_EQ(p.delete_pods, std::vector<std::string>{"demo-extra"});
  EXPECT_EQ(p.create_pods, (std::vector<int>{0, 1, 2, 3}));
}

// The name decides, not the labels: a pod named demo-2 whatever its index label holds pod 2's
// name; demo-02, demo-+3, demo--1, demo-4 (out of range) and demo-3x hold none of the attempt's.
TEST(Decide, ANameIsHeldByThePodOfThatExactName) {
  auto relabelled = Pod(5, 1);
  relabelled.name = "demo-2";
  std::vector<ObservedPod> pods = {relabelled};
  for (const char* name : {"demo-02", "demo-+3", "demo--1", "demo-4", "demo-3x", "demo-", "demo", "dem-1", "demox-1"}) {
    auto odd = Pod(9, 1);
    odd.name = name;
    pods.push_back(odd);
  }
  Plan p = Decide(RunningJob(2, 1), pods, Cm(2), kNow);
  EXPECT_EQ(p.create_pods, (std::vector<int>{0, 1, 3}));
  EXPECT_EQ(p.delete_pods.size(), pods.size()) << "every one is stale";
}

TEST(Decide, FailFastExitCodeFailsAtOnce) {
  auto job = RunningJob();
  job.spec.failure_policy.fail_fast_exit_codes = {42};
  auto pods = AllPods(1);
  pods[3] = FailedPod(3, 1, 42);
  Plan p = Decide(job, pods, Cm(1, true), kNow);
  EXPECT_EQ(p.status.state, "Failed");
  const api::Condition* failed = p.status.Find("Failed");
  ASSERT_NE(failed, nullptr);
  EXPECT_EQ(failed->reason, "FailFastExitCode");
  EXPECT_NE(failed->message.find("42"), std::string::npos);
  EXPECT_EQ(p.status.restarts, 0);
  EXPECT_EQ(p.delete_pods.size(), 3u) << "the running pods go, the failed one stays for its logs";
  EXPECT_FALSE(p.status.completion_time.empty());
}

TEST(Decide, NoRestartsLeftFailsTheJob) {
  auto job = RunningJob(4, 3);
  auto pods = AllPods(4);
  pods[0] = FailedPod(0, 4, 1);
  Plan p = Decide(job, pods, Cm(4, true), kNow);
  EXPECT_EQ(p.status.state, "Failed");
  EXPECT_EQ(p.status.Find("Failed")->reason, "MaxRestartsExceeded");
  EXPECT_TRUE(HasEvent(p, "MaxRestartsExceeded"));
}

TEST(Decide, ABlockedPodIsShownAtOnceAndCheckedAgainAtTheDeadline) {
  auto job = RunningJob();  // attempt started 30 s before kNow; initTimeoutSeconds 300
  auto pods = AllPods(1);
  pods[3] = BlockedPod(3, 1);
  pods[2] = BlockedPod(2, 1);
  Plan p = Decide(job, pods, Cm(1, true), kNow);
  EXPECT_EQ(p.status.state, "Pending");
  const api::Condition* running = p.status.Find("Running");
  ASSERT_NE(running, nullptr);
  EXPECT_EQ(running->reason, "ErrImagePull");
  EXPECT_EQ(running->message,
            "pod demo-2 cannot start: container trainer: ErrImagePull: not found; the attempt is given up 300s after "
            "it started (initTimeoutSeconds)");
  EXPECT_TRUE(HasEvent(p, "PodStartBlocked"));
  EXPECT_EQ(p.requeue_after, 270s);
  EXPECT_EQ(p.status.restarts, 0);

  job.status = p.status;
  EXPECT_FALSE(HasEvent(Decide(job, pods, Cm(1, true), kNow + 1s), "PodStartBlocked")) << "said once per change";
}

TEST(Decide, ABlockedPodFailsItsAttemptAfterInitTimeoutSeconds) {
  auto job = RunningJob();
  auto pods = AllPods(1);
  pods[1] = BlockedPod(1, 1);
  Plan p = Decide(job, pods, Cm(1, true), kNow + 270s);
  EXPECT_EQ(p.status.state, "Restarting");
  EXPECT_EQ(p.status.restarts, 1);
  EXPECT_NE(p.status.Find("Restarting")->message.find("pod demo-1 cannot start: container trainer: ErrImagePull"),
            std::string::npos);

  job.spec.failure_policy.max_restarts = 0;
  Plan failed = Decide(job, pods, Cm(1, true), kNow + 270s);
  EXPECT_EQ(failed.status.state, "Failed");
  EXPECT_EQ(failed.status.Find("Failed")->reason, "MaxRestartsExceeded");
  EXPECT_NE(failed.status.Find("Failed")->message.find("still after initTimeoutSeconds, 300s"), std::string::npos);
}

}  // namespace
}  // namespace ncclop::policy

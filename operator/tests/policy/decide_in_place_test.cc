// Decide for a job whose pods restart in place (failurePolicy.restartStrategy): which strategy
// new pods get, a failed attempt that keeps its pods, the next attempt that moves them instead of
// making them again, the pods that are made again all the same, and the id held back until every
// moved pod restarted.
#include "policy/decide.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "decide_fixtures.h"
#include "status/write_pace.h"

namespace ncclop::policy {
namespace {

using namespace std::chrono_literals;
using observed::ObservedPod;
using testing::Cm;
using testing::HasEvent;
using testing::kNow;
using testing::RunningJob;

// Pod `index` made to restart in place, serving `attempt`.
ObservedPod InPlacePod(int index, int attempt, int restarts_before = 0) {
  ObservedPod p = testing::Pod(index, attempt);
  p.in_place = true;
  p.restarts_before = restarts_before;
  p.trainer_restarts = restarts_before;
  p.ready = true;
  return p;
}

std::vector<ObservedPod> InPlacePods(int attempt, int restarts_before = 0) {
  std::vector<ObservedPod> pods;
  for (int i = 0; i < 4; ++i) pods.push_back(InPlacePod(i, attempt, restarts_before));
  return pods;
}

// Pod `index` whose trainer failed and whose kubelet restarted it in place.
ObservedPod RestartedPod(int index, int attempt, int restarts_before = 0) {
  ObservedPod p = InPlacePod(index, attempt, restarts_before);
  p.trainer_restarts = restarts_before + 1;
  p.failed = true;
  p.trainer_exit_code = 1;
  p.failure_detail = "trainer exited with code 1; its pod restarts in place";
  p.ready = false;
  return p;
}

api::NcclJob WithStrategy(api::NcclJob job, api::RestartStrategy strategy) {
  job.spec.failure_policy.restart_strategy = strategy;
  return job;
}

// Attempt `attempt` failed (restart 1) and its backoff is over at kNow.
api::NcclJob BackoffOver(int attempt) {
  auto job = RunningJob(attempt, 1);
  job.status.restart_after = "2024-01-01T00:00:00Z";
  job.status.conditions.push_back({"Restarting", "True", "PodFailed", "", "2024-01-01T00:00:00Z", 1});
  return job;
}

TEST(DecideInPlace, NewPodsRestartInPlaceWhenTheStrategyOrTheNodesSaySo) {
  Remembered nodes_can;
  nodes_can.nodes_restart_in_place = true;
  const auto job = testing::Job(4, 2);
  EXPECT_FALSE(Decide(job, {}, {}, kNow).create_in_place) << "Auto, nodes unknown";
  Plan auto_can = Decide(job, {}, {}, kNow, nodes_can);
  EXPECT_TRUE(auto_can.create_in_place);
  EXPECT_EQ(auto_can.status.restart_strategy, "InPlace");
  Plan forced = Decide(WithStrategy(job, api::RestartStrategy::kInPlace), {}, {}, kNow);
  EXPECT_TRUE(forced.create_in_place);
  Plan recreate = Decide(WithStrategy(job, api::RestartStrategy::kRecreate), {}, {}, kNow, nodes_can);
  EXPECT_FALSE(recreate.create_in_place);
  EXPECT_EQ(recreate.status.restart_strategy, "Recreate");
}

TEST(DecideInPlace, AFailureSeenAsARestartInPlaceEndsTheAttemptAndKeepsEveryPod) {
  auto pods = InPlacePods(1);
  pods[2] = RestartedPod(2, 1);
  Plan p = Decide(RunningJob(), pods, Cm(1, true), kNow);
  EXPECT_EQ(p.status.state, "Restarting");
  EXPECT_EQ(p.status.restarts, 1);
  EXPECT_TRUE(p.delete_pods.empty()) << "every pod restarts in place";
  EXPECT_TRUE(HasEvent(p, "Restarting"));
}

TEST(DecideInPlace, TheNextAttemptMovesThePodsInsteadOfMakingThemAgain) {
  auto pods = InPlacePods(1);
  pods[2] = RestartedPod(2, 1);
  Plan p = Decide(BackoffOver(1), pods, Cm(1, true), kNow);
  EXPECT_EQ(p.status.attempt, 2);
  EXPECT_TRUE(p.write_configmap) << "the ConfigMap names attempt 2: the sidecars restart their pods";
  EXPECT_FALSE(p.publish);
  EXPECT_TRUE(p.delete_pods.empty());
  EXPECT_TRUE(p.create_pods.empty());
  ASSERT_EQ(p.move_pods.size(), 4u);
  for (const Plan::PodMove& m : p.move_pods) {
    // The healthy pods restart once more (their sidecar's exit); pod 2 already did.
    EXPECT_EQ(m.restarts_before, 1) << m.name;
  }
  EXPECT_EQ(p.status.restart_strategy, "InPlace");
  auto started = std::find_if(p.events.begin(), p.events.end(), [](const Event& e) { return e.reason == "AttemptStarted"; });
  ASSERT_NE(started, p.events.end());
  EXPECT_NE(started->message.find("restarting 4 pods of attempt 2 in place"), std::string::npos) << started->message;
}

TEST(DecideInPlace, APodThatRestartedTwiceStartsTheAttemptFromItsCount) {
  auto pods = InPlacePods(1, 3);
  pods[0] = RestartedPod(0, 1, 3);
  pods[0].trainer_restarts = 5;
  Plan p = Decide(BackoffOver(1), pods, Cm(1, true), kNow);
  ASSERT_EQ(p.move_pods.size(), 4u);
  EXPECT_EQ(p.move_pods[0].name, "demo-0");
  EXPECT_EQ(p.move_pods[0].restarts_before, 5);
  EXPECT_EQ(p.move_pods[1].restarts_before, 4);
}

TEST(DecideInPlace, APodNotYetRestartedIntoItsAttemptOwesOnlyThatRestart) {
  // Attempt 2 failed before demo-3 made its restart into it (still 1 restart short): moved to 3
  // it still owes one restart, not two.
  auto pods = InPlacePods(2, 1);
  pods[3].trainer_restarts = 0;
  Plan p = Decide(BackoffOver(2), pods, Cm(2, true), kNow);
  ASSERT_EQ(p.move_pods.size(), 4u);
  EXPECT_EQ(p.move_pods[3].name, "demo-3");
  EXPECT_EQ(p.move_pods[3].restarts_before, 1);
  EXPECT_EQ(p.move_pods[0].restarts_before, 2);
}

// A pod that failed before its attempt's id was out may have lost its sidecar before the sidecar
// recorded the attempt it entered; restarted in place it would enter every later attempt one
// restart behind. It is made again; the other pods still restart in place.
TEST(DecideInPlace, APodThatFailedBeforeTheIdIsMadeAgain) {
  auto pods = InPlacePods(1);
  pods[1] = RestartedPod(1, 1);
  Plan failed = Decide(RunningJob(), pods, Cm(1), kNow);
  EXPECT_EQ(failed.status.state, "Restarting");
  EXPECT_EQ(failed.delete_pods, (std::vector<std::string>{"demo-1"}));
  Plan next = Decide(BackoffOver(1), {pods[0], pods[2], pods[3]}, Cm(1), kNow);
  EXPECT_EQ(next.create_pods, (std::vector<int>{1}));
  ASSERT_EQ(next.move_pods.size(), 3u);
  for (const Plan::PodMove& m : next.move_pods) EXPECT_EQ(m.restarts_before, 1) << m.name;
  // Once the id was out, the same failure keeps its pod (every sidecar had recorded the attempt).
  Plan after_id = Decide(RunningJob(), pods, Cm(1, true), kNow);
  EXPECT_TRUE(after_id.delete_pods.empty());
  // The status says the id is out while the cached ConfigMap lags behind the write: kept too.
  auto published = RunningJob();
  published.status.conditions.push_back({"IdPublished", "True", "Published", "", "2024-01-01T00:00:00Z", 1});
  EXPECT_TRUE(Decide(published, pods, Cm(1), kNow).delete_pods.empty());
  // So does this process's memory of its own write (the fast path's, before it wrote status).
  Remembered wrote;
  wrote.id_written_attempt = 1;
  EXPECT_TRUE(Decide(RunningJob(), pods, Cm(1), kNow, wrote).delete_pods.empty());
  // The ConfigMap already names the next attempt: the failed attempt's pods were judged then.
  Plan cm_moved_on = Decide(BackoffOver(1), pods, Cm(2), kNow);
  EXPECT_TRUE(cm_moved_on.delete_pods.empty());
  EXPECT_EQ(cm_moved_on.move_pods.size(), 4u);
  // In a gang, every pod is made again with it.
  Remembered gang;
  gang.gang_scheduled = true;
  EXPECT_EQ(Decide(RunningJob(), pods, Cm(1), kNow, gang).delete_pods.size(), 4u);
}

TEST(DecideInPlace, PodsThatCannotRestartInPlaceAreMadeAgain) {
  auto pods = InPlacePods(1);
  pods[0] = RestartedPod(0, 1);
  pods[1].terminating = true;
  pods[2] = testing::FailedPod(2, 1, 3);  // ended (made before restarts in place)
  pods[3].disruption = observed::Disruption{"Eviction", "evicted"};
  Plan failed = Decide(RunningJob(), pods, Cm(1, true), kNow);
  EXPECT_EQ(failed.delete_pods, (std::vector<std::string>{"demo-2", "demo-3"}));
  Plan next = Decide(BackoffOver(1), {pods[0]}, Cm(1, true), kNow);
  ASSERT_EQ(next.move_pods.size(), 1u);
  EXPECT_EQ(next.move_pods[0].name, "demo-0");
  EXPECT_EQ(next.create_pods, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(next.status.restart_strategy, "Recreate") << "Auto with nodes unknown: the new pods are made to be recreated";
}

TEST(DecideInPlace, AGangMakesEveryPodAgainWhenOneMustBe) {
  Remembered gang;
  gang.gang_scheduled = true;
  auto pods = InPlacePods(1);
  pods[0] = RestartedPod(0, 1);
  pods[3].disruption = observed::Disruption{"Eviction", "evicted"};
  Plan p = Decide(RunningJob(), pods, Cm(1, true), kNow, gang);
  EXPECT_EQ(p.delete_pods.size(), 4u) << "a lone new pod could not be admitted by the gang";
  Plan all_kept = Decide(RunningJob(), {RestartedPod(0, 1), InPlacePod(1, 1), InPlacePod(2, 1), InPlacePod(3, 1)},
                         Cm(1, true), kNow, gang);
  EXPECT_TRUE(all_kept.delete_pods.empty());
}

TEST(DecideInPlace, TheIdWaitsUntilEveryMovedPodRestarted) {
  auto pods = InPlacePods(2, 1);
  pods[0].unique_id = "aWQ=";
  pods[0].unique_id_attempt = 2;
  pods[3].trainer_restarts = 0;  // moved, its sidecar has not restarted it yet
  auto job = RunningJob(2, 1);
  Plan waiting = Decide(job, pods, Cm(2), kNow);
  EXPECT_FALSE(waiting.publish);
  EXPECT_FALSE(waiting.status.Finished());
  EXPECT_EQ(waiting.status.restarts, 1) << "not yet restarted is no failure";
  pods[3].trainer_restarts = 1;
  Plan published = Decide(job, pods, Cm(2), kNow);
  ASSERT_TRUE(published.publish);
}

// Attempt 2's pods were moved while demo-2's trainer of attempt 1 was exiting 0: demo-2 ended
// (Succeeded) and never restarts into attempt 2. Its exit is no success of attempt 2; it goes and
// is made again for attempt 2 (the id waits for it), and in a gang every pod of the attempt is.
ObservedPod EndedBeforeItsAttempt(int index) {
  ObservedPod p = InPlacePod(index, 2, 1);
  p.trainer_restarts = 0;
  p.phase = "Succeeded";
  p.ready = false;
  p.ended_before_its_attempt = true;
  return p;
}

TEST(DecideInPlace, APodMovedAsItsTrainerExitedZeroIsMadeAgainForTheAttempt) {
  std::vector<ObservedPod> pods = InPlacePods(2, 1);
  pods[0].unique_id = "aWQ=";
  pods[0].unique_id_attempt = 2;
  pods[2] = EndedBeforeItsAttempt(2);
  auto job = RunningJob(2, 1);
  Plan p = Decide(job, pods, Cm(2), kNow);
  EXPECT_EQ(p.delete_pods, (std::vector<std::string>{"demo-2"}));
  EXPECT_TRUE(p.move_pods.empty()) << "it is not moved again";
  EXPECT_TRUE(p.create_pods.empty()) << "its name is still held";
  EXPECT_FALSE(p.publish);
  EXPECT_FALSE(p.status.Finished());
  EXPECT_EQ(p.status.restarts, 1) << "no failure";

  pods.erase(pods.begin() + 2);  // gone
  Plan remade = Decide(job, pods, Cm(2), kNow);
  EXPECT_EQ(remade.create_pods, (std::vector<int>{2}));
  EXPECT_FALSE(remade.publish);

  Remembered gang;
  gang.gang_scheduled = true;
  std::vector<ObservedPod> gang_pods = InPlacePods(2, 1);
  gang_pods[2] = EndedBeforeItsAttempt(2);
  Plan all = Decide(job, gang_pods, Cm(2), kNow, gang);
  EXPECT_EQ(all.delete_pods.size(), 4u) << "a lone new pod could not be admitted by the gang";
  EXPECT_EQ(all.status.restarts, 1);
}

TEST(DecideInPlace, ASucceededJobLeavesItsPodsForTheirLogsWhileTheirPhaseCatchesUp) {
  auto pods = InPlacePods(1);
  for (ObservedPod& p : pods) p.trainer_succeeded = true;  // exited 0; the pod still says Running
  Plan p = Decide(RunningJob(), pods, Cm(1, true), kNow);
  EXPECT_EQ(p.status.state, "Succeeded");
  EXPECT_TRUE(p.delete_pods.empty());
}

TEST(DecideInPlace, AFailedJobDeletesPodsThatRestartedInPlace) {
  auto pods = InPlacePods(1);
  pods[1] = RestartedPod(1, 1);
  auto job = RunningJob(1, 0);
  job.spec.failure_policy.max_restarts = 0;
  Plan p = Decide(job, pods, Cm(1, true), kNow);
  EXPECT_EQ(p.status.state, "Failed");
  EXPECT_EQ(p.delete_pods.size(), 4u) << "a pod restarted in place runs again: it is not left for its logs";
}

// Attempt 2's pods moved in place, each then restarted by its kubelet, whose status writes are
// five per pod (bench/scale/kubelet_inplace.py): the sidecar's exit (not ready), every container
// removed with the trainer's restartCount + 1 (Pending), the sidecar running, the trainer running
// (Running), Ready. Each write is a reconcile; the statuses Decide gives along the way differ in
// the counts alone (status/write_pace.h paces those), until every pod runs attempt 2.
TEST(DecideInPlace, TheKubeletsWritesOfARestartInPlaceChangeTheCountsAloneUntilEveryPodRuns) {
  auto job = BackoffOver(1);
  std::vector<ObservedPod> pods = InPlacePods(1);
  Plan moved = Decide(job, pods, Cm(1, true), kNow);
  ASSERT_EQ(moved.move_pods.size(), 4u);
  job.status = moved.status;
  for (ObservedPod& p : pods) {
    p.attempt = 2;
    p.restarts_before = 1;
  }
  std::vector<std::string> states;
  int changes = 0;
  auto look = [&](const std::string& step) {
    Plan p = Decide(job, pods, Cm(2), kNow);
    if (p.status == job.status) return;
    ++changes;
    const bool state_changed = p.status.state != job.status.state;
    if (state_changed) states.push_back(p.status.state);
    EXPECT_EQ(status::OnlyCountsDiffer(job.status, p.status), !state_changed) << step;
    job.status = p.status;
  };
  look("moved");
  for (ObservedPod& p : pods) {
    p.ready = false;
    look(p.name + ": its sidecar exited");
    p.phase = "Pending";
    p.trainer_restarts = 1;
    look(p.name + ": its containers removed");
    look(p.name + ": its sidecar running");
    p.phase = "Running";
    look(p.name + ": its trainer running");
    p.ready = true;
    look(p.name + ": ready");
  }
  EXPECT_EQ(states, (std::vector<std::string>{"Running"})) << "the state goes from Pending to Running once";
  EXPECT_EQ(job.status.ready, 4);
  EXPECT_GE(changes, 8) << "two changes per pod, each a status write without pacing";
}

}  // namespace
}  // namespace ncclop::policy

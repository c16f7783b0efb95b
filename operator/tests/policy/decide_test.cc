// Decide over a job's life: created, running, succeeded, suspended, failed by its deadline, its
// spec or a refused pod, deleted after its TTL. Beside it: decide_restart_test.cc (failed
// attempts), decide_publish_test.cc (the id), decide_disruption_test.cc, decide_queued_test.cc (Kueue).
#include "policy/decide.h"

#include <gtest/gtest.h>

#include "decide_fixtures.h"
#include "desired/pod_shape.h"
#include "policy/pod_refusal.h"

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

TEST(Decide, NewJobRecordsAttemptOneAndCreatesEverything) {
  Plan p = Decide(testing::Job(4, 2), {}, {}, kNow);
  EXPECT_EQ(p.status.attempt, 1);
  EXPECT_EQ(p.status.state, "Pending");
  EXPECT_EQ(p.status.start_time, "2024-01-01T00:00:00Z");
  EXPECT_TRUE(p.status.IsTrue("Created"));
  EXPECT_TRUE(p.ensure_children);
  EXPECT_TRUE(p.write_configmap);
  EXPECT_FALSE(p.publish);
  EXPECT_EQ(p.create_pods, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_TRUE(HasEvent(p, "Created"));
  EXPECT_TRUE(p.attempt_started);
}

// desired/pod_shape.h: the shape is written with the first status and kept; a job an older
// operator started is recorded in that one's shape, so an upgrade never changes its pods.
TEST(Decide, RecordsThePodShapeAtTheFirstLookAndKeepsIt) {
  EXPECT_EQ(Decide(testing::Job(4, 2), {}, {}, kNow).status.pod_shape, desired::kPodShape);
  api::NcclJob older = RunningJob();
  older.status.pod_shape = 0;  // written by an operator before status.podShape
  EXPECT_EQ(Decide(older, AllPods(1), Cm(1), kNow).status.pod_shape, 1);
  api::NcclJob recorded = RunningJob();
  recorded.status.pod_shape = 2;
  EXPECT_EQ(Decide(recorded, AllPods(1), Cm(1), kNow).status.pod_shape, 2);
  api::NcclJob finished = RunningJob();
  finished.status.pod_shape = 0;
  finished.status.conditions.push_back({"Succeeded", "True", "AllTrainersSucceeded", "", "2024-01-01T00:00:00Z", 1});
  EXPECT_EQ(Decide(finished, {}, Cm(1), kNow).status.pod_shape, 0) << "a finished job is not written for it";
}

TEST(Decide, WarnsOnceWhenTheTrainerAnnotationIsOnTheJobInsteadOfTheTemplate) {
  auto job = testing::Job(4, 2);
  job.misplaced_trainer_annotation = "worker";
  Plan p = Decide(job, {}, {}, kNow);
  ASSERT_TRUE(HasEvent(p, "AnnotationIgnored"));
  auto running = RunningJob();
  running.misplaced_trainer_annotation = "worker";
  Plan later = Decide(running, AllPods(1), Cm(1), kNow);
  EXPECT_FALSE(HasEvent(later, "AnnotationIgnored")) << "said once, when the job starts";
  EXPECT_FALSE(HasEvent(Decide(testing::Job(4, 2), {}, {}, kNow), "AnnotationIgnored"));
}

TEST(Decide, CreatesOnlyMissingPods) {
  std::vector<ObservedPod> pods = {Pod(0, 1), Pod(2, 1)};
  Plan p = Decide(RunningJob(), pods, Cm(1), kNow);
  EXPECT_EQ(p.create_pods, (std::vector<int>{1, 3}));
  EXPECT_FALSE(p.write_configmap);
  EXPECT_TRUE(p.events.empty());
}

TEST(Decide, RunningWhenAllPodsRun) {
  Plan p = Decide(RunningJob(), AllPods(1), Cm(1), kNow);
  EXPECT_EQ(p.status.state, "Running");
  EXPECT_TRUE(p.status.IsTrue("Running"));
  EXPECT_TRUE(p.create_pods.empty());
  EXPECT_EQ(p.status.active, 4);
}

TEST(Decide, SucceedsWhenEveryTrainerExitedZero) {
  auto job = RunningJob();
  Plan partial = Decide(job, {Pod(0, 1, "Succeeded"), Pod(1, 1), Pod(2, 1), Pod(3, 1)}, Cm(1, true), kNow);
  EXPECT_FALSE(partial.status.Finished());
  Plan p = Decide(job, AllPods(1, "Succeeded"), Cm(1, true), kNow);
  EXPECT_EQ(p.status.state, "Succeeded");
  EXPECT_TRUE(p.status.IsTrue("Succeeded"));
  EXPECT_EQ(p.status.succeeded, 4);
  EXPECT_TRUE(p.delete_pods.empty());
  EXPECT_TRUE(HasEvent(p, "Succeeded"));
}

TEST(Decide, SuspendDeletesPodsAndResumeStartsANewAttempt) {
  auto job = RunningJob(2, 1);
  job.spec.suspend = true;
  Plan s = Decide(job, AllPods(2), Cm(2, true), kNow);
  EXPECT_EQ(s.status.state, "Suspended");
  EXPECT_TRUE(s.status.IsTrue("Suspended"));
  EXPECT_EQ(s.delete_pods.size(), 4u);
  EXPECT_TRUE(s.create_pods.empty());

  job.status = s.status;
  job.spec.suspend = false;
  Plan r = Decide(job, {}, Cm(2, true), kNow + 60s);
  EXPECT_EQ(r.status.attempt, 3);
  EXPECT_EQ(r.status.restarts, 1) << "resuming is not a restart";
  EXPECT_FALSE(r.status.IsTrue("Suspended"));
  EXPECT_EQ(r.create_pods.size(), 4u);
  EXPECT_TRUE(HasEvent(r, "Resumed"));
}

TEST(Decide, AJobCreatedSuspendedSaysNoPodsWereMade) {
  auto job = testing::Job(2, 1);
  job.spec.suspend = true;
  Plan s = Decide(job, {}, {}, kNow);
  EXPECT_EQ(s.status.state, "Suspended");
  ASSERT_FALSE(s.events.empty());
  EXPECT_EQ(s.events.front().message.find("attempt 0"), std::string::npos) << s.events.front().message;
  EXPECT_NE(s.status.Find("Suspended")->message.find("no pods"), std::string::npos);
}

TEST(Decide, InvalidSpecBecomesAFailedCondition) {
  auto job = testing::Job();
  job.spec_error = "spec.replicas must be between 1 and 4096, got 0";
  Plan p = Decide(job, {}, {}, kNow);
  EXPECT_EQ(p.status.Find("Failed")->reason, "InvalidSpec");
  EXPECT_TRUE(p.create_pods.empty());
  EXPECT_FALSE(p.ensure_children);
}

TEST(Decide, APodTemplateTheApiServerRefusedFailsTheJobAndItsRunningPods) {
  auto job = RunningJob();
  const std::string refusal = "the API server refused pod train-1: Pod \"train-1\" is invalid: spec.volumes: Not found";
  Plan p = Decide(job, {Pod(0, 1)}, Cm(1), kNow, {.pod_create_verdict = TemplateRejected(refusal)});
  EXPECT_EQ(p.status.state, "Failed");
  const api::Condition* failed = p.status.Find("Failed");
  ASSERT_NE(failed, nullptr);
  EXPECT_EQ(failed->reason, "PodTemplateRejected");
  EXPECT_NE(failed->message.find("spec.volumes: Not found"), std::string::npos) << failed->message;
  EXPECT_NE(failed->message.find("fix spec.template"), std::string::npos) << failed->message;
  EXPECT_TRUE(p.create_pods.empty());
  ASSERT_EQ(p.delete_pods.size(), 1u);  // the pod that did get created goes
  ASSERT_FALSE(p.events.empty());
  EXPECT_EQ(p.events.front().reason, "PodTemplateRejected");

  Plan without = Decide(job, {Pod(0, 1)}, Cm(1), kNow);
  EXPECT_NE(without.status.state, "Failed");
}

TEST(Decide, PodCreatesForbiddenTooLongFailTheJobWithTheApiServersMessage) {
  const std::string refusal = "the API server refused pod demo-0: pods \"demo-0\" is forbidden: violates PodSecurity";
  Plan p = Decide(RunningJob(), {}, Cm(1), kNow, {.pod_create_verdict = ForbiddenTooLong(refusal, 300)});
  EXPECT_EQ(p.status.state, "Failed");
  const api::Condition* failed = p.status.Find("Failed");
  ASSERT_NE(failed, nullptr);
  EXPECT_EQ(failed->reason, "PodCreateForbidden");
  EXPECT_NE(failed->message.find("violates PodSecurity"), std::string::npos) << failed->message;
  EXPECT_NE(failed->message.find("300s"), std::string::npos) << failed->message;
  EXPECT_TRUE(p.create_pods.empty());
}

TEST(Decide, ActiveDeadlineFailsTheJobAndItsPodsAndWakesAtTheDeadline) {
  auto job = RunningJob();  // started 60 s before kNow
  job.spec.active_deadline_seconds = 100;
  Plan early = Decide(job, AllPods(1), Cm(1), kNow);
  EXPECT_NE(early.status.state, "Failed");
  ASSERT_TRUE(early.requeue_after);
  EXPECT_EQ(*early.requeue_after, 41s) << "the deadline is 40 s away; looked at again just after it";
  Plan due = Decide(job, AllPods(1), Cm(1), kNow + 40s);
  EXPECT_EQ(due.status.state, "Failed");
  EXPECT_EQ(due.status.Find("Failed")->reason, "DeadlineExceeded");
  EXPECT_NE(due.status.Find("Failed")->message.find("activeDeadlineSeconds (100s"), std::string::npos);
  EXPECT_EQ(due.delete_pods.size(), 4u);
  EXPECT_TRUE(due.create_pods.empty());
  EXPECT_TRUE(HasEvent(due, "DeadlineExceeded"));
}

TEST(Decide, ActiveDeadlineCountsBackoffsAndStopsWhileSuspended) {
  auto restarting = RunningJob(1, 1);
  restarting.spec.active_deadline_seconds = 30;
  restarting.status.restart_after = "2024-01-01T00:05:00Z";
  restarting.status.conditions.push_back({"Restarting", "True", "PodFailed", "", "2024-01-01T00:00:00Z", 1});
  EXPECT_EQ(Decide(restarting, {}, Cm(1), kNow).status.state, "Failed") << "a backoff does not stop the clock";

  auto suspended = RunningJob();
  suspended.spec.active_deadline_seconds = 30;
  suspended.spec.suspend = true;
  EXPECT_NE(Decide(suspended, {}, Cm(1), kNow).status.state, "Failed");
  suspended.spec.suspend = false;
  suspended.status.conditions.push_back({"Suspended", "True", "Suspended", "", "2023-12-31T23:59:00Z", 1});
  Plan resumed = Decide(suspended, {}, Cm(1), kNow);
  EXPECT_NE(resumed.status.state, "Failed") << "the clock restarts when the job resumes";
  EXPECT_EQ(resumed.status.start_time, "2024-01-01T00:00:00Z");
}

TEST(Decide, TtlDeletesTheFinishedJobWhenDue) {
  auto job = RunningJob();
  job.spec.ttl_seconds_after_finished = 30;
  job.status.completion_time = "2024-01-01T00:00:00Z";
  job.status.conditions.push_back({"Succeeded", "True", "", "", "2024-01-01T00:00:00Z", 1});
  Plan early = Decide(job, {}, Cm(1, true), kNow + 10s);
  EXPECT_FALSE(early.delete_job);
  EXPECT_EQ(early.requeue_after, 20s);
  Plan due = Decide(job, {}, Cm(1, true), kNow + 30s);
  EXPECT_TRUE(due.delete_job);
}

TEST(Decide, ADeletedJobIsLeftToTheGarbageCollector) {
  auto job = RunningJob();
  job.being_deleted = true;
  Plan p = Decide(job, {FailedPod(0, 1, 1)}, Cm(1), kNow);
  EXPECT_TRUE(p.delete_pods.empty());
  EXPECT_TRUE(p.create_pods.empty());
  EXPECT_TRUE(p.events.empty());
  EXPECT_FALSE(p.ensure_children);
}

TEST(Decide, IsStableWhenNothingChanged) {
  auto pods = AllPods(1);
  Plan first = Decide(RunningJob(), pods, Cm(1), kNow);
  auto job = RunningJob();
  job.status = first.status;
  Plan second = Decide(job, pods, Cm(1), kNow + 5s);
  EXPECT_EQ(second.status, first.status) << "a no-op reconcile must not rewrite status";
  EXPECT_TRUE(second.events.empty());
}

}  // namespace
}  // namespace ncclop::policy

// Decide for a job in a Kueue queue: pods only while its Workload is admitted; the Workload is
// deactivated on suspend, its quota released after an eviction, marked Finished at the end, and
// its PodsReady condition follows the attempt's pods.
#include "policy/decide.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "decide_fixtures.h"
#include "test_workloads.h"

namespace ncclop::policy {
namespace {

using namespace std::chrono_literals;
using Json = nlohmann::json;
using observed::ObservedConfigMap;
using observed::ObservedPod;
using observed::ObservedKueueWorkload;
using observed::ObserveKueueWorkload;
using testing::Admitted;
using testing::HasEvent;
using testing::kEvictedWorkload;
using testing::kNow;
using testing::Pending;
using testing::Pod;
using testing::QueuedJob;
using testing::WithPodsReady;

// A queued job admitted and Running its attempt 1, and that attempt's 4 pods (not ready).
api::NcclJob RunningAdmittedJob() {
  auto job = QueuedJob();
  job.status.attempt = 1;
  job.status.state = "Running";
  job.status.conditions.push_back({"Admitted", "True", "Admitted", "", "2024-01-01T00:00:00Z", 1});
  return job;
}

std::vector<ObservedPod> PodsOfAttemptOne() {
  std::vector<ObservedPod> pods;
  for (int i = 0; i < 4; ++i) pods.push_back(Pod(i, 1));
  return pods;
}

TEST(Decide, AQueuedJobWaitsForAdmissionWithoutPods) {
  Plan p = Decide(QueuedJob(), {}, {}, kNow, {}, ObservedKueueWorkload{});
  EXPECT_TRUE(p.ensure_kueue_workload);
  EXPECT_TRUE(p.create_pods.empty());
  EXPECT_EQ(p.status.attempt, 0) << "attempt 1 starts when Kueue admits the job";
  EXPECT_EQ(p.status.state, "Pending");
  const api::Condition* admitted = p.status.Find("Admitted");
  ASSERT_NE(admitted, nullptr);
  EXPECT_EQ(admitted->status, "False");
  EXPECT_EQ(admitted->reason, "WaitingForAdmission");
  EXPECT_EQ(admitted->message, "waiting for admission in queue team-a");
  EXPECT_EQ(p.status.Find("Running")->message, "waiting for admission in queue team-a");
  EXPECT_TRUE(HasEvent(p, "WaitingForAdmission"));

  auto job = QueuedJob();
  job.status = p.status;
  Plan again = Decide(job, {}, {}, kNow + 1s, {}, Pending());
  EXPECT_FALSE(HasEvent(again, "WaitingForAdmission")) << "said once, not per reconcile";
  EXPECT_NE(again.status.Find("Admitted")->message.find("insufficient unused quota"), std::string::npos);
}

TEST(Decide, AdmissionStartsAttemptOneWithAllPods) {
  auto job = QueuedJob();
  job.status = Decide(job, {}, {}, kNow, {}, Pending()).status;
  Plan p = Decide(job, {}, {}, kNow + 5s, {}, Admitted());
  EXPECT_EQ(p.status.attempt, 1);
  EXPECT_EQ(p.create_pods, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_TRUE(p.status.IsTrue("Admitted"));
  EXPECT_EQ(p.status.Find("Admitted")->message, "admitted in queue team-a by ClusterQueue gpus");
  EXPECT_TRUE(HasEvent(p, "Admitted"));
}

TEST(Decide, ARestartKeepsTheAdmission) {
  auto job = QueuedJob();
  job.status.attempt = 1;
  job.status.conditions.push_back({"Admitted", "True", "Admitted", "", "2024-01-01T00:00:00Z", 1});
  std::vector<ObservedPod> pods;
  for (int i = 0; i < 4; ++i) pods.push_back(Pod(i, 1));
  pods[1] = testing::FailedPod(1, 1, 1);
  Plan p = Decide(job, pods, {true, 1, true, "", "uid-1"}, kNow, {}, Admitted());
  EXPECT_EQ(p.status.restarts, 1);
  EXPECT_FALSE(p.finish_kueue_workload) << "the Workload, and its quota, stays with the job across attempts";
}

TEST(Decide, AMissingPriorityClassIsInTheAdmittedConditionAndAWarningUntilItExists) {
  const std::string missing =
      "WorkloadPriorityClass urgent (the job's label kueue.x-k8s.io/priority-class) does not exist: no Workload, so no "
      "place in queue team-a, until it does";
  Remembered remembered;
  remembered.priority_class_missing = missing;
  Plan p = Decide(QueuedJob(), {}, {}, kNow, remembered);
  EXPECT_TRUE(p.ensure_kueue_workload) << "tried again";
  EXPECT_TRUE(p.create_pods.empty());
  EXPECT_EQ(p.status.state, "Pending");
  const api::Condition* admitted = p.status.Find("Admitted");
  ASSERT_NE(admitted, nullptr);
  EXPECT_EQ(admitted->status, "False");
  EXPECT_EQ(admitted->reason, "PriorityClassNotFound");
  EXPECT_EQ(admitted->message, missing);
  EXPECT_EQ(p.status.Find("Running")->reason, "PriorityClassNotFound");
  ASSERT_TRUE(HasEvent(p, "PriorityClassNotFound"));
  for (const Event& e : p.events) {
    if (e.reason == "PriorityClassNotFound") {
      EXPECT_EQ(e.type, "Warning");
      EXPECT_EQ(e.message, missing);
    }
  }
  EXPECT_FALSE(HasEvent(p, "WaitingForAdmission"));

  auto job = QueuedJob();
  job.status = p.status;
  EXPECT_FALSE(HasEvent(Decide(job, {}, {}, kNow + 1s, remembered), "PriorityClassNotFound")) << "said once, not per reconcile";
  Remembered other = remembered;
  other.priority_class_missing = "PriorityClass gold (the template's priorityClassName) does not exist: ...";
  Plan changed = Decide(job, {}, {}, kNow + 1s, other);
  EXPECT_TRUE(HasEvent(changed, "PriorityClassNotFound")) << "another missing class is said again";
  EXPECT_EQ(changed.status.Find("Admitted")->message, other.priority_class_missing);

  // The class appeared and the Workload was made: the condition says the job waits in its queue.
  Plan made = Decide(job, {}, {}, kNow + 2s, {}, Pending());
  EXPECT_EQ(made.status.Find("Admitted")->reason, "WaitingForAdmission");
  EXPECT_EQ(made.status.Find("Running")->reason, "WaitingForAdmission");
  EXPECT_TRUE(HasEvent(made, "WaitingForAdmission"));
}

TEST(Decide, LosingTheAdmissionEndsTheAttemptAsADisruption) {
  auto job = RunningAdmittedJob();
  std::vector<ObservedPod> pods = PodsOfAttemptOne();
  ObservedKueueWorkload evicted = Admitted();
  evicted.admitted = false;
  evicted.eviction = "Preempted: by a job of higher priority";
  Plan p = Decide(job, pods, {true, 1, true, "", "uid-1"}, kNow, {}, evicted);
  EXPECT_EQ(p.status.disruptions, 1);
  EXPECT_EQ(p.status.restarts, 0);
  EXPECT_EQ(p.delete_pods.size(), 4u);
  EXPECT_EQ(p.status.Find("Restarting")->reason, "PodDisrupted");
  EXPECT_EQ(p.status.Find("Admitted")->reason, "WaitingForAdmission");
  EXPECT_TRUE(p.create_pods.empty());
}

TEST(Decide, AnEvictedJobReleasesTheQuotaOnceItsPodsAreGone) {
  auto job = RunningAdmittedJob();
  std::vector<ObservedPod> pods = PodsOfAttemptOne();
  const ObservedKueueWorkload evicted = ObserveKueueWorkload(Json::parse(kEvictedWorkload));
  Plan stop = Decide(job, pods, {true, 1, true, "", "uid-1"}, kNow, {}, evicted);
  EXPECT_EQ(stop.delete_pods.size(), 4u);
  EXPECT_FALSE(stop.release_kueue_quota) << "pods still exist";
  job.status = stop.status;
  for (ObservedPod& p : pods) p.terminating = true;
  EXPECT_FALSE(Decide(job, pods, {true, 1, true, "", "uid-1"}, kNow + 1s, {}, evicted).release_kueue_quota)
      << "terminating pods still hold their resources";
  Plan gone = Decide(job, {}, {true, 1, true, "", "uid-1"}, kNow + 2s, {}, evicted);
  EXPECT_TRUE(gone.release_kueue_quota);
  EXPECT_EQ(gone.status.disruptions, 1) << "counted once";
  EXPECT_TRUE(gone.create_pods.empty());
  EXPECT_EQ(gone.status.Find("Admitted")->reason, "WaitingForAdmission");
}

TEST(Decide, AFinishedJobMarksItsWorkloadFinished) {
  auto job = QueuedJob();
  job.status.attempt = 1;
  job.status.conditions.push_back({"Succeeded", "True", "AllTrainersSucceeded", "every trainer exited 0", "2024-01-01T00:00:00Z", 1});
  Plan p = Decide(job, {}, {}, kNow, {}, Admitted());
  ASSERT_TRUE(p.finish_kueue_workload);
  EXPECT_EQ(p.finish_kueue_workload->reason, "Succeeded");
  ObservedKueueWorkload done = Admitted();
  done.finished = true;
  EXPECT_FALSE(Decide(job, {}, {}, kNow, {}, done).finish_kueue_workload);
}

TEST(Decide, AJobWithoutAQueueIgnoresKueue) {
  Plan p = Decide(testing::Job(4, 2), {}, {}, kNow, {}, ObservedKueueWorkload{});
  EXPECT_FALSE(p.ensure_kueue_workload);
  EXPECT_EQ(p.create_pods.size(), 4u);
  EXPECT_EQ(p.status.Find("Admitted"), nullptr);
}

TEST(Decide, SuspendingAnAdmittedJobDeletesItsPodsAndDeactivatesItsWorkload) {
  auto job = QueuedJob();
  job.spec.suspend = true;
  job.status.attempt = 1;
  job.status.state = "Running";
  job.status.conditions.push_back({"Admitted", "True", "Admitted", "", "2024-01-01T00:00:00Z", 1});
  std::vector<ObservedPod> pods;
  for (int i = 0; i < 4; ++i) pods.push_back(Pod(i, 1));
  Plan p = Decide(job, pods, {true, 1, true, "", "uid-1"}, kNow, {}, Admitted());
  EXPECT_EQ(p.delete_pods.size(), 4u);
  EXPECT_EQ(p.set_kueue_workload_active, false);
  EXPECT_EQ(p.status.Find("Admitted")->status, "False");
  EXPECT_EQ(p.status.Find("Admitted")->message, "spec.suspend is true: the admission is given back to queue team-a");
  EXPECT_EQ(p.status.disruptions, 0) << "a suspension is the user's, no disruption";

  // Kueue evicts it (Deactivated); once the pods are gone its quota is released.
  job.status = p.status;
  Json evicted_json = Json::parse(kEvictedWorkload);
  evicted_json["spec"] = {{"active", false}};
  evicted_json["metadata"]["annotations"] = {{"nccl.dev/suspended", "true"}};
  const ObservedKueueWorkload evicted = ObserveKueueWorkload(evicted_json);
  Plan gone = Decide(job, {}, {true, 1, true, "", "uid-1"}, kNow + 1s, {}, evicted);
  EXPECT_TRUE(gone.release_kueue_quota);
  EXPECT_FALSE(gone.set_kueue_workload_active) << "deactivated already";

  // Resumed: the Workload is activated again and the job waits for admission, without pods.
  job.status = gone.status;
  job.spec.suspend = false;
  ObservedKueueWorkload released = evicted;
  released.evicted = released.quota_reserved = false;
  Plan resumed = Decide(job, {}, {true, 1, true, "", "uid-1"}, kNow + 2s, {}, released);
  EXPECT_EQ(resumed.set_kueue_workload_active, true);
  EXPECT_TRUE(resumed.create_pods.empty());
  EXPECT_EQ(resumed.status.Find("Admitted")->reason, "WaitingForAdmission");
  job.status = resumed.status;
  Plan admitted = Decide(job, {}, {true, 1, true, "", "uid-1"}, kNow + 3s, {}, Admitted());
  EXPECT_EQ(admitted.status.attempt, 2);
  EXPECT_EQ(admitted.create_pods.size(), 4u);
  EXPECT_EQ(admitted.status.restarts, 0);
  EXPECT_EQ(admitted.status.disruptions, 0);
}

TEST(Decide, TheWorkloadIsPodsReadyOnceEveryPodOfTheAttemptIsReady) {
  auto job = RunningAdmittedJob();
  std::vector<ObservedPod> pods = PodsOfAttemptOne();
  for (int i = 0; i < 3; ++i) pods[i].ready = true;
  const ObservedConfigMap cm{true, 1, true, "", "uid-1"};
  Plan waiting = Decide(job, pods, cm, kNow, {}, Admitted());
  ASSERT_TRUE(waiting.set_kueue_pods_ready);
  EXPECT_EQ(waiting.set_kueue_pods_ready->reason, "WaitForStart");
  pods[3].ready = true;
  Plan ready = Decide(job, pods, cm, kNow, {}, WithPodsReady(Admitted(), "False", "WaitForStart"));
  ASSERT_TRUE(ready.set_kueue_pods_ready);
  EXPECT_TRUE(ready.set_kueue_pods_ready->ready);
  // Pods of another attempt never count.
  std::vector<ObservedPod> old = pods;
  for (ObservedPod& p : old) p.attempt = 0;
  EXPECT_EQ(Decide(job, old, cm, kNow, {}, Admitted()).set_kueue_pods_ready->reason, "WaitForStart");
  // A rank fails: the attempt restarts, its pods are deleted, the Workload waits for recovery.
  pods[1] = testing::FailedPod(1, 1, 1);
  Plan failed = Decide(job, pods, cm, kNow, {}, WithPodsReady(Admitted(), "True", "Started"));
  EXPECT_EQ(failed.status.restarts, 1);
  ASSERT_TRUE(failed.set_kueue_pods_ready);
  EXPECT_FALSE(failed.set_kueue_pods_ready->ready);
  EXPECT_EQ(failed.set_kueue_pods_ready->reason, "WaitForRecovery");
  EXPECT_FALSE(Decide(testing::Job(), pods, cm, kNow, {}, Admitted()).set_kueue_pods_ready) << "no queue: no Kueue";
}

}  // namespace
}  // namespace ncclop::policy

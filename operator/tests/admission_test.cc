// Kueue: a job labelled with a queue runs pods only while its Workload is admitted.
#include <gtest/gtest.h>

#include <algorithm>

#include "desired/kueue_workload.h"
#include "policy/admission.h"
#include "policy/decide.h"
#include "test_jobs.h"

namespace ncclop::policy {
namespace {

using namespace std::chrono_literals;
using Json = nlohmann::json;
using observed::ObservedConfigMap;
using observed::ObservedPod;
using observed::ObservedKueueWorkload;
using observed::ObserveKueueWorkload;
using testing::Pod;

const api::Time kNow = *api::ParseTime("2024-01-01T00:00:00Z");

api::NcclJob QueuedJob() {
  auto job = testing::Job(4, 2);
  job.queue_name = "team-a";
  return job;
}

ObservedKueueWorkload Admitted() {
  return ObserveKueueWorkload(Json::parse(R"({"metadata":{"name":"nccljob-demo"},"status":{
      "admission":{"clusterQueue":"gpus","podSetAssignments":[{"name":"trainers","count":4}]},
      "conditions":[{"type":"QuotaReserved","status":"True"},{"type":"Admitted","status":"True"}]}})"));
}

ObservedKueueWorkload Pending() {
  return ObserveKueueWorkload(Json::parse(R"({"metadata":{"name":"nccljob-demo"},"status":{"conditions":[
      {"type":"QuotaReserved","status":"False","reason":"Pending",
       "message":"couldn't assign flavors to pod set trainers: insufficient unused quota for cpu in flavor default"}]}})"));
}

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

bool HasEvent(const Plan& p, const std::string& reason) {
  return std::any_of(p.events.begin(), p.events.end(), [&](const Event& e) { return e.reason == reason; });
}

TEST(ParseNcclJob, ReadsTheQueueLabel) {
  Json object = testing::JobJson();
  object["metadata"]["labels"] = {{"kueue.x-k8s.io/queue-name", "team-a"}};
  EXPECT_EQ(api::ParseNcclJob(object)->queue_name, "team-a");
  EXPECT_EQ(testing::Job().queue_name, "");
}

TEST(ObserveKueueWorkload, AdmittedPendingEvictedFinished) {
  EXPECT_FALSE(ObserveKueueWorkload(Json()).exists);
  ObservedKueueWorkload admitted = Admitted();
  EXPECT_TRUE(admitted.exists);
  EXPECT_TRUE(admitted.admitted);
  EXPECT_EQ(admitted.cluster_queue, "gpus");
  ObservedKueueWorkload pending = Pending();
  EXPECT_FALSE(pending.admitted);
  EXPECT_NE(pending.waiting.find("insufficient unused quota"), std::string::npos);
  ObservedKueueWorkload evicted = ObserveKueueWorkload(Json::parse(R"({"status":{"conditions":[
      {"type":"Admitted","status":"True"},{"type":"Evicted","status":"True","reason":"Preempted","message":"by a job of higher priority"}]}})"));
  EXPECT_FALSE(evicted.admitted) << "an evicted Workload must stop its pods";
  EXPECT_EQ(evicted.eviction, "Preempted: by a job of higher priority");
  EXPECT_TRUE(ObserveKueueWorkload(Json::parse(R"({"status":{"conditions":[{"type":"Finished","status":"True"}]}})")).finished);
}

TEST(KueueWorkload, OnePodSetOfAllReplicasShapedLikeThePods) {
  api::NcclJob job = QueuedJob();
  Json wl = desired::KueueWorkload(job, {});
  EXPECT_EQ(wl["apiVersion"], "kueue.x-k8s.io/v1beta2");
  EXPECT_EQ(wl["metadata"]["name"], "nccljob-demo");
  EXPECT_EQ(wl["metadata"]["ownerReferences"][0]["uid"], "uid-1");
  EXPECT_EQ(wl["spec"]["queueName"], "team-a");
  ASSERT_EQ(wl["spec"]["podSets"].size(), 1u);
  const Json& ps = wl["spec"]["podSets"][0];
  EXPECT_EQ(ps["count"], 4);
  EXPECT_EQ(ps["template"]["spec"]["initContainers"][0]["name"], "nccl-sidecar") << "the sidecar's requests count";
  EXPECT_EQ(ps["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"], "2");
  EXPECT_FALSE(ps["template"]["metadata"]["labels"].contains("nccl.dev/index"));
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

const char* kEvictedWorkload = R"({"metadata":{"name":"nccljob-demo","generation":2,"resourceVersion":"41"},"status":{
    "admission":{"clusterQueue":"gpus","podSetAssignments":[{"name":"trainers","count":4}]},
    "accumulatedPastExecutionTimeSeconds":7,
    "conditions":[
      {"type":"QuotaReserved","status":"True","reason":"QuotaReserved","message":"Quota reserved in ClusterQueue gpus","lastTransitionTime":"2023-12-31T23:59:00Z"},
      {"type":"Admitted","status":"True","reason":"Admitted","message":"The workload is admitted","lastTransitionTime":"2023-12-31T23:59:00Z"},
      {"type":"Evicted","status":"True","reason":"Deactivated","message":"The workload is deactivated","lastTransitionTime":"2023-12-31T23:59:50Z"}]}})";

TEST(ReleasesEvictedQuota, OnlyWhenEvictedReservedAndEveryPodIsGone) {
  ObservedKueueWorkload evicted = ObserveKueueWorkload(Json::parse(kEvictedWorkload));
  EXPECT_TRUE(evicted.evicted);
  EXPECT_TRUE(evicted.quota_reserved);
  EXPECT_FALSE(evicted.admitted);
  EXPECT_TRUE(ReleasesEvictedQuota(evicted, /*job_finished=*/false, /*pods_left=*/false));
  EXPECT_FALSE(ReleasesEvictedQuota(evicted, false, /*pods_left=*/true)) << "the quota covers pods that still exist";
  EXPECT_FALSE(ReleasesEvictedQuota(evicted, /*job_finished=*/true, false)) << "a finished job marks it Finished instead";
  EXPECT_FALSE(ReleasesEvictedQuota(Admitted(), false, false)) << "not evicted";
  EXPECT_FALSE(ReleasesEvictedQuota(Pending(), false, false)) << "no reservation to clear";
  ObservedKueueWorkload released = evicted;
  released.quota_reserved = false;
  EXPECT_FALSE(ReleasesEvictedQuota(released, false, false)) << "cleared already (another reconcile, or before a restart)";
  EXPECT_FALSE(ReleasesEvictedQuota(ObservedKueueWorkload{}, false, false));
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

TEST(ReleaseQuotaPatch, ClearsAdmissionAndReservationAsKueueIntegrationsDo) {
  Json patch = desired::ReleaseQuotaPatch(Json::parse(kEvictedWorkload), kNow);
  ASSERT_GE(patch.size(), 4u);
  EXPECT_EQ(patch[0], Json({{"op", "test"}, {"path", "/metadata/resourceVersion"}, {"value", "41"}})) << "conflict-safe";
  auto op = [&](const std::string& path) -> const Json* {
    for (const Json& o : patch) {
      if (o["path"] == path) return &o;
    }
    return nullptr;
  };
  ASSERT_NE(op("/status/admission"), nullptr);
  EXPECT_EQ((*op("/status/admission"))["op"], "remove");
  ASSERT_NE(op("/status/accumulatedPastExecutionTimeSeconds"), nullptr);
  EXPECT_EQ((*op("/status/accumulatedPastExecutionTimeSeconds"))["value"], 7 + 60) << "admitted for the last 60 s";
  ASSERT_NE(op("/status/conditions"), nullptr);
  const Json& conditions = (*op("/status/conditions"))["value"];
  auto find = [&](const std::string& type) {
    for (const Json& c : conditions) {
      if (c["type"] == type) return c;
    }
    return Json();
  };
  EXPECT_EQ(find("QuotaReserved")["status"], "False");
  EXPECT_EQ(find("QuotaReserved")["reason"], "Pending");
  EXPECT_EQ(find("QuotaReserved")["message"], "The workload is deactivated");
  EXPECT_EQ(find("QuotaReserved")["lastTransitionTime"], "2024-01-01T00:00:00Z");
  EXPECT_EQ(find("QuotaReserved")["observedGeneration"], 2);
  EXPECT_EQ(find("Admitted")["status"], "False");
  EXPECT_EQ(find("Admitted")["reason"], "NoReservation");
  EXPECT_EQ(find("Requeued")["status"], "False") << "Kueue requeues a deactivated Workload when it is active again";
  EXPECT_EQ(find("Requeued")["reason"], "Deactivated");
  EXPECT_EQ(find("Evicted")["status"], "True") << "Kueue's condition, left alone";
  EXPECT_EQ(find("Evicted")["lastTransitionTime"], "2023-12-31T23:59:50Z");

  Json preempted = Json::parse(kEvictedWorkload);
  preempted["status"]["conditions"][2]["reason"] = "Preempted";
  preempted["status"].erase("admission");
  Json again = desired::ReleaseQuotaPatch(preempted, kNow);
  for (const Json& o : again) EXPECT_NE(o["path"], "/status/admission") << "removing an absent field fails the patch";
  for (const Json& c : again.back()["value"]) {
    if (c["type"] == "Requeued") {
      EXPECT_EQ(c["status"], "True") << "a preempted Workload is requeued at once";
    }
  }
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

}  // namespace
}  // namespace ncclop::policy

namespace ncclop::policy {
namespace {

TEST(KueueWorkloadActiveFor, SuspendGivesTheAdmissionBackAndResumeTakesOnlyOurDeactivationBack) {
  ObservedKueueWorkload admitted = Admitted();
  EXPECT_EQ(KueueWorkloadActiveFor(admitted, /*suspend=*/true, false), false);
  EXPECT_EQ(KueueWorkloadActiveFor(admitted, /*suspend=*/false, false), std::nullopt);
  EXPECT_EQ(KueueWorkloadActiveFor(Pending(), true, false), false) << "a queued job leaves the queue while suspended";
  ObservedKueueWorkload ours = ObserveKueueWorkload(Json::parse(
      R"({"metadata":{"annotations":{"nccl.dev/suspended":"true"}},"spec":{"active":false},"status":{}})"));
  EXPECT_FALSE(ours.active);
  EXPECT_TRUE(ours.deactivated_for_suspend);
  EXPECT_EQ(KueueWorkloadActiveFor(ours, /*suspend=*/false, false), true);
  EXPECT_EQ(KueueWorkloadActiveFor(ours, /*suspend=*/true, false), std::nullopt) << "done already";
  ObservedKueueWorkload someone_elses = ObserveKueueWorkload(Json::parse(R"({"spec":{"active":false},"status":{}})"));
  EXPECT_EQ(KueueWorkloadActiveFor(someone_elses, false, false), std::nullopt) << "an admin's deactivation stays";
  EXPECT_EQ(KueueWorkloadActiveFor(admitted, true, /*job_finished=*/true), std::nullopt);
  EXPECT_EQ(KueueWorkloadActiveFor(ObservedKueueWorkload{}, true, false), std::nullopt);
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

TEST(Flavors, TheAdmittedFlavorsPlaceThePodsAsKueueDoes) {
  ObservedKueueWorkload w = ObserveKueueWorkload(Json::parse(R"({"status":{"admission":{"clusterQueue":"gpus","podSetAssignments":[
      {"name":"trainers","count":4,"flavors":{"cpu":"a100","memory":"a100","nvidia.com/gpu":"a100-spot"}}]}}})"));
  EXPECT_EQ(w.flavors, (std::vector<std::string>{"a100", "a100-spot"}));

  Json pod = desired::Pod(testing::Job(4, 1), 0, 1, {});
  pod["spec"]["nodeSelector"] = {{"team", "a"}};
  pod["spec"]["tolerations"] = Json::array({{{"key", "dedicated"}, {"operator", "Exists"}}});
  const Json spot_toleration = {{"key", "spot"}, {"operator", "Exists"}, {"effect", "NoSchedule"}};
  desired::ApplyFlavors(pod, {Json::parse(R"({"spec":{"nodeLabels":{"gpu":"a100"}}})"),
                              {{"spec", {{"nodeLabels", {{"lifecycle", "spot"}}}, {"tolerations", Json::array({spot_toleration})}}}},
                              {{"spec", {{"tolerations", Json::array({spot_toleration})}}}}});
  EXPECT_EQ(pod["spec"]["nodeSelector"], Json({{"team", "a"}, {"gpu", "a100"}, {"lifecycle", "spot"}}));
  EXPECT_EQ(pod["spec"]["tolerations"],
            Json::array({{{"key", "dedicated"}, {"operator", "Exists"}}, spot_toleration})) << "each toleration once";

  Json plain = desired::Pod(testing::Job(4, 1), 0, 1, {});
  const Json before = plain;
  desired::ApplyFlavors(plain, {Json::parse(R"({"spec":{}})")});
  EXPECT_EQ(plain, before) << "a flavor without labels or tolerations changes nothing";
}

TEST(SetActivePatch, ConditionalAndMarked) {
  const Json w = Json::parse(kEvictedWorkload);
  EXPECT_EQ(desired::SetActivePatch(w, false),
            Json::parse(R"({"metadata":{"resourceVersion":"41","annotations":{"nccl.dev/suspended":"true"}},"spec":{"active":false}})"));
  EXPECT_EQ(desired::SetActivePatch(w, true),
            Json::parse(R"({"metadata":{"resourceVersion":"41","annotations":{"nccl.dev/suspended":null}},"spec":{"active":true}})"));
}

}  // namespace
}  // namespace ncclop::policy

namespace ncclop::policy {
namespace {

ObservedKueueWorkload WithPodsReady(ObservedKueueWorkload wl, const char* status, const char* reason) {
  wl.pods_ready_status = status;
  wl.pods_ready_reason = reason;
  return wl;
}

TEST(ObserveKueueWorkload, ReadsThePodsReadyCondition) {
  ObservedKueueWorkload wl = ObserveKueueWorkload(Json::parse(R"({"status":{"conditions":[
      {"type":"Admitted","status":"True"},{"type":"PodsReady","status":"False","reason":"WaitForRecovery"}]}})"));
  EXPECT_EQ(wl.pods_ready_status, "False");
  EXPECT_EQ(wl.pods_ready_reason, "WaitForRecovery");
  EXPECT_EQ(Admitted().pods_ready_status, "") << "no condition: none read";
}

TEST(PodsReadyFor, FollowsThePodsAsKueueIntegrationsDo) {
  // Admitted, not all ready: WaitForStart, once.
  auto start = PodsReadyFor(Admitted(), false, 3, 4);
  ASSERT_TRUE(start);
  EXPECT_EQ(*start, (KueuePodsReady{false, "WaitForStart", "Not all pods are ready or succeeded"}));
  EXPECT_FALSE(PodsReadyFor(WithPodsReady(Admitted(), "False", "WaitForStart"), false, 3, 4)) << "already said";
  // All ready: Started.
  auto started = PodsReadyFor(WithPodsReady(Admitted(), "False", "WaitForStart"), false, 4, 4);
  ASSERT_TRUE(started);
  EXPECT_TRUE(started->ready);
  EXPECT_EQ(started->reason, "Started");
  EXPECT_FALSE(PodsReadyFor(WithPodsReady(Admitted(), "True", "Started"), false, 4, 4)) << "no write while it holds";
  // A pod failed after the start: WaitForRecovery, and it stays so until all are ready again: Recovered.
  auto recovery = PodsReadyFor(WithPodsReady(Admitted(), "True", "Started"), false, 0, 4);
  ASSERT_TRUE(recovery);
  EXPECT_FALSE(recovery->ready);
  EXPECT_EQ(recovery->reason, "WaitForRecovery");
  EXPECT_FALSE(PodsReadyFor(WithPodsReady(Admitted(), "False", "WaitForRecovery"), false, 2, 4));
  auto recovered = PodsReadyFor(WithPodsReady(Admitted(), "False", "WaitForRecovery"), false, 4, 4);
  ASSERT_TRUE(recovered);
  EXPECT_EQ(recovered->reason, "Recovered");
  EXPECT_FALSE(PodsReadyFor(WithPodsReady(Admitted(), "True", "Recovered"), false, 4, 4));
  EXPECT_EQ(PodsReadyFor(WithPodsReady(Admitted(), "True", "Recovered"), false, 1, 4)->reason, "WaitForRecovery");
}

TEST(PodsReadyFor, NotAdmittedFinishedOrGoneWritesOnlyToUndoATrueCondition) {
  EXPECT_FALSE(PodsReadyFor(ObservedKueueWorkload{}, false, 4, 4)) << "no Workload";
  EXPECT_FALSE(PodsReadyFor(Pending(), false, 0, 4)) << "no write per queued job";
  EXPECT_FALSE(PodsReadyFor(WithPodsReady(Pending(), "False", "WaitForStart"), false, 0, 4));
  auto undo = PodsReadyFor(WithPodsReady(Pending(), "True", "Started"), false, 4, 4);
  ASSERT_TRUE(undo) << "evicted: ready pods of the old admission do not count";
  EXPECT_EQ(*undo, (KueuePodsReady{false, "WaitForStart", "Not all pods are ready or succeeded"}));
  EXPECT_FALSE(PodsReadyFor(Admitted(), true, 0, 4)) << "the job ended: Finished says it";
  ObservedKueueWorkload finished = Admitted();
  finished.finished = true;
  EXPECT_FALSE(PodsReadyFor(finished, false, 0, 4));
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

TEST(SetPodsReadyPatch, ConditionalKeepsTheOtherConditionsAndTheTransitionTime) {
  const Json wl = Json::parse(R"({"metadata":{"generation":3,"resourceVersion":"9"},"status":{"conditions":[
      {"type":"Admitted","status":"True","reason":"Admitted","message":"","lastTransitionTime":"2023-12-31T23:00:00Z"},
      {"type":"PodsReady","status":"True","reason":"Started","message":"m","lastTransitionTime":"2023-12-31T23:30:00Z"}]}})");
  Json patch = desired::SetPodsReadyPatch(wl, true, "Recovered", "All pods reached readiness and the workload is running", kNow);
  EXPECT_EQ(patch[0], (Json{{"op", "test"}, {"path", "/metadata/resourceVersion"}, {"value", "9"}}));
  const Json& conditions = patch.back()["value"];
  ASSERT_EQ(conditions.size(), 2u);
  EXPECT_EQ(conditions[0]["type"], "Admitted");
  EXPECT_EQ(conditions[1]["reason"], "Recovered");
  EXPECT_EQ(conditions[1]["observedGeneration"], 3);
  EXPECT_EQ(conditions[1]["lastTransitionTime"], "2023-12-31T23:30:00Z") << "the status did not change";
  Json to_false = desired::SetPodsReadyPatch(wl, false, "WaitForRecovery", "x", kNow);
  EXPECT_EQ(to_false.back()["value"][1]["lastTransitionTime"], "2024-01-01T00:00:00Z");
  Json none = desired::SetPodsReadyPatch(Json::parse(R"({"metadata":{"resourceVersion":"1"}})"), false, "WaitForStart", "x", kNow);
  EXPECT_EQ(none[1], (Json{{"op", "add"}, {"path", "/status"}, {"value", Json::object()}}));
  EXPECT_EQ(none[2]["value"][0]["type"], "PodsReady");
}

}  // namespace
}  // namespace ncclop::policy

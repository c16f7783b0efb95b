#include <gtest/gtest.h>

#include "contract/names.h"
#include "cache/trim.h"
#include "desired/pod.h"
#include "desired/rbac.h"
#include "observed/ownership.h"
#include "observed/pod.h"
#include "test_jobs.h"

namespace ncclop::cache {
namespace {

using Json = nlohmann::json;

// A pod as the API server returns it: the operator's desired pod plus server-set metadata
// and a status where the trainer failed.
Json ServerPod(const std::string& trainer_state) {
  api::NcclJob job = testing::Job(4, 2);
  Json pod = desired::Pod(job, 0, 2, {});
  Json& md = pod["metadata"];
  md["namespace"] = "ml";
  md["uid"] = "pod-uid";
  md["resourceVersion"] = "42";
  md["creationTimestamp"] = "2026-01-01T00:00:00Z";
  md["deletionTimestamp"] = "2026-01-01T00:01:00Z";
  md["annotations"][std::string(contract::kAnnotationUniqueId)] = "aWQ=";
  md["annotations"][std::string(contract::kAnnotationUniqueIdAttempt)] = "2";
  md["annotations"]["kubectl.kubernetes.io/restartedAt"] = "x";
  md["managedFields"] = Json::array({{{"manager", "nccl-operator"}, {"fieldsV1", {{"f:spec", Json::object()}}}}});
  pod["status"] = Json::parse(R"({
    "phase": "Failed", "reason": "Evicted", "message": "node ran out of memory", "podIP": "10.0.0.1",
    "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "t", "reason": "r"},
                   {"type": "PodScheduled", "status": "True"}],
    "initContainerStatuses": [{"name": "nccl-sidecar", "ready": true, "image": "s", "state": {"running": {"startedAt": "t"}}}],
    "containerStatuses": [{"name": "logger", "ready": false, "imageID": "x", "state": {"running": {}}}]
  })");
  Json trainer = {{"name", "trainer"}, {"ready", false}, {"imageID", "sha"}, {"restartCount", 0}};
  trainer["state"] = Json::parse(trainer_state);
  pod["status"]["containerStatuses"].push_back(trainer);
  return pod;
}

void ExpectSameObservation(const Json& full) {
  Json trimmed = full;
  TrimPod(trimmed);
  for (std::string container : {"trainer", "logger"}) {
    observed::ObservedPod a = observed::ObservePod(full, container);
    observed::ObservedPod b = observed::ObservePod(trimmed, container);
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.index, b.index);
    EXPECT_EQ(a.attempt, b.attempt);
    EXPECT_EQ(a.phase, b.phase);
    EXPECT_EQ(a.ready, b.ready);
    EXPECT_EQ(a.terminating, b.terminating);
    EXPECT_EQ(a.trainer_succeeded, b.trainer_succeeded);
    EXPECT_EQ(a.failed, b.failed);
    EXPECT_EQ(a.trainer_exit_code, b.trainer_exit_code);
    EXPECT_EQ(a.failure_detail, b.failure_detail);
    EXPECT_EQ(a.unique_id, b.unique_id);
    EXPECT_EQ(a.unique_id_attempt, b.unique_id_attempt);
    EXPECT_EQ(a.start_blocked_reason, b.start_blocked_reason);
    EXPECT_EQ(a.start_blocked_detail, b.start_blocked_detail);
  }
}

TEST(TrimPodTest, ObservationIsUnchanged) {
  ExpectSameObservation(ServerPod(R"({"terminated": {"exitCode": 3, "reason": "Error", "finishedAt": "t"}})"));
  ExpectSameObservation(ServerPod(R"({"terminated": {"exitCode": 0, "reason": "Completed"}})"));
  ExpectSameObservation(ServerPod(R"({"running": {"startedAt": "t"}})"));
  Json running = ServerPod(R"({"running": {}})");
  running["status"]["phase"] = "Running";
  running["metadata"].erase("deletionTimestamp");
  ExpectSameObservation(running);
  Json pulling = ServerPod(R"({"waiting": {"reason": "ImagePullBackOff", "message": "Back-off pulling image"}})");
  pulling["status"]["phase"] = "Pending";
  pulling["status"]["conditions"][1] = {{"type", "PodScheduled"}, {"status", "True"}, {"reason", "r"}};
  pulling["metadata"].erase("deletionTimestamp");
  ExpectSameObservation(pulling);
  EXPECT_EQ(observed::ObservePod(pulling, "trainer").start_blocked_reason, "ImagePullBackOff");
}

TEST(TrimPodTest, KeepsWhatTheControllerReadsAndDropsTheRest) {
  Json pod = ServerPod(R"({"terminated": {"exitCode": 3, "reason": "Error", "finishedAt": "t"}})");
  const std::size_t full_size = pod.dump().size();
  TrimPod(pod);
  // Cache key, owner check, job index.
  EXPECT_EQ(pod["metadata"]["name"], "demo-0");
  EXPECT_EQ(pod["metadata"]["namespace"], "ml");
  EXPECT_EQ(pod["metadata"]["resourceVersion"], "42");
  EXPECT_EQ(pod["metadata"]["ownerReferences"][0]["uid"], "uid-1");
  EXPECT_EQ(pod["metadata"]["labels"][std::string(contract::kLabelJobName)], "demo");
  EXPECT_FALSE(pod.contains("spec"));
  EXPECT_FALSE(pod["metadata"].contains("managedFields"));
  EXPECT_FALSE(pod["metadata"]["annotations"].contains("kubectl.kubernetes.io/restartedAt"));
  EXPECT_FALSE(pod["status"].contains("podIP"));
  EXPECT_EQ(pod["status"]["conditions"][0], (Json{{"type", "Ready"}, {"status", "True"}}));
  EXPECT_EQ(pod["status"]["containerStatuses"][1]["state"]["terminated"], (Json{{"exitCode", 3}, {"reason", "Error"}}));
  EXPECT_EQ(pod["status"]["initContainerStatuses"][0], (Json{{"name", "nccl-sidecar"}, {"ready", true}}));
  // What is kept is small, whatever the pod carries: under 1 KB, a quarter of this pod as served.
  EXPECT_LT(pod.dump().size(), 1000u);
  EXPECT_LT(pod.dump().size() * 4, full_size);
  // Trimming twice changes nothing (a relisted pod goes through it again).
  Json again = pod;
  TrimPod(again);
  EXPECT_EQ(again, pod);
}

TEST(TrimPodTest, KeepsWhoDisruptedThePod) {
  Json pod = Json::parse(R"({"status": {"conditions": [
      {"type": "Ready", "status": "False", "reason": "PodCompleted", "message": "m"},
      {"type": "DisruptionTarget", "status": "True", "reason": "EvictionByEvictionAPI", "message": "Eviction API: evicting",
       "lastTransitionTime": "t"}]}})");
  TrimPod(pod);
  EXPECT_EQ(pod["status"]["conditions"][0], (Json{{"type", "Ready"}, {"status", "False"}}));
  EXPECT_EQ(pod["status"]["conditions"][1],
            (Json{{"type", "DisruptionTarget"}, {"status", "True"}, {"reason", "EvictionByEvictionAPI"}}))
      << "the reason names the kind of disruption (observed/disruption.h)";
}

TEST(TrimPodTest, KeepsWhyAPodDoesNotStart) {
  Json pod = ServerPod(R"({"waiting": {"reason": "ErrImagePull", "message": "not found"}})");
  pod["status"]["conditions"].push_back(
      {{"type", "PodScheduled"}, {"status", "False"}, {"reason", "Unschedulable"}, {"message", "0/1 nodes"}, {"lastTransitionTime", "t"}});
  TrimPod(pod);
  EXPECT_EQ(pod["status"]["containerStatuses"][1]["state"]["waiting"], (Json{{"reason", "ErrImagePull"}, {"message", "not found"}}));
  EXPECT_EQ(pod["status"]["conditions"].back(),
            (Json{{"type", "PodScheduled"}, {"status", "False"}, {"reason", "Unschedulable"}, {"message", "0/1 nodes"}}));
  EXPECT_EQ(pod["status"]["conditions"][0], (Json{{"type", "Ready"}, {"status", "True"}})) << "other conditions' words are dropped";
}

TEST(TrimPodTest, GarbageIsLeftAlone) {
  Json not_object = "x";
  TrimPod(not_object);
  EXPECT_EQ(not_object, "x");
  Json odd = {{"metadata", {{"name", "p"}, {"annotations", 3}}}, {"status", {{"containerStatuses", 5}}}};
  TrimPod(odd);
  EXPECT_EQ(odd["metadata"], (Json{{"name", "p"}}));
  EXPECT_EQ(odd["status"]["containerStatuses"], Json::array());
}

TEST(TrimToOwnershipTest, KeepsWhoseAChildIsAndDropsTheRest) {
  api::NcclJob job = testing::Job(4, 2);
  job.uid = "job-uid";
  Json role = desired::Role(job);
  Json& md = role["metadata"];
  md["namespace"] = "ml";
  md["uid"] = "role-uid";
  md["resourceVersion"] = "7";
  md["creationTimestamp"] = "2026-01-01T00:00:00Z";
  md["annotations"]["note"] = "x";
  md["managedFields"] = Json::array({{{"manager", "nccl-operator"}}});
  const Json full = role;
  TrimToOwnership(role);
  EXPECT_EQ(role.value("kind", ""), "Role");
  EXPECT_FALSE(role.contains("rules"));
  const Json& was = full["metadata"];
  EXPECT_EQ(role["metadata"], (Json{{"name", was["name"]}, {"namespace", "ml"}, {"uid", "role-uid"}, {"resourceVersion", "7"},
                                    {"labels", was["labels"]}, {"ownerReferences", was["ownerReferences"]}}));
  // What the controller reads of it (Reconciler::ChildMissing, Controller::EnqueueOwner) reads the same.
  EXPECT_TRUE(observed::OwnedBy(role, "job-uid"));
  EXPECT_EQ(observed::OwningJobKey(role), observed::OwningJobKey(full));
  EXPECT_FALSE(observed::OwningJobKey(role).empty());
}

}  // namespace
}  // namespace ncclop::cache

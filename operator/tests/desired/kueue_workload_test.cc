#include "desired/kueue_workload.h"

#include <gtest/gtest.h>

#include "desired/pod.h"
#include "test_workloads.h"

namespace ncclop::desired {
namespace {

using observed::ObservedKueueWorkload;
using observed::ObserveKueueWorkload;
using testing::kEvictedWorkload;
using testing::kNow;
using testing::QueuedJob;

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

// The pod set is pod 0 as made: what the pods ask for is what Kueue counts, the pod shape
// (desired/pod_shape.h) included.
TEST(KueueWorkload, ThePodSetAsksForWhatThePodsAskFor) {
  api::NcclJob job = QueuedJob();
  PodOptions options;
  options.gpu_resource = "amd.com/gpu";
  const Json amd = desired::KueueWorkload(job, options)["spec"]["podSets"][0]["template"]["spec"];
  EXPECT_EQ(amd["containers"][0]["resources"]["limits"], Json({{"amd.com/gpu", "2"}}));
  EXPECT_EQ(amd["volumes"][0]["emptyDir"]["medium"], "Memory") << "the /dev/shm of the pods";

  // Devices the template claims (DRA): no device plugin count, as on the pods; the claims are there
  // for Kueue's DRA support to count.
  job.spec.pod_template["spec"]["resourceClaims"] = Json::parse(R"([{"name": "gpus", "resourceClaimTemplateName": "g"}])");
  job.spec.pod_template["spec"]["containers"][0]["resources"] = Json::parse(R"({"claims": [{"name": "gpus"}]})");
  job.spec.compute_domain.requested = true;
  const Json dra = desired::KueueWorkload(job, {})["spec"]["podSets"][0]["template"]["spec"];
  EXPECT_EQ(dra["containers"][0]["resources"], Json::parse(R"({"claims": [{"name": "gpus"}, {"name": "compute-domain-channel"}]})"));
  EXPECT_EQ(dra["resourceClaims"], Pod(job, 0, 1, {})["spec"]["resourceClaims"]);
  EXPECT_EQ(dra["resourceClaims"].size(), 2u);
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

TEST(SetActivePatch, ConditionalAndMarked) {
  const Json w = Json::parse(kEvictedWorkload);
  EXPECT_EQ(desired::SetActivePatch(w, false),
            Json::parse(R"({"metadata":{"resourceVersion":"41","annotations":{"nccl.dev/suspended":"true"}},"spec":{"active":false}})"));
  EXPECT_EQ(desired::SetActivePatch(w, true),
            Json::parse(R"({"metadata":{"resourceVersion":"41","annotations":{"nccl.dev/suspended":null}},"spec":{"active":true}})"));
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

}  // namespace
}  // namespace ncclop::desired

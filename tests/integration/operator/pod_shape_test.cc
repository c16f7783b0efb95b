// The trainer's pod shape against a real kube-apiserver + kube-controller-manager (no kubelet: the
// test writes pod status as one would): the configured GPU resource, devices a template claims
// itself, a template's own GPU count, /dev/shm, a job an older operator started, and NVIDIA's
// ComputeDomain through a CRD of its group, version and kind that the test installs (no driver).
#include <chrono>
#include <map>
#include <set>
#include <string>

#include "operator_fixture.h"

namespace {

using optest::Apply;
using optest::GetJson;
using optest::Json;
using optest::Pods;
using optest::Status;
using optest::TrueCondition;
using testsupport::RunKubectl;
using testsupport::WaitFor;
using namespace std::chrono_literals;

constexpr const char* kComputeDomains = "computedomains.resource.nvidia.com";

// An NcclJob of `replicas` pods of 2 GPUs; `spec` and `trainer` are YAML lines added to its spec
// and to its trainer container (indented by the caller), `pod` to its template's pod spec.
std::string JobYaml(const std::string& name, int replicas, const std::string& spec = "", const std::string& pod = "",
                    const std::string& trainer = "") {
  return "apiVersion: nccl.dev/v1alpha1\nkind: NcclJob\nmetadata:\n  name: " + name + "\nspec:\n  replicas: " +
         std::to_string(replicas) + "\n  gpusPerPod: 2\n" + spec + "  template:\n    spec:\n" + pod +
         "      containers:\n      - name: trainer\n        image: trainer:1\n" + trainer;
}

// The member of `json` at the JSON pointer `pointer`; null when there is none.
Json At(const Json& json, const std::string& pointer) {
  const Json::json_pointer at(pointer);
  return json.contains(at) ? json[at] : Json();
}

Json TrainerOf(const Json& pod) { return At(pod, "/spec/containers/0"); }

// The pod's volume `name`; null when it has none.
Json VolumeOf(const Json& pod, const std::string& name) {
  for (const Json& v : pod["spec"].value("volumes", Json::array())) {
    if (v.value("name", "") == name) return v;
  }
  return Json();
}

// Mounts at /dev/shm in the pod's trainer (the API server adds a volume of its own for the
// ServiceAccount token, so volumes alone say nothing).
int ShmMounts(const Json& pod) {
  int n = 0;
  for (const Json& m : At(pod, "/spec/containers/0/volumeMounts")) n += m.value("mountPath", "") == "/dev/shm";
  return n;
}

std::string FailedMessage(const Json& status) {
  const Json failed = TrueCondition(status, "Failed");
  return failed.is_object() ? failed.value("message", "") : "";
}

class PodShapeTest : public optest::OperatorFixture {};

TEST_F(PodShapeTest, TheTrainerGetsTheConfiguredGpuResourceAndADevShm) {
  StartOperator({"--gpu-resource-name=amd.com/gpu"});
  ASSERT_EQ(Apply(ns_, JobYaml("amd", 2, "  shmSize: 1Gi\n"), "amd.yaml").exit_code, 0);
  ASSERT_TRUE(WaitForPods("amd", 2, 1));
  for (const Json& pod : Pods(ns_, "amd")) {
    const Json trainer = TrainerOf(pod);
    EXPECT_EQ(At(trainer, "/resources/limits"), Json({{"amd.com/gpu", "2"}})) << trainer.dump();
    EXPECT_EQ(At(VolumeOf(pod, "nccl-shm"), "/emptyDir"), Json::parse(R"({"medium": "Memory", "sizeLimit": "1Gi"})"));
    EXPECT_EQ(At(trainer, "/volumeMounts/0/mountPath"), "/dev/shm") << trainer.dump();
  }
  ASSERT_TRUE(WaitFor([&] { return Status(ns_, "amd").value("podShape", 0) == 2; }, kTimeout)) << Status(ns_, "amd").dump();

  // Devices claimed through DRA: no count of the operator's beside them. A /dev/shm of the
  // template's own: the template's stays, and no second one.
  ASSERT_EQ(Apply(ns_, JobYaml("dra", 1, "",
                               "      resourceClaims:\n      - name: gpus\n        resourceClaimTemplateName: two-gpus\n"
                               "      volumes:\n      - name: dshm\n        emptyDir:\n          medium: Memory\n",
                               "        resources:\n          claims:\n          - name: gpus\n"
                               "        volumeMounts:\n        - name: dshm\n          mountPath: /dev/shm\n"),
                  "dra.yaml")
                .exit_code,
            0);
  ASSERT_TRUE(WaitForPods("dra", 1, 1));
  const Json pod = Pods(ns_, "dra")[0];
  EXPECT_EQ(At(pod, "/spec/containers/0/resources"), Json::parse(R"({"claims": [{"name": "gpus"}]})")) << TrainerOf(pod).dump();
  EXPECT_EQ(ShmMounts(pod), 1) << TrainerOf(pod).dump();
  EXPECT_EQ(At(VolumeOf(pod, "dshm"), "/emptyDir"), Json::parse(R"({"medium": "Memory"})"));
  EXPECT_TRUE(VolumeOf(pod, "nccl-shm").is_null());
}

TEST_F(PodShapeTest, ShmSizeZeroGivesNoDevShmAndAMatchingTemplateCountIsKept) {
  StartOperator();
  ASSERT_EQ(Apply(ns_, JobYaml("plain", 1, "  shmSize: 0\n", "",
                               "        resources:\n          limits:\n            nvidia.com/gpu: 2\n"), "plain.yaml")
                .exit_code,
            0);
  ASSERT_TRUE(WaitForPods("plain", 1, 1));
  const Json pod = Pods(ns_, "plain")[0];
  EXPECT_EQ(ShmMounts(pod), 0) << TrainerOf(pod).dump();
  EXPECT_TRUE(VolumeOf(pod, "nccl-shm").is_null());
  EXPECT_EQ(At(pod, "/spec/containers/0/resources/limits"), Json({{"nvidia.com/gpu", "2"}}));
}

TEST_F(PodShapeTest, ATemplateAskingForAnotherGpuCountFailsTheJobNamingBoth) {
  StartOperator();
  ASSERT_EQ(Apply(ns_, JobYaml("mismatch", 2, "", "", "        resources:\n          limits:\n            nvidia.com/gpu: 1\n"),
                  "mismatch.yaml")
                .exit_code,
            0);
  ASSERT_TRUE(WaitFor([&] { return Status(ns_, "mismatch").value("state", "") == "Failed"; }, kTimeout))
      << Status(ns_, "mismatch").dump();
  const Json status = Status(ns_, "mismatch");
  EXPECT_EQ(TrueCondition(status, "Failed").value("reason", ""), "InvalidSpec");
  const std::string message = FailedMessage(status);
  for (const char* both : {"resources.limits[nvidia.com/gpu] to 1", "spec.gpusPerPod is 2"}) {
    EXPECT_NE(message.find(both), std::string::npos) << both << " not in: " << message;
  }
  EXPECT_TRUE(Pods(ns_, "mismatch").empty());
}

// A job an older operator started (status without podShape, its pods as that operator made them):
// the new operator leaves its pods alone, makes the next attempt's as the old one did, and does not
// refuse what the old one accepted; the same template in a new job is refused.
TEST_F(PodShapeTest, AJobAnOlderOperatorStartedKeepsItsPodsAcrossTheUpgrade) {
  const std::string limit_of_one = "        resources:\n          limits:\n            nvidia.com/gpu: 1\n";
  ASSERT_EQ(Apply(ns_, JobYaml("old", 2, "  failurePolicy:\n    backoffSeconds: 0\n", "", limit_of_one), "old.yaml").exit_code, 0);
  const Json job = GetJson("nj old -n " + ns_);
  const std::string uid = job["metadata"]["uid"];
  const std::string now = "2026-01-01T00:00:00Z";
  Json status = {{"status",
                  {{"attempt", 1}, {"state", "Pending"}, {"startTime", now}, {"attemptStartTime", now},
                   {"conditions", Json::array({{{"type", "Created"}, {"status", "True"}, {"reason", "AttemptStarted"},
                                                {"message", "attempt 1 started"}, {"lastTransitionTime", now}}})}}}};
  auto r = RunKubectl("patch nj old -n " + ns_ + " --subresource=status --type=merge -p " + optest::Shell(status.dump()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::set<std::string> uids;
  for (int i = 0; i < 2; ++i) {
    // Pod i as the older operator made it: its GPU limit over the template's, no /dev/shm.
    Json pod = {{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata",
                 {{"name", "old-" + std::to_string(i)},
                  {"labels", {{"nccl.dev/job-name", "old"}, {"nccl.dev/index", std::to_string(i)}, {"nccl.dev/attempt", "1"}}},
                  {"annotations", {{"nccl.dev/attempt", "1"}}},
                  {"ownerReferences", Json::array({{{"apiVersion", "nccl.dev/v1alpha1"}, {"kind", "NcclJob"}, {"name", "old"},
                                                    {"uid", uid}, {"controller", true}, {"blockOwnerDeletion", true}}})}}},
                {"spec",
                 {{"restartPolicy", "Never"},
                  {"hostname", "old-" + std::to_string(i)},
                  {"subdomain", "old"},
                  {"containers", Json::array({{{"name", "trainer"}, {"image", "trainer:1"},
                                               {"resources", {{"limits", {{"nvidia.com/gpu", "2"}}}}}}})}}}};
    ASSERT_EQ(Apply(ns_, pod.dump(), "old-" + std::to_string(i) + ".json").exit_code, 0);
    uids.insert(GetJson("pod old-" + std::to_string(i) + " -n " + ns_)["metadata"].value("uid", ""));
  }

  StartOperator();  // the upgraded operator
  ASSERT_TRUE(WaitFor([&] { return Status(ns_, "old").value("podShape", 0) == 1; }, kTimeout)) << Status(ns_, "old").dump();
  ASSERT_TRUE(WaitFor([&] { return GetJson("cm old-nccl -n " + ns_).is_object(); }, kTimeout));
  std::set<std::string> kept;
  for (const Json& pod : Pods(ns_, "old")) kept.insert(pod["metadata"].value("uid", ""));
  EXPECT_EQ(kept, uids) << "the running pods were made again";
  EXPECT_NE(Status(ns_, "old").value("state", ""), "Failed") << Status(ns_, "old").dump();

  // The next attempt's pods: as the older operator made them.
  optest::Terminate(ns_, "old-1", 1);
  ASSERT_TRUE(WaitForPods("old", 2, 2)) << RunKubectl("get pods -n " + ns_ + " --show-labels").output;
  for (const Json& pod : Pods(ns_, "old")) {
    EXPECT_EQ(At(pod, "/spec/containers/0/resources/limits/nvidia.com~1gpu"), "2") << TrainerOf(pod).dump();
    EXPECT_EQ(ShmMounts(pod), 0) << "no /dev/shm for a job started without it: " << TrainerOf(pod).dump();
    EXPECT_TRUE(VolumeOf(pod, "nccl-shm").is_null());
  }
  EXPECT_EQ(Status(ns_, "old").value("podShape", 0), 1);

  // The same template, new: refused.
  ASSERT_EQ(Apply(ns_, JobYaml("new", 2, "", "", limit_of_one), "new.yaml").exit_code, 0);
  ASSERT_TRUE(WaitFor([&] { return Status(ns_, "new").value("state", "") == "Failed"; }, kTimeout)) << Status(ns_, "new").dump();
  EXPECT_EQ(TrueCondition(Status(ns_, "new"), "Failed").value("reason", ""), "InvalidSpec");
}

TEST_F(PodShapeTest, WhereComputeDomainsAreNotServedAJobAskingForOneFailsSayingWhatToInstall) {
  auto r = RunKubectl(std::string("delete crd ") + kComputeDomains + " --ignore-not-found --wait=true --timeout=60s");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_TRUE(WaitFor([&] { return RunKubectl(std::string("get ") + kComputeDomains + " -A").exit_code != 0; }, kTimeout));
  optest::OperatorProcess& op = StartOperator();
  ASSERT_EQ(Apply(ns_, JobYaml("nvl", 2, "  computeDomain: {}\n"), "nvl.yaml").exit_code, 0);
  ASSERT_TRUE(WaitFor([&] { return Status(ns_, "nvl").value("state", "") == "Failed"; }, kTimeout)) << Status(ns_, "nvl").dump();
  const Json status = Status(ns_, "nvl");
  EXPECT_EQ(TrueCondition(status, "Failed").value("reason", ""), "ComputeDomainNotServed");
  for (const char* what : {"k8s-dra-driver-gpu", "computedomains.resource.nvidia.com/v1beta1"}) {
    EXPECT_NE(FailedMessage(status).find(what), std::string::npos) << what << " not in: " << FailedMessage(status);
  }
  EXPECT_TRUE(Pods(ns_, "nvl").empty());
  auto events = RunKubectl("get events -n " + ns_ + " --field-selector involvedObject.name=nvl");
  EXPECT_NE(events.output.find("ComputeDomainNotServed"), std::string::npos) << events.output;
  EXPECT_NE(op.Log().find("ComputeDomains (resource.nvidia.com/v1beta1) are not served"), std::string::npos) << op.Log();
}

TEST_F(PodShapeTest, AComputeDomainIsMadeClaimedMadeAgainWhenDeletedAndGoesWithTheJob) {
  auto r = optest::InstallCrd(NCCLOP_COMPUTEDOMAIN_CRD_FILE, kComputeDomains);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  StartOperator();
  ASSERT_EQ(Apply(ns_, JobYaml("nvl", 2, "  computeDomain:\n    numNodes: 2\n"), "nvl.yaml").exit_code, 0);
  ASSERT_TRUE(WaitForPods("nvl", 2, 1));
  const std::string uid = GetJson("nj nvl -n " + ns_)["metadata"]["uid"];
  const std::string cd = std::string(kComputeDomains) + " nvl -n " + ns_;

  Json domain = GetJson(cd);
  ASSERT_TRUE(domain.is_object()) << "no ComputeDomain nvl";
  EXPECT_EQ(At(domain, "/spec"), Json::parse(R"({"numNodes": 2, "channel": {"resourceClaimTemplate": {"name": "nvl-imex-channel"},
                                                                          "allocationMode": "Single"}})"));
  const Json owner = At(domain, "/metadata/ownerReferences/0");
  EXPECT_EQ(owner.value("uid", ""), uid);
  EXPECT_EQ(owner.value("controller", false), true);
  EXPECT_EQ(At(domain, "/metadata/labels"), Json({{"nccl.dev/job-name", "nvl"}}));
  for (const Json& pod : Pods(ns_, "nvl")) {
    EXPECT_EQ(At(pod, "/spec/resourceClaims"),
              Json::parse(R"([{"name": "compute-domain-channel", "resourceClaimTemplateName": "nvl-imex-channel"}])"));
    EXPECT_EQ(At(pod, "/spec/containers/0/resources/claims"), Json::parse(R"([{"name": "compute-domain-channel"}])"));
    EXPECT_EQ(At(pod, "/spec/containers/0/resources/limits/nvidia.com~1gpu"), "2");
  }

  // Deleted by hand while the job runs: made again, owned by the job.
  const std::string before = domain["metadata"].value("uid", "");
  r = RunKubectl("delete " + cd + " --wait=true --timeout=30s");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(WaitFor([&] {
    Json again = GetJson(cd);
    return again.is_object() && At(again, "/metadata/uid") != before && At(again, "/metadata/ownerReferences/0/uid") == uid;
  }, kTimeout)) << GetJson(cd).dump();

  // The spec field cannot change under it (the ComputeDomain's spec cannot either).
  auto changed = RunKubectl("patch nj nvl -n " + ns_ + " --type=merge -p '{\"spec\":{\"computeDomain\":{\"numNodes\":4}}}'");
  EXPECT_NE(changed.exit_code, 0);
  EXPECT_NE(changed.output.find("computeDomain is immutable"), std::string::npos) << changed.output;
  auto removed = RunKubectl("patch nj nvl -n " + ns_ + " --type=json -p '[{\"op\":\"remove\",\"path\":\"/spec/computeDomain\"}]'");
  EXPECT_NE(removed.exit_code, 0);
  EXPECT_NE(removed.output.find("computeDomain cannot be added or removed"), std::string::npos) << removed.output;

  // Gone with the job: kube-controller-manager's garbage collector. It looks for new resource
  // types (this CRD) every 30 s, so allow two of its periods.
  r = RunKubectl("delete nj nvl -n " + ns_ + " --wait=false");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(WaitFor([&] { return RunKubectl("get " + cd).exit_code != 0; }, 120s))
      << "the garbage collector should delete the owned ComputeDomain: " << GetJson(cd).dump();
}

}  // namespace

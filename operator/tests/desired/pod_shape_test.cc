#include "desired/pod_shape.h"

#include <gtest/gtest.h>

#include "desired/pod.h"
#include "test_jobs.h"

namespace ncclop::desired {
namespace {

// The demo job (4 pods of 2 GPUs; trainer, logger) with `patch` (a JSON patch) applied to it.
api::NcclJob JobWith(const char* patch) {
  return *api::ParseNcclJob(testing::JobJson(4, 2).patch(Json::parse(patch)));
}

const Json& Trainer(const Json& pod) { return pod["spec"]["containers"][0]; }
const Json& Logger(const Json& pod) { return pod["spec"]["containers"][1]; }

Json Volume(const Json& pod, const std::string& name) {
  for (const Json& v : pod["spec"].value("volumes", Json::array())) {
    if (v["name"] == name) return v;
  }
  return Json();
}

int VolumesNamed(const Json& pod, const std::string& name) {
  int n = 0;
  for (const Json& v : pod["spec"].value("volumes", Json::array())) n += v["name"] == name;
  return n;
}

bool MountsAtShm(const Json& container) {
  for (const Json& m : container.value("volumeMounts", Json::array())) {
    if (m["mountPath"] == "/dev/shm") return true;
  }
  return false;
}

TEST(PodShape, AJobKeepsTheShapeItWasFirstSeenIn) {
  api::NcclJob job = testing::Job();
  EXPECT_EQ(PodShapeOf(job), kPodShape) << "not started: this operator's";
  job.status.attempt = 3;
  EXPECT_EQ(PodShapeOf(job), 1) << "started by an operator that did not record it";
  job.status.pod_shape = 2;
  EXPECT_EQ(PodShapeOf(job), 2);
  job.status.attempt = 0;
  job.status.pod_shape = 1;
  EXPECT_EQ(PodShapeOf(job), 1) << "recorded wins";
}

TEST(PodShape, TheGpusAreAskedInTheConfiguredResource) {
  PodOptions options;
  options.gpu_resource = "amd.com/gpu";
  Json pod = Pod(testing::Job(4, 8), 0, 1, options);
  EXPECT_EQ(Trainer(pod)["resources"]["limits"], Json({{"amd.com/gpu", "8"}}));
  EXPECT_FALSE(Logger(pod).contains("resources")) << "only the trainer";
  options.gpu_resource = "nvidia.com/mig-1g.10gb";
  EXPECT_EQ(Trainer(Pod(testing::Job(4, 2), 0, 1, options))["resources"]["limits"], Json({{"nvidia.com/mig-1g.10gb", "2"}}));
}

TEST(PodShape, NoGpuRequestIsAddedWhenTheTemplateClaimsDevices) {
  // Dynamic Resource Allocation: the pod's claims, or the trainer's, bring the devices.
  api::NcclJob pod_claims = JobWith(R"([{"op": "add", "path": "/spec/template/spec/resourceClaims",
      "value": [{"name": "gpus", "resourceClaimTemplateName": "four-gpus"}]},
      {"op": "add", "path": "/spec/template/spec/containers/0/resources", "value": {"claims": [{"name": "gpus"}]}}])");
  Json pod = Pod(pod_claims, 0, 1, {});
  EXPECT_EQ(Trainer(pod)["resources"], Json::parse(R"({"claims": [{"name": "gpus"}]})"));
  EXPECT_EQ(pod["spec"]["resourceClaims"], Json::parse(R"([{"name": "gpus", "resourceClaimTemplateName": "four-gpus"}])"));

  api::NcclJob pod_level_only = JobWith(R"([{"op": "add", "path": "/spec/template/spec/resourceClaims",
      "value": [{"name": "nic", "resourceClaimName": "rdma"}]}])");
  EXPECT_FALSE(Trainer(Pod(pod_level_only, 0, 1, {})).contains("resources"));
}

TEST(PodShape, TheTemplatesOwnRequestOfGpusPerPodIsKeptAsWritten) {
  api::NcclJob limit = JobWith(R"([{"op": "add", "path": "/spec/template/spec/containers/0/resources",
      "value": {"limits": {"nvidia.com/gpu": 2, "memory": "1Gi"}}}])");
  EXPECT_EQ(GpuRequestConflict(limit, "nvidia.com/gpu"), "");
  EXPECT_EQ(Trainer(Pod(limit, 0, 1, {}))["resources"], Json::parse(R"({"limits": {"nvidia.com/gpu": 2, "memory": "1Gi"}})"));

  api::NcclJob request = JobWith(R"([{"op": "add", "path": "/spec/template/spec/containers/0/resources",
      "value": {"requests": {"nvidia.com/gpu": "2"}}}])");
  EXPECT_EQ(GpuRequestConflict(request, "nvidia.com/gpu"), "");
  EXPECT_EQ(Trainer(Pod(request, 0, 1, {}))["resources"], Json::parse(R"({"requests": {"nvidia.com/gpu": "2"}})"));
}

TEST(PodShape, ATemplateAskingForAnotherNumberOfGpusIsRefusedNamingBoth) {
  api::NcclJob job = JobWith(R"([{"op": "add", "path": "/spec/template/spec/containers/0/resources",
      "value": {"limits": {"nvidia.com/gpu": "1"}}}])");
  const std::string message = GpuRequestConflict(job, "nvidia.com/gpu");
  for (const char* word : {"container trainer", "resources.limits[nvidia.com/gpu] to 1", "spec.gpusPerPod is 2"}) {
    EXPECT_NE(message.find(word), std::string::npos) << word << " not in: " << message;
  }
  api::NcclJob requests = JobWith(R"([{"op": "add", "path": "/spec/template/spec/containers/0/resources",
      "value": {"requests": {"amd.com/gpu": 4}}}])");
  EXPECT_NE(GpuRequestConflict(requests, "amd.com/gpu").find("resources.requests[amd.com/gpu] to 4"), std::string::npos);
  EXPECT_EQ(GpuRequestConflict(requests, "nvidia.com/gpu"), "") << "another resource than the configured one";

  api::NcclJob logger_only = JobWith(R"([{"op": "add", "path": "/spec/template/spec/containers/1/resources",
      "value": {"limits": {"nvidia.com/gpu": "1"}}}])");
  EXPECT_EQ(GpuRequestConflict(logger_only, "nvidia.com/gpu"), "") << "only the trainer's count is ours";

  api::NcclJob one_rank = job;
  one_rank.spec.gpus_per_pod = 0;
  EXPECT_EQ(GpuRequestConflict(one_rank, "nvidia.com/gpu"), "") << "one rank per pod, using what the template asks for";
  EXPECT_EQ(Trainer(Pod(one_rank, 0, 1, {}))["resources"]["limits"]["nvidia.com/gpu"], "1") << "kept as written";

  job.status.attempt = 2;  // started by an older operator, which overwrote the value: it still does
  EXPECT_EQ(GpuRequestConflict(job, "nvidia.com/gpu"), "");
  EXPECT_EQ(Trainer(Pod(job, 0, 3, {}))["resources"]["limits"]["nvidia.com/gpu"], "2");
}

TEST(PodShape, AJobStartedBeforeStatusPodShapeGetsThePodsItHad) {
  api::NcclJob job = JobWith(R"([{"op": "add", "path": "/spec/template/spec/resourceClaims",
      "value": [{"name": "nic", "resourceClaimName": "rdma"}]}])");
  job.status.attempt = 1;
  Json pod = Pod(job, 0, 2, {});
  EXPECT_EQ(Trainer(pod)["resources"]["limits"]["nvidia.com/gpu"], "2") << "shape 1 set it beside any claim";
  EXPECT_FALSE(pod["spec"].contains("volumes")) << "no /dev/shm";
  EXPECT_FALSE(Trainer(pod).contains("volumeMounts"));
}

TEST(PodShape, TheTrainerGetsAMemoryBackedDevShmOfSpecShmSize) {
  Json pod = Pod(testing::Job(), 1, 1, {});
  EXPECT_EQ(Volume(pod, "nccl-shm"), Json::parse(R"({"name": "nccl-shm", "emptyDir": {"medium": "Memory", "sizeLimit": "8Gi"}})"));
  EXPECT_EQ(Trainer(pod)["volumeMounts"], Json::parse(R"([{"name": "nccl-shm", "mountPath": "/dev/shm"}])"));
  EXPECT_FALSE(MountsAtShm(Logger(pod))) << "only the trainer";

  api::NcclJob sized = JobWith(R"([{"op": "add", "path": "/spec/shmSize", "value": "64Gi"}])");
  EXPECT_EQ(Volume(Pod(sized, 0, 1, {}), "nccl-shm")["emptyDir"]["sizeLimit"], "64Gi");
  api::NcclJob with_mounts = JobWith(R"([{"op": "add", "path": "/spec/template/spec/containers/0/volumeMounts",
      "value": [{"name": "data", "mountPath": "/data"}]},
      {"op": "add", "path": "/spec/template/spec/volumes", "value": [{"name": "data", "emptyDir": {}}]}])");
  Json both = Pod(with_mounts, 0, 1, {});
  EXPECT_EQ(Trainer(both)["volumeMounts"].size(), 2u) << Trainer(both).dump();
  EXPECT_EQ(both["spec"]["volumes"].size(), 2u);
}

TEST(PodShape, ShmSizeZeroTurnsItOff) {
  for (const char* zero : {R"("0")", "0", R"("0Gi")"}) {
    api::NcclJob job = JobWith((std::string(R"([{"op": "add", "path": "/spec/shmSize", "value": )") + zero + "}]").c_str());
    Json pod = Pod(job, 0, 1, {});
    EXPECT_FALSE(pod["spec"].contains("volumes")) << zero;
    EXPECT_FALSE(Trainer(pod).contains("volumeMounts")) << zero;
  }
}

TEST(PodShape, ATemplateThatMountsItsOwnDevShmKeepsIt) {
  const char* own[] = {
      // The trainer's own, with a trailing slash.
      R"([{"op": "add", "path": "/spec/template/spec/containers/0/volumeMounts", "value": [{"name": "dshm", "mountPath": "/dev/shm/"}]},
          {"op": "add", "path": "/spec/template/spec/volumes", "value": [{"name": "dshm", "emptyDir": {"medium": "Memory"}}]}])",
      // Another container's.
      R"([{"op": "add", "path": "/spec/template/spec/containers/1/volumeMounts", "value": [{"name": "dshm", "mountPath": "/dev/shm"}]},
          {"op": "add", "path": "/spec/template/spec/volumes", "value": [{"name": "dshm", "emptyDir": {"medium": "Memory"}}]}])",
      // An init container's.
      R"([{"op": "add", "path": "/spec/template/spec/initContainers", "value": [{"name": "prep", "image": "p:1",
           "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}]}]},
          {"op": "add", "path": "/spec/template/spec/volumes", "value": [{"name": "dshm", "emptyDir": {"medium": "Memory"}}]}])",
  };
  for (const char* patch : own) {
    Json pod = Pod(JobWith(patch), 0, 1, {});
    EXPECT_EQ(VolumesNamed(pod, "nccl-shm"), 0) << patch;
    EXPECT_EQ(pod["spec"]["volumes"].size(), 1u) << patch;
  }
  // A volume of our name, mounted elsewhere: ours would be a duplicate the API server refuses.
  Json named = Pod(JobWith(R"([{"op": "add", "path": "/spec/template/spec/volumes",
      "value": [{"name": "nccl-shm", "emptyDir": {}}]}])"), 0, 1, {});
  EXPECT_EQ(VolumesNamed(named, "nccl-shm"), 1);
  EXPECT_EQ(Volume(named, "nccl-shm")["emptyDir"], Json::object()) << "the template's";
  EXPECT_FALSE(MountsAtShm(Trainer(named)));
}

TEST(PodShape, AComputeDomainsChannelIsClaimedBesideTheGpus) {
  api::NcclJob job = JobWith(R"([{"op": "add", "path": "/spec/computeDomain", "value": {}}])");
  Json pod = Pod(job, 2, 1, {});
  EXPECT_EQ(pod["spec"]["resourceClaims"],
            Json::parse(R"([{"name": "compute-domain-channel", "resourceClaimTemplateName": "demo-imex-channel"}])"));
  EXPECT_EQ(Trainer(pod)["resources"]["claims"], Json::parse(R"([{"name": "compute-domain-channel"}])"));
  EXPECT_EQ(Trainer(pod)["resources"]["limits"]["nvidia.com/gpu"], "2") << "the channel is no GPU: they are still asked";
  EXPECT_FALSE(Logger(pod).contains("resources"));

  api::NcclJob with_claims = JobWith(R"([{"op": "add", "path": "/spec/computeDomain", "value": {}},
      {"op": "add", "path": "/spec/template/spec/resourceClaims", "value": [{"name": "gpus", "resourceClaimTemplateName": "g"}]},
      {"op": "add", "path": "/spec/template/spec/containers/0/resources", "value": {"claims": [{"name": "gpus"}]}}])");
  Json both = Pod(with_claims, 0, 1, {});
  EXPECT_EQ(both["spec"]["resourceClaims"].size(), 2u);
  EXPECT_EQ(Trainer(both)["resources"], Json::parse(R"({"claims": [{"name": "gpus"}, {"name": "compute-domain-channel"}]})"));
}

}  // namespace
}  // namespace ncclop::desired

#include "desired/pod_shape.h"

#include <string_view>

#include "api/quantity.h"
#include "contract/names.h"

namespace ncclop::desired {
namespace {

Json* TrainerOf(const api::NcclJob& job, Json& pod_spec) {
  for (Json& c : pod_spec["containers"]) {
    if (c.value("name", "") == job.spec.trainer_container) return &c;
  }
  return nullptr;
}

const Json* TrainerOf(const api::NcclJob& job, const Json& pod_spec) {
  auto containers = pod_spec.find("containers");
  if (containers == pod_spec.end() || !containers->is_array()) return nullptr;
  for (const Json& c : *containers) {
    if (c.is_object() && c.value("name", "") == job.spec.trainer_container) return &c;
  }
  return nullptr;
}

bool NonEmptyList(const Json& object, std::string_view key) {
  auto it = object.find(key);
  return it != object.end() && it->is_array() && !it->empty();
}

// The template asks for devices through Dynamic Resource Allocation: the pod claims some, or
// the trainer does. Its devices are then the claims' business, not a device plugin's count.
bool ClaimsDevices(const Json& pod_spec, const Json& trainer) {
  if (NonEmptyList(pod_spec, "resourceClaims")) return true;
  auto resources = trainer.find("resources");
  return resources != trainer.end() && resources->is_object() && NonEmptyList(*resources, "claims");
}

// The trainer's own value for `resource` in its resources.limits or .requests (null: none).
Json OwnValue(const Json& trainer, const char* section, const std::string& resource) {
  auto resources = trainer.find("resources");
  if (resources == trainer.end() || !resources->is_object()) return Json();
  auto list = resources->find(section);
  if (list == resources->end() || !list->is_object()) return Json();
  return list->value(resource, Json());
}

bool CountsTo(const Json& value, int gpus) {
  return (value.is_string() && value.get<std::string>() == std::to_string(gpus)) ||
         (value.is_number_integer() && value.get<long long>() == gpus);
}

// Shape 1: the limit is gpusPerPod whatever the template said (a request of it follows).
void OverwriteGpuLimit(Json& trainer, const std::string& resource, int gpus) {
  Json& resources = trainer["resources"];
  if (!resources.is_object()) resources = Json::object();
  resources["limits"][resource] = std::to_string(gpus);
  if (resources.contains("requests") && resources["requests"].is_object() && resources["requests"].contains(resource)) {
    resources["requests"][resource] = std::to_string(gpus);
  }
}

// Shape 2: the limit only where the template makes no request of its own. A value of its own
// equals gpusPerPod here (GpuRequestConflict refused the job otherwise) and is kept as written.
void GiveGpus(const Json& pod_spec, Json& trainer, const std::string& resource, int gpus) {
  if (ClaimsDevices(pod_spec, trainer)) return;
  if (!OwnValue(trainer, "limits", resource).is_null() || !OwnValue(trainer, "requests", resource).is_null()) return;
  Json& resources = trainer["resources"];
  if (!resources.is_object()) resources = Json::object();
  resources["limits"][resource] = std::to_string(gpus);
}

bool MountsShm(const Json& containers) {
  if (!containers.is_array()) return false;
  for (const Json& c : containers) {
    if (!c.is_object() || !c.contains("volumeMounts") || !c["volumeMounts"].is_array()) continue;
    for (const Json& m : c["volumeMounts"]) {
      std::string path = m.is_object() && m.contains("mountPath") && m["mountPath"].is_string() ? m["mountPath"].get<std::string>() : "";
      while (path.size() > 1 && path.back() == '/') path.pop_back();
      if (path == contract::kShmPath) return true;
    }
  }
  return false;
}

bool HasVolume(const Json& pod_spec, std::string_view name) {
  auto volumes = pod_spec.find("volumes");
  if (volumes == pod_spec.end() || !volumes->is_array()) return false;
  for (const Json& v : *volumes) {
    if (v.is_object() && v.contains("name") && v["name"].is_string() && v["name"].get<std::string>() == name) return true;
  }
  return false;
}

// A memory-backed emptyDir at /dev/shm, unless spec.shmSize is 0 or the template brings its own
// (a mount there in any container, or a volume of our name: never a duplicate).
void MountShm(const api::NcclJob& job, Json& pod_spec, Json& trainer) {
  if (api::IsZeroQuantity(job.spec.shm_size)) return;
  if (MountsShm(pod_spec.value("containers", Json())) || MountsShm(pod_spec.value("initContainers", Json()))) return;
  if (HasVolume(pod_spec, contract::kShmVolume)) return;
  if (!pod_spec.contains("volumes") || !pod_spec["volumes"].is_array()) pod_spec["volumes"] = Json::array();
  pod_spec["volumes"].push_back({{"name", std::string(contract::kShmVolume)},
                                 {"emptyDir", {{"medium", "Memory"}, {"sizeLimit", job.spec.shm_size}}}});
  if (!trainer.contains("volumeMounts") || !trainer["volumeMounts"].is_array()) trainer["volumeMounts"] = Json::array();
  trainer["volumeMounts"].push_back({{"name", std::string(contract::kShmVolume)}, {"mountPath", std::string(contract::kShmPath)}});
}

// The pod claims the IMEX channel from the ResourceClaimTemplate the ComputeDomain's driver
// makes, and the trainer uses the claim.
void ClaimChannel(const api::NcclJob& job, Json& pod_spec, Json& trainer) {
  const std::string claim(contract::kComputeDomainClaim);
  if (!pod_spec.contains("resourceClaims") || !pod_spec["resourceClaims"].is_array()) {
    pod_spec["resourceClaims"] = Json::array();
  }
  pod_spec["resourceClaims"].push_back(
      {{"name", claim}, {"resourceClaimTemplateName", contract::ComputeDomainChannelName(job.name)}});
  Json& resources = trainer["resources"];
  if (!resources.is_object()) resources = Json::object();
  if (!resources.contains("claims") || !resources["claims"].is_array()) resources["claims"] = Json::array();
  resources["claims"].push_back({{"name", claim}});
}

}  // namespace

int PodShapeOf(const api::NcclJob& job) {
  if (job.status.pod_shape > 0) return job.status.pod_shape;
  return job.status.attempt == 0 ? kPodShape : 1;
}

void ShapeTrainer(const api::NcclJob& job, const std::string& gpu_resource, Json& pod_spec) {
  Json* trainer = TrainerOf(job, pod_spec);
  if (trainer == nullptr) return;  // ParseSpec made sure the template has it
  const int shape = PodShapeOf(job);
  const int gpus = job.spec.gpus_per_pod;
  if (gpus > 0) {
    // Before the channel claim below: only the template's own claims mean it brings its devices.
    if (shape == 1) {
      OverwriteGpuLimit(*trainer, gpu_resource, gpus);
    } else {
      GiveGpus(pod_spec, *trainer, gpu_resource, gpus);
    }
  }
  if (shape >= 2) MountShm(job, pod_spec, *trainer);
  if (job.spec.compute_domain.requested) ClaimChannel(job, pod_spec, *trainer);
}

std::string GpuRequestConflict(const api::NcclJob& job, const std::string& gpu_resource) {
  if (PodShapeOf(job) < 2) return "";  // shape 1 overwrote it; a job started so keeps that
  // 0: one rank per pod, which may use what the template asks for as it likes (JAX's one
  // process per node); the operator never set a count for it.
  if (job.spec.gpus_per_pod == 0) return "";
  const Json& tmpl = job.spec.pod_template;
  if (!tmpl.is_object() || !tmpl.contains("spec")) return "";
  const Json* trainer = TrainerOf(job, tmpl["spec"]);
  if (trainer == nullptr) return "";
  for (const char* section : {"limits", "requests"}) {
    const Json value = OwnValue(*trainer, section, gpu_resource);
    if (value.is_null() || CountsTo(value, job.spec.gpus_per_pod)) continue;
    return "spec.template: container " + job.spec.trainer_container + " sets resources." + section + "[" + gpu_resource +
           "] to " + (value.is_string() ? value.get<std::string>() : value.dump()) + ", but spec.gpusPerPod is " +
           std::to_string(job.spec.gpus_per_pod) +
           " (the NCCL ranks per pod, which WORLD_SIZE counts): make them the same number, or leave " + gpu_resource +
           " out of the template and the operator sets it from gpusPerPod";
  }
  return "";
}

}  // namespace ncclop::desired

// Pod <job>-<index> of one attempt: the user's template plus what the contract adds
// (docs/contracts.md): labels and annotations, hostname/subdomain, the template's
// ServiceAccount (or the job's own when it names none), restartPolicy Never, the env contract in every container
// (the pod's own variables in env, the job's by envFrom from env_configmap.h), the trainer's
// GPUs, /dev/shm and ComputeDomain channel (pod_shape.h), and the sidecar as a native sidecar (initContainers[0], restartPolicy Always)
// so it starts before and outlives the trainer but never keeps the pod from completing.
#pragma once

#include <string>
#include <vector>

#include "contract/release_version.h"
#include "desired/metadata.h"

namespace ncclop::desired {

// Requests and limits of the injected sidecar, as Kubernetes quantities; "" leaves one unset.
// Limits by default, so the pods fit a namespace whose ResourceQuota demands them.
struct SidecarResources {
  std::string cpu_request = "10m";
  std::string memory_request = "32Mi";
  std::string ephemeral_storage_request = "16Mi";  // its log
  std::string cpu_limit = "500m";
  std::string memory_limit = "64Mi";
  std::string ephemeral_storage_limit = "128Mi";  // above the kubelet's log rotation (5 x 10Mi)
};

struct PodOptions {
  std::string sidecar_image = "nccl-sidecar:" + std::string(contract::kReleaseVersion);  // this release's sidecar
  // Always, so every pod start checks the pull credentials (a cached image is not a way
  // around them) and a re-pushed tag is noticed; "" = the API server's default for the tag
  // (IfNotPresent for a versioned one: nodes with preloaded images and no registry).
  std::string sidecar_image_pull_policy = "Always";
  SidecarResources sidecar_resources;
  // The extended resource the trainer's GPUs are counted in (pod_shape.h): the device plugin's
  // name, e.g. amd.com/gpu or a MIG profile's nvidia.com/mig-1g.10gb.
  std::string gpu_resource = "nvidia.com/gpu";
};

// The sidecar's securityContext: what Pod Security "restricted" asks (non-root, no privilege
// escalation, no capabilities, RuntimeDefault seccomp) and a read-only root filesystem. The
// user and group are the sidecar image's (65532).
Json SidecarSecurityContext();

// in_place: the pod restarts in place (failurePolicy.restartStrategy, docs/DESIGN.md "Restarting
// an attempt in place"): its trainer and sidecar get RestartAllContainers rules, the sidecar a
// state volume and --in-place-state, the pod annotation nccl.dev/restarts-before-attempt "0".
Json Pod(const api::NcclJob& job, int index, int attempt, const PodOptions& options, bool in_place = false);

// The variables of pod `index` of `attempt` that are its own, carried in each container's env
// (the job's, JobEnv in env_configmap.h, come by envFrom).
Json PodEnv(const api::NcclJob& job, int index, int attempt);

}  // namespace ncclop::desired

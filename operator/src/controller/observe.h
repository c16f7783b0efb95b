// The one "observe the job" step of the reconciler and the id publisher: read the job, its
// pods and its ConfigMap from the informer caches, parse them, and keep only what is this
// job's (pods whose owner reference carries its UID, a ConfigMap of its UID).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "api/nccl_job.h"
#include "kube/informer.h"
#include "observed/configmap.h"
#include "observed/pod.h"

namespace ncclop::controller {

inline const kube::Resource kNcclJobs{"nccl.dev", "v1alpha1", "nccljobs", true};
inline const kube::Resource kKueueWorkloads{"kueue.x-k8s.io", "v1beta2", "workloads", true};
inline const kube::Resource kKueueResourceFlavors{"kueue.x-k8s.io", "v1beta2", "resourceflavors", false};
inline const kube::Resource kSchedulingWorkloads{"scheduling.k8s.io", "v1alpha1", "workloads", true};
inline const kube::Resource kKueueWorkloadPriorityClasses{"kueue.x-k8s.io", "v1beta2", "workloadpriorityclasses", false};
inline const kube::Resource kPriorityClasses{"scheduling.k8s.io", "v1", "priorityclasses", false};

struct Caches {
  const kube::Informer* jobs;
  const kube::Informer* pods;        // indexed by kPodsByJob
  const kube::Informer* configmaps;  // filtered to the job label
  const kube::Informer* workloads = nullptr;  // Kueue Workloads (job label); null: Kueue not served
  // Whether the API server served scheduling.k8s.io/v1alpha1 Workloads at start (native gang
  // scheduling, desired/gang.h), and then their cache (job label): one deleted by hand is made again.
  bool scheduling_workloads_served = false;
  const kube::Informer* scheduling_workloads = nullptr;
  // The job's Service, Role, RoleBinding and ServiceAccount (job label, metadata only,
  // cache::TrimToOwnership): one deleted by hand is made again at once (Reconciler::ChildMissing).
  const kube::Informer* services = nullptr;
  const kube::Informer* roles = nullptr;
  const kube::Informer* role_bindings = nullptr;
  const kube::Informer* service_accounts = nullptr;
};
inline constexpr const char* kPodsByJob = "job";

struct JobObservation {
  kube::ObjectPtr object;  // the job as cached (its status is written back over it)
  api::NcclJob job;
  // Pods with the job's label and an owner reference to its UID: pods of a deleted job of the
  // same name are not this job's (the garbage collector removes them).
  std::vector<observed::ObservedPod> pods;
  // The ConfigMap as cached (the writers update it whole, conditional on its resourceVersion),
  // null when absent; `configmap` reads as absent when it is another job UID's.
  kube::ObjectPtr configmap_object;
  observed::ObservedConfigMap configmap;
};

// nullopt when the job is not in the cache (deleted) or has no usable metadata (logged).
std::optional<JobObservation> ObserveJob(const Caches& caches, const std::string& key);

}  // namespace ncclop::controller

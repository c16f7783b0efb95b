// The one "observe the job" step of the reconciler and the id publisher: read the job, its
// pods and its ConfigMap from the informer caches, parse them, and keep only what is this
// job's (pods whose owner reference carries its UID, a ConfigMap of its UID).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "api/nccl_job.h"
#include "desired/compute_domain.h"
#include "desired/gang_workload.h"
#include "kube/resource.h"
#include "kube/store.h"
#include "observed/configmap.h"
#include "observed/pod.h"
#include "observed/pod_memo.h"

namespace ncclop::controller {

inline const kube::Resource kNcclJobs{"nccl.dev", "v1alpha1", "nccljobs", true};
inline const kube::Resource kKueueWorkloads{"kueue.x-k8s.io", "v1beta2", "workloads", true};
inline const kube::Resource kKueueResourceFlavors{"kueue.x-k8s.io", "v1beta2", "resourceflavors", false};
// The gang scheduler's Workloads and PodGroups in the version the API server serves.
inline kube::Resource GangWorkloads(desired::GangApi api) {
  return {"scheduling.k8s.io", std::string(desired::GangApiVersion(api)), "workloads", true};
}
inline kube::Resource GangPodGroups(desired::GangApi api) {
  return {"scheduling.k8s.io", std::string(desired::GangApiVersion(api)), "podgroups", true};
}
inline const kube::Resource kKueueWorkloadPriorityClasses{"kueue.x-k8s.io", "v1beta2", "workloadpriorityclasses", false};
inline const kube::Resource kPriorityClasses{"scheduling.k8s.io", "v1", "priorityclasses", false};
inline const kube::Resource kComputeDomains{desired::kComputeDomainGroup, desired::kComputeDomainVersion,
                                            desired::kComputeDomainResource, true};

// The informers' caches the reconciler and the publisher read (the informers own them; the
// controller fills this from its watch table, controller/watches.h).
struct Caches {
  const kube::Store* jobs = nullptr;
  const kube::Store* pods = nullptr;        // indexed by kPodsByJob
  const kube::Store* configmaps = nullptr;  // filtered to the job label
  const kube::Store* kueue_workloads = nullptr;  // Kueue Workloads (job label); null: Kueue not served
  // Native gang scheduling (desired/gang_workload.h): the scheduling.k8s.io version the API server
  // served at start (kNone: none, and both caches null), its Workloads and, where the version has
  // them, its PodGroups (job label). One deleted by hand is made again.
  desired::GangApi gang_api = desired::GangApi::kNone;
  const kube::Store* gang_workloads = nullptr;
  const kube::Store* gang_podgroups = nullptr;  // indexed by kPodsByJob
  // The job's Service, Role, RoleBinding and ServiceAccount (job label, metadata only,
  // cache::TrimToOwnership): one deleted by hand is made again at once (Reconciler::ChildMissing).
  const kube::Store* services = nullptr;
  const kube::Store* roles = nullptr;
  const kube::Store* role_bindings = nullptr;
  const kube::Store* service_accounts = nullptr;
  // NVIDIA's ComputeDomains (job label, metadata only), for jobs with spec.computeDomain: one
  // deleted by hand is made again. Null where the API server does not serve them.
  const kube::Store* compute_domains = nullptr;
  // Nodes, trimmed to whether they take pods and what they declare (cache::TrimNode); null when
  // they cannot be listed.
  const kube::Store* nodes = nullptr;
  // Each pod version parsed once (observed/pod_memo.h); null: every read parses every pod.
  observed::PodMemo* pod_memo = nullptr;
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

// Kubernetes' native gang scheduling, in the API version the cluster serves (GangApi):
//   1.35, scheduling.k8s.io/v1alpha1: a Workload with one pod group "trainers" whose gang policy
//     has minCount = replicas; every pod names it in spec.workloadRef with the attempt as the
//     group's replica key.
//   1.36 (v1alpha2) and 1.37 (v1beta1): the Workload holds a pod group template "trainers"; each
//     attempt gets a PodGroup of its own (<job>-attempt-<n>) made from it, and every pod of the
//     attempt joins it by spec.schedulingGroup.podGroupName.
// Either way kube-scheduler binds the pods of one attempt all together or none of them, and a pod
// of an old attempt never counts toward a new one's quorum. With spec.gangTopologyKey (PodGroup
// versions only) the template and each PodGroup carry schedulingConstraints.topology [{key}]:
// kube-scheduler (feature gate TopologyAwareWorkloadScheduling) puts every pod of the group in one
// domain of that node label. The job owns the Workload and the
// PodGroups, so the garbage collector deletes them with the job.
#pragma once

#include <string_view>

#include "desired/metadata.h"

namespace ncclop::desired {

enum class GangApi { kNone, kV1alpha1, kV1alpha2, kV1beta1 };

// Newest first: the order the operator asks the API server in.
inline constexpr GangApi kGangApis[] = {GangApi::kV1beta1, GangApi::kV1alpha2, GangApi::kV1alpha1};

// "v1beta1", ...; "" for kNone.
std::string_view GangApiVersion(GangApi api);
// Whether the version has PodGroup objects (an attempt's group is one); v1alpha1 has replica keys.
bool GangHasPodGroups(GangApi api);

// Whether the job's pods are gang scheduled: spec.gangScheduling Auto where the API server serves
// a gang API, Required always, Disabled never.
bool UsesGangScheduling(const api::NcclJob& job, GangApi served);

// The job's Workload in `api` (not kNone).
Json GangWorkload(GangApi api, const api::NcclJob& job);

// Whether an existing Workload of the job's name can serve it: the same single group or template
// with the same gang and topology constraint (a deleted job of the same name may have left one of
// another shape, and groups are immutable).
bool GangWorkloadFits(GangApi api, const Json& existing, const api::NcclJob& job);

// Whether the Workload the API server returned kept the job's topology constraint: an API server
// whose gate TopologyAwareWorkloadScheduling is off drops schedulingConstraints without a word.
bool GangWorkloadKeptConstraints(GangApi api, const Json& workload, const api::NcclJob& job);

// The PodGroup of `attempt` (GangHasPodGroups(api)): the template's gang, minCount = replicas, and
// its topology constraint.
Json GangPodGroup(GangApi api, const api::NcclJob& job, int attempt);

// Whether an existing PodGroup of that name can serve the attempt: made from the job's Workload's
// template, with the same gang and topology constraint.
bool GangPodGroupFits(GangApi api, const Json& existing, const api::NcclJob& job);

// Makes a pod of `attempt` (desired::Pod's output) a member of the attempt's gang.
void JoinGang(GangApi api, Json& pod, const api::NcclJob& job, int attempt);

}  // namespace ncclop::desired

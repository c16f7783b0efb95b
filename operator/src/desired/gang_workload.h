// Kubernetes' native gang scheduling (1.35+, alpha: feature gates GenericWorkload and
// GangScheduling, API scheduling.k8s.io/v1alpha1). A job's Workload has one pod group with a
// gang policy of minCount = replicas; every pod names it in spec.workloadRef, with the attempt
// as the group's replica key, so kube-scheduler binds the pods of one attempt all together or
// none of them (a pod of an old attempt never counts toward a new one's quorum). One Workload
// serves every attempt of the job; the job owns it, so the garbage collector deletes it with
// the job.
#pragma once

#include "desired/metadata.h"

namespace ncclop::desired {

// Whether the job's pods are gang scheduled: spec.gangScheduling Auto where `served` (the API
// server serves scheduling.k8s.io/v1alpha1 Workloads), Required always, Disabled never.
bool UsesGangScheduling(const api::NcclJob& job, bool served);

// The scheduling.k8s.io/v1alpha1 Workload of the job.
Json GangWorkload(const api::NcclJob& job);

// Whether an existing Workload of the job's name can serve it: same pod groups (they are
// immutable, and a deleted job of the same name may have left one with another minCount).
bool GangWorkloadFits(const Json& existing, const api::NcclJob& job);

// Sets spec.workloadRef of a pod of `attempt` (desired::Pod's output) to the job's Workload.
void ReferenceGangWorkload(Json& pod, const api::NcclJob& job, int attempt);

}  // namespace ncclop::desired

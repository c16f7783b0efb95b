// The Kueue Workload (kueue.x-k8s.io/v1beta2) of a job labelled kueue.x-k8s.io/queue-name:
// one pod set of `replicas` pods shaped like the job's pods, the sidecar included, so the
// quota counts what will run. Kueue admits it whole or not at all; the operator creates the
// pods of an attempt only while it is admitted, and keeps the one Workload for every attempt,
// so a restart keeps its place (README, "Shared clusters", says why this and not pod groups).
#pragma once

#include "desired/pod.h"

namespace ncclop::desired {

inline constexpr const char* kWorkloadPodSetName = "trainers";

Json Workload(const api::NcclJob& job, const PodOptions& options);

}  // namespace ncclop::desired

// The Kueue Workload (kueue.x-k8s.io/v1beta2) of a job labelled kueue.x-k8s.io/queue-name:
// one pod set of `replicas` pods shaped like the job's pods, the sidecar included, so the
// quota counts what will run. Kueue admits it whole or not at all; the operator creates the
// pods of an attempt only while it is admitted, and keeps the one Workload for every attempt,
// so a restart keeps its place (README, "Shared clusters", says why this and not pod groups).
#pragma once

#include "api/time.h"
#include "desired/pod.h"

namespace ncclop::desired {

inline constexpr const char* kWorkloadPodSetName = "trainers";

Json Workload(const api::NcclJob& job, const PodOptions& options);

// A JSON patch of the status of an evicted Workload (as observed, with its resourceVersion,
// which the patch tests) that clears its quota reservation the way Kueue's job integrations
// do once the job has stopped: status.admission removed; QuotaReserved=False (reason Pending,
// the eviction's message); Requeued set from the eviction (True only for Preempted and
// NodeFailures, which Kueue requeues at once; for others, e.g. Deactivated, Kueue sets it True
// when the cause is gone); a True Admitted becomes False (NoReservation) and its time admitted
// is added to status.accumulatedPastExecutionTimeSeconds.
Json ReleaseQuotaPatch(const Json& workload, api::Time now);

}  // namespace ncclop::desired

// The Kueue Workload (kueue.x-k8s.io/v1beta2) of a job labelled kueue.x-k8s.io/queue-name:
// one pod set of `replicas` pods shaped like the job's pods, the sidecar included, so the
// quota counts what will run, with the job's topology request (desired/kueue_topology.h). Kueue admits it whole or not at all; the operator creates the
// pods of an attempt only while it is admitted, and keeps the one Workload for every attempt,
// so a restart keeps its place (docs/shared-clusters.md says why this and not pod groups).
#pragma once

#include <vector>

#include "api/time.h"
#include "desired/pod.h"

namespace ncclop::desired {

inline constexpr const char* kKueuePodSetName = "trainers";

Json KueueWorkload(const api::NcclJob& job, const PodOptions& options);

// A JSON patch of the status of an evicted Workload (as observed, with its resourceVersion,
// which the patch tests) that clears its quota reservation the way Kueue's job integrations
// do once the job has stopped: status.admission removed; QuotaReserved=False (reason Pending,
// the eviction's message); Requeued set from the eviction (True only for Preempted and
// NodeFailures, which Kueue requeues at once; for others, e.g. Deactivated, Kueue sets it True
// when the cause is gone); a True Admitted becomes False (NoReservation) and its time admitted
// is added to status.accumulatedPastExecutionTimeSeconds.
Json ReleaseQuotaPatch(const Json& workload, api::Time now);

// A merge patch of the Workload (as observed; its resourceVersion makes the patch conditional)
// that sets spec.active, marking (active false) or unmarking (true) it with the annotation
// nccl.dev/suspended: spec.suspend gives the admission back (policy/admission.h).
Json SetActivePatch(const Json& workload, bool active);

// A JSON patch of the Workload's status (as observed, with its resourceVersion, which the patch
// tests) that sets its PodsReady condition (policy/admission.h, PodsReadyFor), the other
// conditions kept; lastTransitionTime moves only when the status does.
Json SetPodsReadyPatch(const Json& workload, bool ready, const std::string& reason, const std::string& message, api::Time now);

// Where Kueue's admission placed the job, as Kueue's own job integrations apply it when they
// start a job: each admitted ResourceFlavor's spec.nodeLabels join the pod's nodeSelector and
// its spec.tolerations the pod's tolerations (each once). Kueue assigns a flavor only where the
// pod's own nodeSelector agrees with its labels, so no label of the template is overridden.
// `flavors`: the ResourceFlavor objects.
void ApplyFlavors(Json& pod, const std::vector<Json>& flavors);

}  // namespace ncclop::desired

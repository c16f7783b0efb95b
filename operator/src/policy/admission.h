// Kueue admission (observed/workload.h is what the operator reads of a job's Workload).
// An evicted Workload keeps its quota reserved until the job's integration (here: the
// operator) says the job stopped: ReleasesEvictedQuota decides when.
#pragma once

#include <optional>

#include "observed/workload.h"

namespace ncclop::policy {

// Kueue evicted the Workload and still reserves its quota, so it is neither running nor queued:
// as Kueue's own job integrations do, the operator clears the reservation (status.admission
// and QuotaReserved=False, desired::ReleaseQuotaPatch) once the job has stopped, i.e. no pod of
// the job is left (terminating ones included), and Kueue queues the Workload again.
bool ReleasesEvictedQuota(const observed::ObservedWorkload& workload, bool job_finished, bool pods_left);

// spec.suspend gives the Workload's admission (or its place in the queue) back, the way a Kueue
// user stops a workload: the operator deactivates it (spec.active false, marked with the
// annotation nccl.dev/suspended); Kueue evicts it and, once the pods are gone, the quota is
// released as after any eviction. Resuming activates it again (only one the operator
// deactivated: a Workload someone else deactivated stays so) and the job waits for admission.
// Returns the spec.active to write, if any.
std::optional<bool> WorkloadActiveFor(const observed::ObservedWorkload& workload, bool suspend, bool job_finished);

}  // namespace ncclop::policy

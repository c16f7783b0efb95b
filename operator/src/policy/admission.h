// Kueue admission (observed/kueue_workload.h is what the operator reads of a job's Workload).
// An evicted Workload keeps its quota reserved until the job's integration (here: the
// operator) says the job stopped: ReleasesEvictedQuota decides when.
#pragma once

#include <optional>
#include <string>

#include "observed/kueue_workload.h"

namespace ncclop::policy {

// Kueue evicted the Workload and still reserves its quota, so it is neither running nor queued:
// as Kueue's own job integrations do, the operator clears the reservation (status.admission
// and QuotaReserved=False, desired::ReleaseQuotaPatch) once the job has stopped, i.e. no pod of
// the job is left (terminating ones included), and Kueue queues the Workload again.
bool ReleasesEvictedQuota(const observed::ObservedKueueWorkload& workload, bool job_finished, bool pods_left);

// spec.suspend gives the Workload's admission (or its place in the queue) back, the way a Kueue
// user stops a workload: the operator deactivates it (spec.active false, marked with the
// annotation nccl.dev/suspended); Kueue evicts it and, once the pods are gone, the quota is
// released as after any eviction. Resuming activates it again (only one the operator
// deactivated: a Workload someone else deactivated stays so) and the job waits for admission.
// Returns the spec.active to write, if any.
std::optional<bool> KueueWorkloadActiveFor(const observed::ObservedKueueWorkload& workload, bool suspend,
                                           bool job_finished);

// The Workload's PodsReady condition, as Kueue's own job integrations keep it (its job
// framework's generatePodsReadyCondition, v0.17.0): Kueue's waitForPodsReady evicts an admitted
// Workload whose PodsReady is not True within its timeout (counted from Admitted; after a pod
// failed, from PodsReady=False WaitForRecovery, and only if a recoveryTimeout is set), and with
// blockAdmission admits nothing else until then.
struct KueuePodsReady {
  bool ready = false;
  std::string reason;  // Started, Recovered (True); WaitForStart, WaitForRecovery (False)
  std::string message;
  bool operator==(const KueuePodsReady&) const = default;
};

// The PodsReady condition to write, or none when the Workload already says it (or has ended, or
// the job has). Ready when `ready_pods` (the pods of the current attempt that are ready or whose
// trainer succeeded) reach `replicas` while admitted; a True condition that stops holding (an
// attempt restarting) becomes WaitForRecovery, and True again after it is Recovered. Not admitted:
// WaitForStart, written only over a condition that says otherwise (no write per queued job).
std::optional<KueuePodsReady> PodsReadyFor(const observed::ObservedKueueWorkload& workload, bool job_finished,
                                           int ready_pods, int replicas);

}  // namespace ncclop::policy

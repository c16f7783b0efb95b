// What the operator reads of a job's Kueue Workload (desired/workload.h): whether Kueue has
// admitted it, why it still waits, whether it was evicted, whether it is marked finished.
// An evicted Workload keeps its quota reserved until the job's integration (here: the
// operator) says the job stopped: ReleasesEvictedQuota decides when.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ncclop::policy {

struct ObservedWorkload {
  bool exists = false;
  bool admitted = false;       // condition Admitted True and not Evicted
  bool finished = false;       // condition Finished True
  std::string cluster_queue;   // status.admission.clusterQueue
  std::string waiting;         // why it waits: Kueue's QuotaReserved=False message, if any
  std::string eviction;        // Evicted=True: "<reason>: <message>"
  bool evicted = false;        // condition Evicted True
  bool quota_reserved = false;  // condition QuotaReserved True
  bool active = true;           // spec.active (false: deactivated, out of the queue)
  bool deactivated_for_suspend = false;  // annotation nccl.dev/suspended: the operator deactivated it
  // The ResourceFlavors of the admission (status.admission.podSetAssignments[].flavors), each once.
  std::vector<std::string> flavors;
};

ObservedWorkload ObserveWorkload(const nlohmann::json& workload);

// Kueue evicted the Workload and still reserves its quota, so it is neither running nor queued:
// as Kueue's own job integrations do, the operator clears the reservation (status.admission
// and QuotaReserved=False, desired::ReleaseQuotaPatch) once the job has stopped, i.e. no pod of
// the job is left (terminating ones included), and Kueue queues the Workload again.
bool ReleasesEvictedQuota(const ObservedWorkload& workload, bool job_finished, bool pods_left);

// spec.suspend gives the Workload's admission (or its place in the queue) back, the way a Kueue
// user stops a workload: the operator deactivates it (spec.active false, marked with the
// annotation nccl.dev/suspended); Kueue evicts it and, once the pods are gone, the quota is
// released as after any eviction. Resuming activates it again (only one the operator
// deactivated: a Workload someone else deactivated stays so) and the job waits for admission.
// Returns the spec.active to write, if any.
std::optional<bool> WorkloadActiveFor(const ObservedWorkload& workload, bool suspend, bool job_finished);

}  // namespace ncclop::policy

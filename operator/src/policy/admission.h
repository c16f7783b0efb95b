// What the operator reads of a job's Kueue Workload (desired/workload.h): whether Kueue has
// admitted it, why it still waits, whether it was evicted, whether it is marked finished.
// An evicted Workload keeps its quota reserved until the job's integration (here: the
// operator) says the job stopped: ReleasesEvictedQuota decides when.
#pragma once

#include <string>

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
};

ObservedWorkload ObserveWorkload(const nlohmann::json& workload);

// Kueue evicted the Workload and still reserves its quota, so it is neither running nor queued:
// as Kueue's own job integrations do, the operator clears the reservation (status.admission
// and QuotaReserved=False, desired::ReleaseQuotaPatch) once the job has stopped, i.e. no pod of
// the job is left (terminating ones included), and Kueue queues the Workload again.
bool ReleasesEvictedQuota(const ObservedWorkload& workload, bool job_finished, bool pods_left);

}  // namespace ncclop::policy

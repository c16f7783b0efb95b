// What the operator reads of a job's Kueue Workload (desired/workload.h): whether Kueue has
// admitted it, why it still waits, whether it was evicted, whether it is marked finished.
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
};

ObservedWorkload ObserveWorkload(const nlohmann::json& workload);

}  // namespace ncclop::policy

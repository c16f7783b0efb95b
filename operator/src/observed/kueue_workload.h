// What the operator reads of a job's Kueue Workload (desired/kueue_workload.h): whether Kueue has
// admitted it, why it still waits, whether it was evicted, whether it is marked finished, whether
// it is active, the ResourceFlavors it was admitted to, whether it was admitted with a topology. Pure.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ncclop::observed {

struct ObservedKueueWorkload {
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
  // Its PodsReady condition (Kueue's waitForPodsReady reads it; the operator writes it,
  // policy/admission.h PodsReadyFor): "True", "False", or "" when it has none; and its reason.
  std::string pods_ready_status;
  std::string pods_ready_reason;
  // The ResourceFlavors of the admission (status.admission.podSetAssignments[].flavors), each once.
  std::vector<std::string> flavors;
  // The admission places the pods by topology (a podSetAssignment has a topologyAssignment):
  // Kueue's TopologyUngater places them (desired/kueue_topology.h, GateForTopology).
  bool topology_assigned = false;
};

ObservedKueueWorkload ObserveKueueWorkload(const nlohmann::json& workload);

}  // namespace ncclop::observed

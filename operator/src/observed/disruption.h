// Whether a pod ended because of something done to it (preempted, evicted, its node shut down
// or went away) rather than by its own failure: a fact read from its status. Such an attempt
// is restarted without using failurePolicy.maxRestarts (policy/failure_policy.h);
// status.disruptions counts them (failurePolicy.maxDisruptions caps them when set).
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace ncclop::observed {

struct Disruption {
  std::string kind;     // one word for events and metrics: Preemption, Eviction, NodeLost, NodeShutdown, ...
  std::string account;  // for people: "evicted through the Eviction API (EvictionByEvictionAPI)"
  bool operator==(const Disruption&) const = default;
};

// From a pod's status: the DisruptionTarget condition (set by the scheduler, the Eviction API,
// the taint manager, pod garbage collection or the kubelet before the pod is deleted or
// stopped), or the kubelet's own reasons on a Failed pod (Evicted, Preempting, node shutdown).
std::optional<Disruption> DisruptionOf(const nlohmann::json& pod_status);

}  // namespace ncclop::observed

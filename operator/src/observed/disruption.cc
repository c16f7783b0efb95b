#include "observed/disruption.h"

#include <string_view>

#include "observed/fields.h"

namespace ncclop::observed {
namespace {

using Json = nlohmann::json;

struct Known {
  std::string_view reason;
  std::string_view kind;
  std::string_view account;
};

// DisruptionTarget reasons (k8s.io/api core/v1 and the controllers that set them).
constexpr Known kConditionReasons[] = {
    {"PreemptionByScheduler", "Preemption", "preempted by the scheduler for a pod of higher priority"},
    {"PreemptionByKubeScheduler", "Preemption", "preempted by the scheduler for a pod of higher priority"},
    {"EvictionByEvictionAPI", "Eviction", "evicted through the Eviction API, e.g. by a node drain"},
    {"DeletionByTaintManager", "NodeLost", "deleted by the taint manager: its node is not ready or tainted NoExecute"},
    {"DeletionByPodGC", "NodeLost", "deleted by pod garbage collection: its node is gone"},
    {"TerminationByKubelet", "NodePressure", "stopped by the kubelet: node pressure or node shutdown"},
};

// Pod status reasons the kubelet writes on a pod it failed itself.
constexpr Known kKubeletReasons[] = {
    {"Evicted", "NodePressure", "evicted by the kubelet: node pressure"},
    {"Preempting", "Preemption", "preempted by the kubelet for a critical pod"},
    {"Terminated", "NodeShutdown", "stopped by a node shutdown"},
    {"Shutdown", "NodeShutdown", "stopped by a node shutdown"},
    {"NodeShutdown", "NodeShutdown", "stopped by a node shutdown"},
    {"UnexpectedAdmissionError", "NodeAdmission", "rejected by its node's admission"},
};

template <std::size_t N>
const Known* Lookup(const Known (&table)[N], const std::string& reason) {
  for (const Known& k : table) {
    if (k.reason == reason) return &k;
  }
  return nullptr;
}

Disruption Describe(const Known& k) {
  return {std::string(k.kind), std::string(k.account) + " (" + std::string(k.reason) + ")"};
}

}  // namespace

std::optional<Disruption> DisruptionOf(const Json& pod_status) {
  if (!pod_status.is_object()) return std::nullopt;
  if (auto it = pod_status.find("conditions"); it != pod_status.end() && it->is_array()) {
    for (const Json& c : *it) {
      if (!c.is_object() || StringField(c, "type") != "DisruptionTarget" || StringField(c, "status") != "True") continue;
      const std::string reason = StringField(c, "reason");
      if (const Known* k = Lookup(kConditionReasons, reason)) return Describe(*k);
      return Disruption{"Disruption", reason.empty() ? "disrupted" : "disrupted (" + reason + ")"};
    }
  }
  if (StringField(pod_status, "phase") != "Failed") return std::nullopt;
  if (const Known* k = Lookup(kKubeletReasons, StringField(pod_status, "reason"))) return Describe(*k);
  return std::nullopt;
}

}  // namespace ncclop::observed

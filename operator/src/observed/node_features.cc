#include "observed/node_features.h"

#include "contract/names.h"
#include "observed/fields.h"

namespace ncclop::observed {
namespace {

bool Declares(const nlohmann::json& node, std::string_view feature) {
  for (const nlohmann::json& f : ArrayField(ObjectField(node, "status"), "declaredFeatures")) {
    if (f.is_string() && f.get<std::string>() == feature) return true;
  }
  return false;
}

bool TakesPods(const nlohmann::json& node) {
  const nlohmann::json& spec = ObjectField(node, "spec");
  auto it = spec.find("unschedulable");
  return it == spec.end() || !it->is_boolean() || !it->get<bool>();
}

}  // namespace

bool EveryNodeRestartsInPlace(const std::vector<kube::ObjectPtr>& nodes) {
  bool any = false;
  for (const kube::ObjectPtr& node : nodes) {
    if (!node || !TakesPods(*node)) continue;
    if (!Declares(*node, contract::kNodeFeatureRestartAllContainers)) return false;
    any = true;
  }
  return any;
}

}  // namespace ncclop::observed

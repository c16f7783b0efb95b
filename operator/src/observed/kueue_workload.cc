#include "observed/kueue_workload.h"

#include <algorithm>

#include "contract/names.h"
#include "observed/fields.h"

namespace ncclop::observed {

using Json = nlohmann::json;

ObservedKueueWorkload ObserveKueueWorkload(const Json& workload) {
  ObservedKueueWorkload out;
  if (!workload.is_object()) return out;
  out.exists = true;
  const Json status = workload.value("status", Json::object());
  bool admitted = false;
  for (const Json& c : status.value("conditions", Json::array())) {
    if (!c.is_object()) continue;
    const std::string type = StringField(c, "type");
    const bool is_true = StringField(c, "status") == "True";
    if (type == "Admitted") admitted = is_true;
    if (type == "Finished") out.finished = is_true;
    if (type == "QuotaReserved") out.quota_reserved = is_true;
    if (type == "QuotaReserved" && !is_true) out.waiting = StringField(c, "message");
    if (type == "Evicted") out.evicted = is_true;
    if (type == "PodsReady") {
      out.pods_ready_status = StringField(c, "status");
      out.pods_ready_reason = StringField(c, "reason");
    }
    if (type == "Evicted" && is_true) out.eviction = StringField(c, "reason") + ": " + StringField(c, "message");
  }
  out.admitted = admitted && !out.evicted;
  if (auto admission = status.find("admission"); admission != status.end() && admission->is_object()) {
    out.cluster_queue = StringField(*admission, "clusterQueue");
    for (const Json& assignment : ArrayField(*admission, "podSetAssignments")) {
      if (!ObjectField(assignment, "topologyAssignment").empty()) out.topology_assigned = true;
      for (const auto& [resource, flavor] : ObjectField(assignment, "flavors").items()) {
        if (!flavor.is_string()) continue;
        const std::string name = flavor.get<std::string>();
        if (std::find(out.flavors.begin(), out.flavors.end(), name) == out.flavors.end()) out.flavors.push_back(name);
      }
    }
  }
  const Json& spec = ObjectField(workload, "spec");
  if (auto active = spec.find("active"); active != spec.end() && active->is_boolean()) out.active = active->get<bool>();
  out.deactivated_for_suspend = ObjectField(Metadata(workload), "annotations").contains(std::string(contract::kAnnotationSuspended));
  return out;
}

}  // namespace ncclop::observed

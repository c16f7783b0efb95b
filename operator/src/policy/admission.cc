#include "policy/admission.h"

#include <algorithm>

#include "contract/names.h"

namespace ncclop::policy {
namespace {

using Json = nlohmann::json;

std::string Str(const Json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

ObservedWorkload ObserveWorkload(const Json& workload) {
  ObservedWorkload out;
  if (!workload.is_object()) return out;
  out.exists = true;
  const Json status = workload.value("status", Json::object());
  bool admitted = false;
  for (const Json& c : status.value("conditions", Json::array())) {
    if (!c.is_object()) continue;
    const std::string type = Str(c, "type");
    const bool is_true = Str(c, "status") == "True";
    if (type == "Admitted") admitted = is_true;
    if (type == "Finished") out.finished = is_true;
    if (type == "QuotaReserved") out.quota_reserved = is_true;
    if (type == "QuotaReserved" && !is_true) out.waiting = Str(c, "message");
    if (type == "Evicted") out.evicted = is_true;
    if (type == "Evicted" && is_true) out.eviction = Str(c, "reason") + ": " + Str(c, "message");
  }
  out.admitted = admitted && !out.evicted;
  if (auto admission = status.find("admission"); admission != status.end() && admission->is_object()) {
    out.cluster_queue = Str(*admission, "clusterQueue");
    for (const Json& assignment : admission->value("podSetAssignments", Json::array())) {
      if (!assignment.is_object()) continue;
      const Json flavors = assignment.value("flavors", Json::object());
      if (!flavors.is_object()) continue;
      for (const auto& [resource, flavor] : flavors.items()) {
        if (!flavor.is_string()) continue;
        const std::string name = flavor.get<std::string>();
        if (std::find(out.flavors.begin(), out.flavors.end(), name) == out.flavors.end()) out.flavors.push_back(name);
      }
    }
  }
  const Json spec = workload.value("spec", Json::object());
  if (auto active = spec.find("active"); active != spec.end() && active->is_boolean()) out.active = active->get<bool>();
  const Json annotations = workload.value("metadata", Json::object()).value("annotations", Json::object());
  out.deactivated_for_suspend = annotations.is_object() && annotations.contains(std::string(contract::kAnnotationSuspended));
  return out;
}

bool ReleasesEvictedQuota(const ObservedWorkload& workload, bool job_finished, bool pods_left) {
  // A finished job's Workload is marked Finished instead, which releases the quota too.
  return workload.exists && workload.evicted && workload.quota_reserved && !workload.finished && !job_finished &&
         !pods_left;
}

std::optional<bool> WorkloadActiveFor(const ObservedWorkload& workload, bool suspend, bool job_finished) {
  if (!workload.exists || workload.finished || job_finished) return std::nullopt;
  if (suspend && workload.active) return false;
  if (!suspend && !workload.active && workload.deactivated_for_suspend) return true;
  return std::nullopt;
}

}  // namespace ncclop::policy

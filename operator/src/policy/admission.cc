#include "policy/admission.h"

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
  }
  return out;
}

bool ReleasesEvictedQuota(const ObservedWorkload& workload, bool job_finished, bool pods_left) {
  // A finished job's Workload is marked Finished instead, which releases the quota too.
  return workload.exists && workload.evicted && workload.quota_reserved && !workload.finished && !job_finished &&
         !pods_left;
}

}  // namespace ncclop::policy

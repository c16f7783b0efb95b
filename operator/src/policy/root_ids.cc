#include "policy/root_ids.h"

#include "contract/bootstrap_roots.h"
#include "contract/names.h"
#include "contract/unique_id.h"

namespace ncclop::policy {

RootIds CollectRootIds(const api::NcclJob& job, const observed::AttemptView& view) {
  const api::NcclJobSpec& spec = job.spec;
  const int attempt = view.attempt;
  std::string list;
  for (int root_pod : contract::BootstrapRootPods(spec.bootstrap_roots, spec.replicas, spec.LocalWorldSize())) {
    const std::string name = contract::PodName(job.name, root_pod);
    auto missing = [&](const std::string& why) { return RootIds{std::nullopt, "root pod " + name + " " + why}; };
    auto it = view.by_index.find(root_pod);
    if (it == view.by_index.end()) {
      for (const observed::ObservedPod* stale : view.stale) {
        if (stale->name == name) return missing("is of another attempt");
      }
      return missing("is not in the cache");
    }
    const observed::ObservedPod& p = *it->second;
    if (p.terminating) return missing("is being deleted");
    if (p.failed) return missing("failed");
    if (p.unique_id.empty()) return missing("has not reported an id");
    if (p.unique_id_attempt != attempt) return missing("reported an id of another attempt");
    if (p.unique_id.find(contract::kIdListSeparator) != std::string::npos) return missing("reported more than one id");
    if (!list.empty()) list += contract::kIdListSeparator;
    list += p.unique_id;
  }
  return {list, {}};
}

std::vector<std::string> SplitIdList(const std::string& list) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    size_t comma = list.find(contract::kIdListSeparator, start);
    out.push_back(list.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

}  // namespace ncclop::policy

#include "desired/configmap.h"

#include "contract/names.h"

namespace ncclop::desired {

Json ConfigMap(const api::NcclJob& job, int attempt, const std::optional<PublishedId>& id) {
  Json data = {{std::string(contract::kDataAttempt), std::to_string(attempt)},
               {std::string(contract::kDataJobUid), job.uid}};
  if (id) {
    data[std::string(contract::kDataUniqueId)] = id->unique_id;
    data[std::string(contract::kDataPublishedAt)] = id->published_at;
  }
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata", ObjectMetadata(job, contract::ConfigMapName(job.name))},
          {"data", std::move(data)}};
}

}  // namespace ncclop::desired

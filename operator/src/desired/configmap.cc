#include "desired/configmap.h"

#include "api/names.h"

namespace ncclop::desired {

Json ConfigMap(const api::NcclJob& job, int attempt, const std::optional<PublishedId>& id) {
  Json data = {{std::string(api::kDataAttempt), std::to_string(attempt)},
               {std::string(api::kDataJobUid), job.uid}};
  if (id) {
    data[std::string(api::kDataUniqueId)] = id->unique_id;
    data[std::string(api::kDataPublishedAt)] = id->published_at;
  }
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata", ObjectMetadata(job, api::ConfigMapName(job.name))},
          {"data", std::move(data)}};
}

}  // namespace ncclop::desired

#include "observed/configmap.h"

#include "contract/names.h"
#include "observed/fields.h"

namespace ncclop::observed {

ObservedConfigMap ObserveConfigMap(const nlohmann::json& configmap) {
  ObservedConfigMap out;
  if (!configmap.is_object()) return out;
  out.exists = true;
  const nlohmann::json& data = ObjectField(configmap, "data");
  out.attempt = CountField(data, contract::kDataAttempt, 0);
  out.has_id = !StringField(data, contract::kDataUniqueId).empty();
  out.published_at = StringField(data, contract::kDataPublishedAt);
  out.job_uid = StringField(data, contract::kDataJobUid);
  return out;
}

ObservedConfigMap ObserveConfigMapOf(const nlohmann::json& configmap, const std::string& job_uid) {
  ObservedConfigMap out = ObserveConfigMap(configmap);
  return out.job_uid == job_uid ? out : ObservedConfigMap{};
}

}  // namespace ncclop::observed

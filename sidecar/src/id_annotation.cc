#include "id_annotation.h"

#include "contract/names.h"
#include "contract/unique_id.h"

namespace sidecar {

nlohmann::json BuildIdAnnotationPatch(int64_t attempt, const std::string& raw_id) {
  return {{"metadata",
           {{"annotations",
             {{std::string(contract::kAnnotationUniqueId), contract::Base64Encode(raw_id)},
              {std::string(contract::kAnnotationUniqueIdAttempt), std::to_string(attempt)}}}}}};
}

bool PodHasIdAnnotation(const nlohmann::json& pod, int64_t attempt, const std::string& raw_id) {
  const nlohmann::json* annotations = nullptr;
  if (auto meta = pod.find("metadata"); meta != pod.end() && meta->is_object()) {
    if (auto a = meta->find("annotations"); a != meta->end() && a->is_object()) annotations = &*a;
  }
  if (!annotations) return false;
  auto id = annotations->find(contract::kAnnotationUniqueId);
  auto at = annotations->find(contract::kAnnotationUniqueIdAttempt);
  return id != annotations->end() && at != annotations->end() && id->is_string() && at->is_string() &&
         id->get<std::string>() == contract::Base64Encode(raw_id) && at->get<std::string>() == std::to_string(attempt);
}

}  // namespace sidecar

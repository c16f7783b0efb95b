#include "id_annotation.h"

#include "contract/names.h"
#include "contract/unique_id.h"
#include "pod_annotations.h"

namespace sidecar {

nlohmann::json BuildIdAnnotationPatch(int64_t attempt, const std::string& raw_id) {
  return AnnotationPatch({{contract::kAnnotationUniqueId, contract::Base64Encode(raw_id)},
                          {contract::kAnnotationUniqueIdAttempt, std::to_string(attempt)}});
}

bool PodHasIdAnnotation(const nlohmann::json& pod, int64_t attempt, const std::string& raw_id) {
  return PodAnnotation(pod, contract::kAnnotationUniqueId) == contract::Base64Encode(raw_id) &&
         PodAnnotation(pod, contract::kAnnotationUniqueIdAttempt) == std::to_string(attempt);
}

std::optional<std::string> IdAnnotatedFor(const nlohmann::json& pod, int64_t attempt) {
  if (PodAnnotation(pod, contract::kAnnotationUniqueIdAttempt) != std::to_string(attempt)) return std::nullopt;
  std::optional<std::string> id = PodAnnotation(pod, contract::kAnnotationUniqueId);
  return id ? contract::DecodeUniqueId(*id) : std::nullopt;
}

}  // namespace sidecar

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

namespace {

// The pod's annotation `key` when it is a string, else nullopt.
std::optional<std::string> Annotation(const nlohmann::json& pod, std::string_view key) {
  auto meta = pod.find("metadata");
  if (meta == pod.end() || !meta->is_object()) return std::nullopt;
  auto annotations = meta->find("annotations");
  if (annotations == meta->end() || !annotations->is_object()) return std::nullopt;
  auto value = annotations->find(std::string(key));
  if (value == annotations->end() || !value->is_string()) return std::nullopt;
  return value->get<std::string>();
}

}  // namespace

bool PodHasIdAnnotation(const nlohmann::json& pod, int64_t attempt, const std::string& raw_id) {
  return Annotation(pod, contract::kAnnotationUniqueId) == contract::Base64Encode(raw_id) &&
         Annotation(pod, contract::kAnnotationUniqueIdAttempt) == std::to_string(attempt);
}

std::optional<std::string> IdAnnotatedFor(const nlohmann::json& pod, int64_t attempt) {
  if (Annotation(pod, contract::kAnnotationUniqueIdAttempt) != std::to_string(attempt)) return std::nullopt;
  std::optional<std::string> id = Annotation(pod, contract::kAnnotationUniqueId);
  return id ? contract::DecodeUniqueId(*id) : std::nullopt;
}

}  // namespace sidecar

#include "pod_annotations.h"

namespace sidecar {

nlohmann::json AnnotationPatch(const Annotations& annotations) {
  nlohmann::json values = nlohmann::json::object();
  for (const auto& [key, value] : annotations) values[std::string(key)] = value;
  return {{"metadata", {{"annotations", values}}}};
}

std::optional<std::string> PodAnnotation(const nlohmann::json& pod, std::string_view key) {
  auto meta = pod.find("metadata");
  if (meta == pod.end() || !meta->is_object()) return std::nullopt;
  auto annotations = meta->find("annotations");
  if (annotations == meta->end() || !annotations->is_object()) return std::nullopt;
  auto value = annotations->find(std::string(key));
  if (value == annotations->end() || !value->is_string()) return std::nullopt;
  return value->get<std::string>();
}

}  // namespace sidecar

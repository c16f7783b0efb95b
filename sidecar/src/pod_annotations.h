// A sidecar writes to its own pod only through annotations, as a JSON merge patch that touches
// nothing else on the pod; the id (id_annotation.h) and progress (progress_annotator.h) both. Pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace sidecar {

using Annotations = std::vector<std::pair<std::string_view, std::string>>;

// {"metadata": {"annotations": {key: value, ...}}}.
nlohmann::json AnnotationPatch(const Annotations& annotations);

// The pod's annotation `key` when it is a string, else nullopt.
std::optional<std::string> PodAnnotation(const nlohmann::json& pod, std::string_view key);

}  // namespace sidecar

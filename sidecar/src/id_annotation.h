// The root sidecar's report: annotations on its own pod (contract/names.h), as a JSON merge
// patch so it touches nothing else on the pod. Pure.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace sidecar {

nlohmann::json BuildIdAnnotationPatch(int64_t attempt, const std::string& raw_id);

// True when the pod already carries exactly this report (then there is nothing to patch).
bool PodHasIdAnnotation(const nlohmann::json& pod, int64_t attempt, const std::string& raw_id);

}  // namespace sidecar

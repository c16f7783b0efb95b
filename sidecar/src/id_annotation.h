// The root sidecar's report: annotations on its own pod (contract/names.h), as a JSON merge
// patch so it touches nothing else on the pod. Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace sidecar {

nlohmann::json BuildIdAnnotationPatch(int64_t attempt, const std::string& raw_id);

// True when the pod already carries exactly this report (then there is nothing to patch).
bool PodHasIdAnnotation(const nlohmann::json& pod, int64_t attempt, const std::string& raw_id);

// The raw id the pod's annotations carry for `attempt` (a report of an earlier run of this
// sidecar); nullopt when they carry none, one of another attempt, or a malformed one.
std::optional<std::string> IdAnnotatedFor(const nlohmann::json& pod, int64_t attempt);

}  // namespace sidecar

// The YAML that kubeconfig files use (block maps, block sequences including the compact
// "- " under a key at the same indent, plain/single/double-quoted scalars, comments, empty
// flow collections) parsed into JSON. Anything outside that subset is an error with a line
// number, never a silent misreading. JSON text is accepted as is.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace kube::internal {

// On failure returns false and sets *error to "line N: what".
bool ParseYamlSubset(std::string_view text, nlohmann::json* out, std::string* error);

}  // namespace kube::internal

// A Kubernetes label key (a qualified name), as the API server takes one: an optional DNS
// subdomain prefix and "/", then a name of at most 63 letters, digits, '-', '_' or '.',
// alphanumeric at both ends. Topology requests name node labels this way.
#pragma once

#include <string_view>

namespace ncclop::api {

bool IsLabelKey(std::string_view key);

// The rule in words, for messages: "must be a node label key (...)".
inline constexpr const char* kLabelKeyRule =
    "must be a node label key (an optional DNS subdomain and '/', then at most 63 letters, digits, '-', '_' or '.', "
    "alphanumeric at both ends)";

}  // namespace ncclop::api

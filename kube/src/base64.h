// Base64 (standard alphabet, padding optional, whitespace ignored) for kubeconfig *-data.
#pragma once

#include <string>
#include <string_view>

namespace kube::internal {

bool Base64Decode(std::string_view in, std::string* out);
std::string Base64Encode(std::string_view in);

}  // namespace kube::internal

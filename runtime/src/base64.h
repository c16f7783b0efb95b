// Standard base64 (RFC 4648, with padding): the id's encoding in the sidecar API.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nccl_k8s {

std::string Base64Encode(const unsigned char* data, size_t size);
// nullopt on any character outside the alphabet or a bad length.
std::optional<std::vector<unsigned char>> Base64Decode(std::string_view text);

}  // namespace nccl_k8s

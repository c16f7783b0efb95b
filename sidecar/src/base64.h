// Standard base64 (RFC 4648, with padding): how the 128-byte ncclUniqueId travels in JSON,
// annotations and the ConfigMap.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace sidecar {

std::string Base64Encode(std::string_view bytes);

// Strict: the padded alphabet only, length a multiple of 4. nullopt for anything else, so a
// corrupted value is refused rather than silently turned into a different id.
std::optional<std::string> Base64Decode(std::string_view text);

}  // namespace sidecar

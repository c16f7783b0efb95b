// Reads top-level fields of the sidecar's small, flat JSON answers ({"id":"...","attempt":3}).
// Not a JSON parser: enough for a fixed, flat shape without pulling a JSON library into the
// user's process. Values with escapes are rejected rather than guessed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nccl_k8s {

std::optional<std::string> JsonStringField(std::string_view json, std::string_view key);
std::optional<int64_t> JsonIntField(std::string_view json, std::string_view key);
// A top-level array of strings (["a","b"]); nullopt when absent or of any other shape.
std::optional<std::vector<std::string>> JsonStringArrayField(std::string_view json, std::string_view key);

}  // namespace nccl_k8s

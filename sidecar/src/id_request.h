// Validation of the id API's requests, apart from the server so every rule is unit-tested.
// Each failure carries the HTTP status the contract (docs/contracts.md) gives it and a message
// that tells the caller what to send instead. Messages never contain the id.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "contract/unique_id.h"

namespace sidecar {

using contract::kUniqueIdBytes;              // sizeof(ncclUniqueId)
constexpr size_t kMaxPostBodyBytes = 4096;   // larger bodies get 413
constexpr std::chrono::seconds kDefaultPollTimeout{30};
constexpr std::chrono::seconds kMaxPollTimeout{300};

struct HttpError {
  int status = 400;
  std::string message;
};

struct PostedId {
  std::string id;                  // the raw 128 bytes
  std::optional<int64_t> attempt;  // only in the JSON form
};

// Body is JSON {"id":"<base64>","attempt":N} when Content-Type is application/json, else the raw
// 128 bytes. The attempt, when given, must equal the pod's (409 otherwise: it belongs elsewhere).
std::variant<PostedId, HttpError> ParsePostBody(std::string_view content_type, std::string_view body,
                                                int64_t pod_attempt);

// The long-poll's ?timeout=<seconds>: absent means the default; more than the maximum is cut to it.
std::variant<std::chrono::seconds, HttpError> ParsePollTimeout(std::optional<std::string_view> value);

}  // namespace sidecar

#include "id_request.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include <nlohmann/json.hpp>

#include "contract/names.h"
#include "contract/unique_id.h"

namespace sidecar {
namespace {

bool IsJsonContentType(std::string_view content_type) {
  std::string_view media = content_type.substr(0, content_type.find(';'));
  while (!media.empty() && std::isspace(static_cast<unsigned char>(media.back()))) media.remove_suffix(1);
  std::string lower(media);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower == "application/json";
}

std::string WrongSizeMessage(size_t got) {
  return "the id must be exactly " + std::to_string(kUniqueIdBytes) + " bytes (ncclUniqueId), got " +
         std::to_string(got);
}

std::variant<PostedId, HttpError> ParseJsonBody(std::string_view body, int64_t pod_attempt) {
  nlohmann::json doc = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    return HttpError{400, R"(body is not a JSON object; send {"id":"<base64 of 128 bytes>","attempt":N})"};
  }
  auto id_field = doc.find(contract::kFieldId);
  if (id_field == doc.end() || !id_field->is_string()) {
    return HttpError{400, R"(JSON body needs "id": the base64 of the 128-byte ncclUniqueId)"};
  }
  std::optional<std::string> raw = contract::Base64Decode(id_field->get<std::string>());
  if (!raw) return HttpError{400, R"("id" is not valid base64 (standard alphabet, with padding))"};
  if (raw->size() != kUniqueIdBytes) return HttpError{400, WrongSizeMessage(raw->size())};

  PostedId posted{std::move(*raw), std::nullopt};
  if (auto attempt = doc.find(contract::kFieldAttempt); attempt != doc.end() && !attempt->is_null()) {
    if (!attempt->is_number_integer()) return HttpError{400, R"("attempt" must be an integer)"};
    posted.attempt = attempt->get<int64_t>();
    if (*posted.attempt != pod_attempt) {
      return HttpError{409, "the id is for attempt " + std::to_string(*posted.attempt) +
                                " but this pod runs attempt " + std::to_string(pod_attempt)};
    }
  }
  return posted;
}

}  // namespace

std::variant<PostedId, HttpError> ParsePostBody(std::string_view content_type, std::string_view body,
                                                int64_t pod_attempt) {
  if (body.size() > kMaxPostBodyBytes) {
    return HttpError{413, "body over " + std::to_string(kMaxPostBodyBytes) + " bytes"};
  }
  if (IsJsonContentType(content_type)) return ParseJsonBody(body, pod_attempt);
  if (body.size() != kUniqueIdBytes) return HttpError{400, WrongSizeMessage(body.size())};
  return PostedId{std::string(body), std::nullopt};
}

std::variant<std::chrono::seconds, HttpError> ParsePollTimeout(std::optional<std::string_view> value) {
  if (!value) return kDefaultPollTimeout;
  int64_t seconds = -1;
  const char* end = value->data() + value->size();
  auto [ptr, ec] = std::from_chars(value->data(), end, seconds);
  if (value->empty() || ec != std::errc() || ptr != end || seconds < 0) {
    return HttpError{400, "timeout must be a whole number of seconds, 0.." +
                              std::to_string(kMaxPollTimeout.count())};
  }
  return std::min(std::chrono::seconds(seconds), kMaxPollTimeout);
}

}  // namespace sidecar

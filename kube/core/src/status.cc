#include "kube/status.h"

#include <nlohmann/json.hpp>

namespace kube {
namespace {

// The reason the API server would have given for a bare HTTP code (used when the body is not
// a metav1.Status, e.g. from a proxy).
std::string ReasonForCode(long code) {
  switch (code) {
    case 400: return "BadRequest";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "NotFound";
    case 405: return "MethodNotAllowed";
    case 406: return "NotAcceptable";
    case 409: return "Conflict";
    case 410: return "Gone";
    case 413: return "RequestEntityTooLarge";
    case 415: return "UnsupportedMediaType";
    case 422: return "Invalid";
    case 429: return "TooManyRequests";
    case 500: return "InternalError";
    case 503: return "ServiceUnavailable";
    case 504: return "Timeout";
    default: return code >= 500 ? "InternalError" : "Unknown";
  }
}

std::string StringField(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

Status Status::FromResponse(long http_code, std::string_view body) {
  Status s;
  s.code_ = http_code;
  auto j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_object() && StringField(j, "kind") == "Status") {
    s.reason_ = StringField(j, "reason");
    s.message_ = StringField(j, "message");
    if (auto d = j.find("details"); d != j.end() && d->is_object()) {
      s.details_name_ = StringField(*d, "name");
      s.details_kind_ = StringField(*d, "kind");
      if (auto ra = d->find("retryAfterSeconds"); ra != d->end() && ra->is_number_integer()) {
        s.retry_after_seconds_ = ra->get<int>();
      }
    }
    if (auto c = j.find("code"); c != j.end() && c->is_number_integer() && http_code == 0) {
      s.code_ = c->get<long>();
    }
  }
  if (s.reason_.empty()) s.reason_ = ReasonForCode(s.code_);
  if (s.message_.empty()) {
    constexpr std::size_t kMaxBody = 256;
    s.message_ = body.empty() ? "HTTP " + std::to_string(http_code)
                              : std::string(body.substr(0, kMaxBody));
  }
  return s;
}

Status Status::Transport(std::string message) {
  Status s;
  s.transport_ = true;
  s.reason_ = "TransportError";
  s.message_ = std::move(message);
  return s;
}

Status Status::Local(std::string reason, std::string message) {
  Status s;
  s.reason_ = std::move(reason);
  s.message_ = std::move(message);
  return s;
}

Status Status::Http(long http_code, std::string reason, std::string message) {
  Status s;
  s.code_ = http_code;
  s.reason_ = reason.empty() ? ReasonForCode(http_code) : std::move(reason);
  s.message_ = std::move(message);
  return s;
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  std::string out;
  if (code_ != 0) out = std::to_string(code_) + " ";
  out += reason_;
  if (!message_.empty()) out += ": " + message_;
  return out;
}

}  // namespace kube

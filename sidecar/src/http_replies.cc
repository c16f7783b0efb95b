#include "http_replies.h"

#include <utility>

namespace sidecar {

HttpResponse JsonReply(int status, const nlohmann::json& body) {
  return HttpResponse{status, "application/json", body.dump(), {}};
}

HttpResponse ErrorReply(int status, const std::string& message) { return JsonReply(status, {{"error", message}}); }

HttpResponse TextReply(int status, std::string text) {
  return HttpResponse{status, "text/plain", std::move(text), {}};
}

}  // namespace sidecar

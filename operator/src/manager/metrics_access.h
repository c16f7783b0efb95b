// --metrics-secure's gate in front of /metrics: each caller's bearer token is reviewed by the
// API server (TokenReview), then whether that user may get the non-resource URL /metrics
// (SubjectAccessReview); 401 without a valid token, 403 when not allowed, 500 when the API server
// cannot answer. Answers are kept for controller-runtime's TTLs (metrics/access_review.h), by
// the token's SHA-256, so a scrape every 30 s costs the API server two requests a minute.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "http/server.h"
#include "kube/client.h"
#include "metrics/access_review.h"

namespace ncclop::manager {

class MetricsAccess {
 public:
  explicit MetricsAccess(std::shared_ptr<kube::Client> client) : client_(std::move(client)) {}

  // The http::Gate: nullopt lets the request through.
  std::optional<http::Reply> Check(const std::string& authorization);

 private:
  using Clock = std::chrono::steady_clock;
  kube::Result<metrics::Access> Review(const std::string& token);

  std::shared_ptr<kube::Client> client_;
  std::mutex mu_;
  // By the token's SHA-256: the answer and until when it may be given again; guarded by mu_.
  std::unordered_map<std::string, std::pair<metrics::Access, Clock::time_point>> answers_;
};

}  // namespace ncclop::manager

#include "manager/metrics_access.h"

#include <openssl/evp.h>

#include "logging/log.h"

namespace ncclop::manager {
namespace {

const kube::Resource kTokenReviews{"authentication.k8s.io", "v1", "tokenreviews", false};
const kube::Resource kSubjectAccessReviews{"authorization.k8s.io", "v1", "subjectaccessreviews", false};
constexpr auto kReviewTimeout = std::chrono::seconds(10);
constexpr std::size_t kMaxAnswers = 1024;  // distinct callers remembered; more: forget all, ask again

std::string Sha256(const std::string& text) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_Digest(text.data(), text.size(), digest, &size, EVP_sha256(), nullptr);
  return std::string(reinterpret_cast<const char*>(digest), size);
}

http::Reply Answer(metrics::Access access) {
  switch (access) {
    case metrics::Access::kUnauthenticated:
      return {401, "text/plain; charset=utf-8", "Unauthorized: send a bearer token the API server accepts\n"};
    case metrics::Access::kForbidden:
      return {403, "text/plain; charset=utf-8",
              "Forbidden: the caller may not get /metrics (bind it to the metrics-reader ClusterRole)\n"};
    case metrics::Access::kAllowed:
      break;
  }
  return {200, "text/plain; charset=utf-8", ""};
}

}  // namespace

std::optional<http::Reply> MetricsAccess::Check(const std::string& authorization) {
  std::optional<std::string> token = metrics::BearerToken(authorization);
  if (!token) return Answer(metrics::Access::kUnauthenticated);
  const std::string key = Sha256(*token);
  const auto now = Clock::now();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = answers_.find(key); it != answers_.end() && now < it->second.second) {
      if (it->second.first == metrics::Access::kAllowed) return std::nullopt;
      return Answer(it->second.first);
    }
  }
  kube::Result<metrics::Access> access = Review(*token);
  if (!access.ok()) {
    logging::Warn("metrics", "cannot review a /metrics caller", {{"error", access.status().ToString()}});
    return http::Reply{500, "text/plain; charset=utf-8", "cannot review the caller: " + access.status().ToString() + "\n"};
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (answers_.size() >= kMaxAnswers) answers_.clear();
    answers_[key] = {*access, now + metrics::CacheFor(*access)};
  }
  if (*access == metrics::Access::kAllowed) return std::nullopt;
  return Answer(*access);
}

kube::Result<metrics::Access> MetricsAccess::Review(const std::string& token) {
  kube::CallOptions call;
  call.timeout = kReviewTimeout;
  auto reviewed = client_->Create(kTokenReviews, "", metrics::TokenReviewRequest(token), call);
  if (!reviewed.ok()) return reviewed.status();
  std::optional<nlohmann::json> user = metrics::AuthenticatedUser(*reviewed);
  if (!user) return metrics::Access::kUnauthenticated;
  auto decided =
      client_->Create(kSubjectAccessReviews, "", metrics::SubjectAccessReviewRequest(*user, "/metrics", "get"), call);
  if (!decided.ok()) return decided.status();
  return metrics::Allowed(*decided) ? metrics::Access::kAllowed : metrics::Access::kForbidden;
}

}  // namespace ncclop::manager

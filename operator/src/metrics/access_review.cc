#include "metrics/access_review.h"

#include <cctype>

namespace ncclop::metrics {

std::optional<std::string> BearerToken(std::string_view authorization) {
  constexpr std::string_view kScheme = "bearer ";
  if (authorization.size() <= kScheme.size()) return std::nullopt;
  for (std::size_t i = 0; i < kScheme.size(); ++i) {  // the scheme is case-insensitive (RFC 9110)
    if (std::tolower(static_cast<unsigned char>(authorization[i])) != kScheme[i]) return std::nullopt;
  }
  std::string_view token = authorization.substr(kScheme.size());
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
  if (token.empty()) return std::nullopt;
  return std::string(token);
}

nlohmann::json TokenReviewRequest(const std::string& token) {
  return {{"apiVersion", "authentication.k8s.io/v1"}, {"kind", "TokenReview"}, {"spec", {{"token", token}}}};
}

std::optional<nlohmann::json> AuthenticatedUser(const nlohmann::json& token_review) {
  auto status = token_review.find("status");
  if (status == token_review.end() || !status->is_object()) return std::nullopt;
  auto authenticated = status->find("authenticated");
  if (authenticated == status->end() || !authenticated->is_boolean() || !authenticated->get<bool>()) {
    return std::nullopt;
  }
  auto user = status->find("user");
  if (user == status->end() || !user->is_object()) return std::nullopt;
  return *user;
}

nlohmann::json SubjectAccessReviewRequest(const nlohmann::json& user, const std::string& path,
                                          const std::string& verb) {
  nlohmann::json spec = {{"nonResourceAttributes", {{"path", path}, {"verb", verb}}}};
  // TokenReview's user.username/uid/groups/extra are SubjectAccessReview's user/uid/groups/extra.
  if (auto it = user.find("username"); it != user.end() && it->is_string()) spec["user"] = *it;
  if (auto it = user.find("uid"); it != user.end() && it->is_string()) spec["uid"] = *it;
  if (auto it = user.find("groups"); it != user.end() && it->is_array()) spec["groups"] = *it;
  if (auto it = user.find("extra"); it != user.end() && it->is_object()) spec["extra"] = *it;
  return {{"apiVersion", "authorization.k8s.io/v1"}, {"kind", "SubjectAccessReview"}, {"spec", spec}};
}

bool Allowed(const nlohmann::json& subject_access_review) {
  auto status = subject_access_review.find("status");
  if (status == subject_access_review.end() || !status->is_object()) return false;
  auto allowed = status->find("allowed");
  auto denied = status->find("denied");
  const bool is_denied = denied != status->end() && denied->is_boolean() && denied->get<bool>();
  return !is_denied && allowed != status->end() && allowed->is_boolean() && allowed->get<bool>();
}

int HttpCode(Access access) {
  switch (access) {
    case Access::kAllowed:
      return 200;
    case Access::kUnauthenticated:
      return 401;
    case Access::kForbidden:
      return 403;
  }
  return 403;
}

std::chrono::seconds CacheFor(Access access) {
  switch (access) {
    case Access::kAllowed:
      return std::chrono::minutes(1);  // min(authentication 1 min, allow 5 min)
    case Access::kUnauthenticated:
      return std::chrono::minutes(1);
    case Access::kForbidden:
      return std::chrono::seconds(30);
  }
  return std::chrono::seconds(0);
}

}  // namespace ncclop::metrics

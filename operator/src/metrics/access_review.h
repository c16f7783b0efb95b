// Who may read /metrics with --metrics-secure, decided by the API server as controller-runtime's
// metrics filter (WithAuthenticationAndAuthorization) has it decided: a TokenReview of the
// caller's bearer token, then a SubjectAccessReview of that user for `get` on the non-resource
// URL /metrics. Pure: the requests to send and what their answers mean; the calls and the cache
// are manager/metrics_access.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace ncclop::metrics {

// The token of an "Authorization: Bearer <token>" header; nullopt for none or another scheme.
std::optional<std::string> BearerToken(std::string_view authorization);

nlohmann::json TokenReviewRequest(const std::string& token);
// The answer's status.user when status.authenticated, else nullopt.
std::optional<nlohmann::json> AuthenticatedUser(const nlohmann::json& token_review);

// Whether `user` (a TokenReview's status.user) may `verb` the non-resource URL `path`.
nlohmann::json SubjectAccessReviewRequest(const nlohmann::json& user, const std::string& path,
                                          const std::string& verb);
bool Allowed(const nlohmann::json& subject_access_review);

// How a caller is answered, and for how long that answer may be given again without asking
// the API server (controller-runtime's TTLs: an authentication 1 min, an allow 5 min, a deny
// 30 s; an allow lasts no longer than the authentication behind it).
enum class Access { kAllowed, kUnauthenticated, kForbidden };
int HttpCode(Access access);  // 200, 401, 403
std::chrono::seconds CacheFor(Access access);

}  // namespace ncclop::metrics

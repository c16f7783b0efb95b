#include "metrics/access_review.h"

#include <gtest/gtest.h>

namespace ncclop::metrics {
namespace {

TEST(AccessReview, BearerToken) {
  EXPECT_EQ(BearerToken("Bearer abc.def"), "abc.def");
  EXPECT_EQ(BearerToken("bearer  abc "), "abc");
  EXPECT_FALSE(BearerToken(""));
  EXPECT_FALSE(BearerToken("Bearer "));
  EXPECT_FALSE(BearerToken("Basic dXNlcjpwYXNz"));
}

TEST(AccessReview, TheReviewedUserIsTheSubjectAsked) {
  nlohmann::json answer = {{"status",
                            {{"authenticated", true},
                             {"user",
                              {{"username", "system:serviceaccount:mon:prometheus"},
                               {"uid", "u-1"},
                               {"groups", {"system:serviceaccounts", "system:authenticated"}},
                               {"extra", {{"authentication.kubernetes.io/pod-name", {"prom-0"}}}}}}}}};
  auto user = AuthenticatedUser(answer);
  ASSERT_TRUE(user);
  nlohmann::json sar = SubjectAccessReviewRequest(*user, "/metrics", "get");
  EXPECT_EQ(sar["kind"], "SubjectAccessReview");
  EXPECT_EQ(sar["spec"]["user"], "system:serviceaccount:mon:prometheus");
  EXPECT_EQ(sar["spec"]["uid"], "u-1");
  EXPECT_EQ(sar["spec"]["groups"].size(), 2u);
  EXPECT_EQ(sar["spec"]["extra"]["authentication.kubernetes.io/pod-name"][0], "prom-0");
  EXPECT_EQ(sar["spec"]["nonResourceAttributes"], (nlohmann::json{{"path", "/metrics"}, {"verb", "get"}}));
  EXPECT_EQ(TokenReviewRequest("t")["spec"]["token"], "t");
  EXPECT_FALSE(AuthenticatedUser({{"status", {{"authenticated", false}}}}));
  EXPECT_FALSE(AuthenticatedUser({{"status", {{"error", "invalid bearer token"}}}}));
}

TEST(AccessReview, AllowedOnlyWhenAllowedAndNotDenied) {
  EXPECT_TRUE(Allowed({{"status", {{"allowed", true}}}}));
  EXPECT_FALSE(Allowed({{"status", {{"allowed", false}}}}));
  EXPECT_FALSE(Allowed({{"status", {{"allowed", true}, {"denied", true}}}}));
  EXPECT_FALSE(Allowed(nlohmann::json::object()));
  EXPECT_EQ(HttpCode(Access::kUnauthenticated), 401);
  EXPECT_EQ(HttpCode(Access::kForbidden), 403);
  EXPECT_LT(CacheFor(Access::kForbidden), CacheFor(Access::kAllowed)) << "a deny is asked again sooner";
}

}  // namespace
}  // namespace ncclop::metrics

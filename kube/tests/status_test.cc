#include <gtest/gtest.h>

#include "kube/resource.h"
#include "kube/status.h"

namespace kube {
namespace {

TEST(StatusTest, NotFoundFromMetaV1Status) {
  Status s = Status::FromResponse(404, R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
    "message":"configmaps \"x\" not found","reason":"NotFound","details":{"name":"x","kind":"configmaps"},"code":404})");
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(s.IsNotFound());
  EXPECT_FALSE(s.IsConflict());
  EXPECT_FALSE(s.IsRetryable());
  EXPECT_EQ(s.details_name(), "x");
  EXPECT_EQ(s.details_kind(), "configmaps");
  EXPECT_EQ(s.message(), "configmaps \"x\" not found");
  EXPECT_EQ(s.ToString(), "404 NotFound: configmaps \"x\" not found");
}

TEST(StatusTest, ConflictAndAlreadyExistsAreDistinct) {
  Status conflict = Status::FromResponse(409, R"({"kind":"Status","reason":"Conflict","message":"stale","code":409})");
  Status exists = Status::FromResponse(409, R"({"kind":"Status","reason":"AlreadyExists","message":"exists","code":409})");
  EXPECT_TRUE(conflict.IsConflict());
  EXPECT_FALSE(conflict.IsAlreadyExists());
  EXPECT_TRUE(exists.IsAlreadyExists());
  EXPECT_FALSE(exists.IsConflict());
}

TEST(StatusTest, GoneInvalidForbiddenTooManyRequests) {
  EXPECT_TRUE(Status::FromResponse(410, R"({"kind":"Status","reason":"Expired","code":410})").IsGone());
  EXPECT_TRUE(Status::FromResponse(422, R"({"kind":"Status","reason":"Invalid","code":422})").IsInvalid());
  EXPECT_TRUE(Status::FromResponse(403, R"({"kind":"Status","reason":"Forbidden","code":403})").IsForbidden());
  Status busy = Status::FromResponse(429, R"({"kind":"Status","reason":"TooManyRequests","details":{"retryAfterSeconds":3},"code":429})");
  EXPECT_TRUE(busy.IsTooManyRequests());
  EXPECT_TRUE(busy.IsRetryable());
  EXPECT_EQ(busy.retry_after_seconds(), 3);
}

TEST(StatusTest, NonJsonBodyFallsBackToTheHttpCode) {
  Status s = Status::FromResponse(503, "upstream connect error");
  EXPECT_EQ(s.reason(), "ServiceUnavailable");
  EXPECT_EQ(s.message(), "upstream connect error");
  EXPECT_TRUE(s.IsRetryable());
  EXPECT_TRUE(Status::FromResponse(404, "").IsNotFound());
}

TEST(StatusTest, TransportAndLocalErrors) {
  Status t = Status::Transport("connection refused");
  EXPECT_FALSE(t.ok());
  EXPECT_TRUE(t.transport_error());
  EXPECT_TRUE(t.IsRetryable());
  Status l = Status::Local("InvalidConfig", "bad");
  EXPECT_FALSE(l.ok());
  EXPECT_FALSE(l.IsRetryable());
  EXPECT_TRUE(Status::Local("Cancelled", "x").IsCancelled());
  EXPECT_TRUE(Status::Ok().ok());
}

TEST(ResultTest, HoldsValueOrStatus) {
  Result<std::string> v = std::string("three");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, "three");
  EXPECT_TRUE(v.status().ok());
  Result<std::string> e = Status::Http(404, "", "gone");
  EXPECT_FALSE(e.ok());
  EXPECT_TRUE(e.status().IsNotFound());
}

TEST(ResourceTest, Paths) {
  EXPECT_EQ(CollectionPath(resources::kPods, "ns"), "/api/v1/namespaces/ns/pods");
  EXPECT_EQ(CollectionPath(resources::kPods, ""), "/api/v1/pods");
  EXPECT_EQ(ObjectPath(resources::kPods, "ns", "p-0", "status"), "/api/v1/namespaces/ns/pods/p-0/status");
  EXPECT_EQ(ObjectPath(resources::kLeases, "kube-system", "op"),
            "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/op");
  EXPECT_EQ(ObjectPath(resources::kCustomResourceDefinitions, "ignored", "nccljobs.nccl.dev"),
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/nccljobs.nccl.dev");
  EXPECT_EQ(resources::kRoles.ApiVersion(), "rbac.authorization.k8s.io/v1");
  EXPECT_EQ(resources::kPods.ApiVersion(), "v1");
  EXPECT_EQ(QueryString({{"labelSelector", "a=b,c in (d)"}, {"limit", "5"}}),
            "?labelSelector=a%3Db%2Cc%20in%20%28d%29&limit=5");
  EXPECT_EQ(QueryString({}), "");
}

}  // namespace
}  // namespace kube

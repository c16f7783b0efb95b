#include "observed/ownership.h"

#include <gtest/gtest.h>

namespace ncclop::observed {
namespace {

using Json = nlohmann::json;

TEST(Ownership, JobKeysAndOwnerReferences) {
  const Json pod = Json::parse(R"({"metadata":{"name":"demo-0","namespace":"ml","labels":{"nccl.dev/job-name":"demo"},
      "ownerReferences":[{"kind":"NcclJob","name":"demo","uid":"uid-1"}]}})");
  EXPECT_EQ(observed::OwningJobKey(pod), "ml/demo");
  EXPECT_EQ(observed::JobKey("ml", "demo"), "ml/demo");
  EXPECT_TRUE(observed::OwnedBy(pod, "uid-1"));
  EXPECT_FALSE(observed::OwnedBy(pod, "uid-2"));
  EXPECT_EQ(observed::OwningJobKey(Json::parse(R"({"metadata":{"labels":{"nccl.dev/job-name":7}}})")), "");
  EXPECT_EQ(observed::OwningJobKey(Json::parse(R"({"metadata":"x"})")), "");
  EXPECT_FALSE(observed::OwnedBy(Json::parse(R"({"metadata":{"ownerReferences":{"uid":"uid-1"}}})"), "uid-1"));
}

}  // namespace
}  // namespace ncclop::observed

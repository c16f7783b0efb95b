#include "desired/configmap.h"

#include <gtest/gtest.h>

#include "test_jobs.h"

namespace ncclop::desired {
namespace {

TEST(ConfigMap, NamesItsAttemptAndHoldsTheIdOnlyWhenPublished) {
  auto job = testing::Job();
  Json empty = ConfigMap(job, 2, std::nullopt);
  EXPECT_EQ(empty["metadata"]["name"], "demo-nccl");
  EXPECT_EQ(empty["data"]["attempt"], "2");
  EXPECT_EQ(empty["data"]["jobUID"], "uid-1");
  EXPECT_FALSE(empty["data"].contains("uniqueId"));
  Json full = ConfigMap(job, 2, PublishedId{"QUJD", "2024-01-01T00:00:00Z"});
  EXPECT_EQ(full["data"]["uniqueId"], "QUJD");
  EXPECT_EQ(full["data"]["publishedAt"], "2024-01-01T00:00:00Z");
}

}  // namespace
}  // namespace ncclop::desired

#include "desired/service.h"

#include <gtest/gtest.h>

#include "test_jobs.h"

namespace ncclop::desired {
namespace {

TEST(Service, IsHeadlessAndPublishesNotReadyAddresses) {
  Json svc = HeadlessService(testing::Job());
  EXPECT_EQ(svc["metadata"]["name"], "demo");
  EXPECT_EQ(svc["spec"]["clusterIP"], "None");
  EXPECT_EQ(svc["spec"]["publishNotReadyAddresses"], true);
  EXPECT_EQ(svc["spec"]["selector"]["nccl.dev/job-name"], "demo");
}

}  // namespace
}  // namespace ncclop::desired

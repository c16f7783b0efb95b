#include "desired/metadata.h"

#include <gtest/gtest.h>

#include "test_jobs.h"

namespace ncclop::desired {
namespace {

TEST(Metadata, OwnerReferenceIsControllerAndBlocksDeletion) {
  Json ref = OwnerReference(testing::Job());
  EXPECT_EQ(ref["apiVersion"], "nccl.dev/v1alpha1");
  EXPECT_EQ(ref["kind"], "NcclJob");
  EXPECT_EQ(ref["uid"], "uid-1");
  EXPECT_EQ(ref["controller"], true);
  EXPECT_EQ(ref["blockOwnerDeletion"], true);
}

}  // namespace
}  // namespace ncclop::desired

#include "nccl_version.h"

#include <gtest/gtest.h>

namespace nccl_k8s {
namespace {

TEST(NcclVersion, ReadsBothCodeForms) {
  EXPECT_EQ(NcclVersionString(22809), "2.28.9");
  EXPECT_EQ(NcclVersionString(23203), "2.32.3");
  EXPECT_EQ(NcclVersionString(22300), "2.23.0");
  EXPECT_EQ(NcclVersionString(2804), "2.8.4");  // before 2.9: major*1000 + minor*100 + patch
  EXPECT_EQ(NcclVersionString(0), "unknown");
}

TEST(NcclVersion, ScalableInitNeedsTwoTwentyThree) {
  EXPECT_TRUE(RequireNccl(22300, kNcclScalableInit, "x").ok());
  EXPECT_TRUE(RequireNccl(22809, kNcclScalableInit, "x").ok());
  const Status old = RequireNccl(22203, kNcclScalableInit, "init from several bootstrap roots");
  ASSERT_FALSE(old.ok());
  EXPECT_EQ(old.code(), Code::kInvalidArgument);
  EXPECT_NE(old.message().find("needs NCCL 2.23.0 or newer"), std::string::npos) << old.message();
  EXPECT_NE(old.message().find("loaded NCCL 2.22.3"), std::string::npos) << old.message();
  EXPECT_NE(old.message().find("init from several bootstrap roots"), std::string::npos) << old.message();
}

}  // namespace
}  // namespace nccl_k8s

#include "desired/compute_domain.h"

#include <gtest/gtest.h>

#include "test_jobs.h"

namespace ncclop::desired {
namespace {

TEST(ComputeDomain, NamedAndOwnedLikeTheJobWithItsChannelsTemplate) {
  api::NcclJob job = testing::Job();
  job.spec.compute_domain.requested = true;
  Json cd = ComputeDomain(job);
  EXPECT_EQ(cd["apiVersion"], "resource.nvidia.com/v1beta1");
  EXPECT_EQ(cd["kind"], "ComputeDomain");
  EXPECT_EQ(cd["metadata"]["name"], "demo");
  EXPECT_EQ(cd["metadata"]["namespace"], "ml");
  EXPECT_EQ(cd["metadata"]["labels"]["nccl.dev/job-name"], "demo");
  EXPECT_EQ(cd["metadata"]["ownerReferences"][0]["uid"], "uid-1");
  EXPECT_EQ(cd["metadata"]["ownerReferences"][0]["controller"], true);
  EXPECT_EQ(cd["spec"], Json::parse(R"({"numNodes": 0, "channel": {"resourceClaimTemplate": {"name": "demo-imex-channel"},
                                                                    "allocationMode": "Single"}})"));
  job.spec.compute_domain.num_nodes = 18;
  job.spec.compute_domain.allocation_mode = "All";
  cd = ComputeDomain(job);
  EXPECT_EQ(cd["spec"]["numNodes"], 18);
  EXPECT_EQ(cd["spec"]["channel"]["allocationMode"], "All");
}

}  // namespace
}  // namespace ncclop::desired

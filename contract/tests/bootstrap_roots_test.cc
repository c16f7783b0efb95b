// The rule for which pods make an id when a job bootstraps from several roots, against NCCL's own.
#include "contract/bootstrap_roots.h"

#include <algorithm>
#include <functional>
#include <vector>

#include <gtest/gtest.h>

namespace contract {
namespace {

// NCCL's user guide decides which rank makes an id with this function (rankHasRoot, "Creating a
// communicator using multiple ncclUniqueIds"); with one GPU a pod our root pods are exactly those.
bool NcclRankHasRoot(int rank, int n_ranks, int n_ids) {
  const int rmr = n_ranks % n_ids, rpr = n_ranks / n_ids, rlim = rmr * (rpr + 1);
  return rank < rlim ? rank % (rpr + 1) == 0 : (rank - rlim) % rpr == 0;
}

TEST(BootstrapRoots, OneGpuAPodAreNcclsOwnRootRanks) {
  for (int pods = 1; pods <= 70; ++pods) {
    for (int roots = 1; roots <= pods; ++roots) {
      std::vector<int> expected;
      for (int r = 0; r < pods; ++r) {
        if (NcclRankHasRoot(r, pods, roots)) expected.push_back(r);
      }
      ASSERT_EQ(BootstrapRootPods(roots, pods, 1), expected) << roots << " roots of " << pods;
      for (int r = 0; r < pods; ++r) {
        int slot = BootstrapRootSlot(r, roots, pods, 1);
        auto at = std::find(expected.begin(), expected.end(), r);
        ASSERT_EQ(slot, at == expected.end() ? -1 : static_cast<int>(at - expected.begin()));
      }
    }
  }
}

TEST(BootstrapRoots, SeveralGpusAPodPutEachRootInThePodOfItsBlocksFirstRank) {
  // 3 pods of 2 GPUs, 2 ids: NCCL's blocks are ranks 0-2 and 3-5, so pods 0 and 1 (rank 3).
  EXPECT_EQ(BootstrapRootPods(2, 3, 2), (std::vector<int>{0, 1}));
  // Distinct pods whenever roots <= pods.
  for (int pods = 1; pods <= 40; ++pods) {
    for (int per = 1; per <= 8; ++per) {
      for (int roots = 1; roots <= pods; ++roots) {
        std::vector<int> got = BootstrapRootPods(roots, pods, per);
        ASSERT_TRUE(std::adjacent_find(got.begin(), got.end(), std::greater_equal<int>()) == got.end())
            << roots << " roots of " << pods << "x" << per;
        ASSERT_EQ(got.front(), 0);
      }
    }
  }
}

}  // namespace
}  // namespace contract

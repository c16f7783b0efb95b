#include "policy/root_ids.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "publish_fixtures.h"

namespace ncclop::policy {
namespace {

using observed::ObservedPod;
using testing::JobAt;
using testing::PodsWithIds;
using testing::TwoRootJobAt;

RootIds Collect(const api::NcclJob& job, const std::vector<ObservedPod>& pods) {
  return CollectRootIds(job, observed::ViewAttempt(pods, job.status.attempt, job.spec.replicas));
}

TEST(CollectRootIds, ListsEveryRootsIdInRootOrderOnceAllAreIn) {
  RootIds ids = Collect(TwoRootJobAt(2), PodsWithIds(2, 2, 2));
  ASSERT_TRUE(ids.list);
  EXPECT_EQ(*ids.list, "QUFB,QkJC");
  EXPECT_EQ(SplitIdList(*ids.list), (std::vector<std::string>{"QUFB", "QkJC"}));
  std::vector<ObservedPod> pods = PodsWithIds(2, 2, 2);
  pods[2].unique_id.clear();
  ids = Collect(TwoRootJobAt(2), pods);
  EXPECT_FALSE(ids.list);
  EXPECT_EQ(ids.missing, "root pod demo-2 has not reported an id");
  pods.erase(pods.begin() + 2);
  EXPECT_EQ(Collect(TwoRootJobAt(2), pods).missing, "root pod demo-2 is not in the cache");
}

TEST(CollectRootIds, NeverMixesAttempts) {
  // Pod 2 still carries attempt 1's id: nothing is published for attempt 2.
  RootIds ids = Collect(TwoRootJobAt(2), PodsWithIds(2, 1, 2));
  EXPECT_FALSE(ids.list);
  EXPECT_EQ(ids.missing, "root pod demo-2 reported an id of another attempt");
  // Pod 2 itself is of attempt 1 (not yet replaced).
  EXPECT_EQ(Collect(TwoRootJobAt(2), PodsWithIds(2, 2, 1)).missing, "root pod demo-2 is of another attempt");
  std::vector<ObservedPod> pods = PodsWithIds(2, 2, 2);
  pods[2].terminating = true;
  EXPECT_EQ(Collect(TwoRootJobAt(2), pods).missing, "root pod demo-2 is being deleted");
}

TEST(CollectRootIds, OneRootIsPodZerosIdAsBefore) {
  api::NcclJob job = JobAt(1);
  std::vector<ObservedPod> pods = PodsWithIds(1, 1, 1);
  RootIds ids = Collect(job, pods);
  ASSERT_TRUE(ids.list);
  EXPECT_EQ(*ids.list, "QUFB");
}

}  // namespace
}  // namespace ncclop::policy

#include "observed/attempt.h"

#include <gtest/gtest.h>

#include <vector>

#include "test_jobs.h"

namespace ncclop::observed {
namespace {

TEST(ViewAttempt, SortsThePodsOfTheAttemptByIndexOnce) {
  std::vector<ObservedPod> pods = {testing::Pod(0, 2), testing::Pod(1, 2), testing::Pod(1, 2), testing::Pod(2, 1),
                                   testing::Pod(7, 2), testing::Pod(-1, 2)};
  observed::AttemptView two = observed::ViewAttempt(pods, 2, 4);
  EXPECT_EQ(two.by_index.size(), 2u) << "distinct indices of the attempt in range";
  EXPECT_EQ(two.members.size(), 5u) << "every pod labelled with the attempt";
  EXPECT_EQ(two.stale.size(), 3u) << "another attempt's, or an index out of range";
  ASSERT_NE(two.root(), nullptr);
  EXPECT_EQ(two.root()->name, "demo-0");
  EXPECT_FALSE(two.complete());
  observed::AttemptView one = observed::ViewAttempt(pods, 1, 4);
  EXPECT_EQ(one.by_index.size(), 1u);
  EXPECT_EQ(one.root(), nullptr);
  EXPECT_TRUE(observed::ViewAttempt(testing::AllPods(1), 1, 4).complete());
}

}  // namespace
}  // namespace ncclop::observed

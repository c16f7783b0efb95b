#include <gtest/gtest.h>

#include "status/conditions.h"
#include "status/counts.h"
#include "test_jobs.h"

namespace ncclop::status {
namespace {

using namespace std::chrono_literals;

TEST(SetCondition, MovesTransitionTimeOnlyWhenStatusFlips) {
  std::vector<api::Condition> conds;
  api::Time t0 = *api::ParseTime("2024-01-01T00:00:00Z");
  SetCondition(conds, "Running", false, "PodsStarting", "0 of 2", 1, t0);
  SetCondition(conds, "Running", false, "PodsStarting", "1 of 2", 2, t0 + 10s);
  ASSERT_EQ(conds.size(), 1u);
  EXPECT_EQ(conds[0].last_transition_time, "2024-01-01T00:00:00Z");
  EXPECT_EQ(conds[0].message, "1 of 2");
  EXPECT_EQ(conds[0].observed_generation, 2);
  SetCondition(conds, "Running", true, "AllPodsRunning", "", 2, t0 + 20s);
  EXPECT_EQ(conds[0].last_transition_time, "2024-01-01T00:00:20Z");
  EXPECT_EQ(conds[0].status, "True");
}

TEST(CountPods, CountsOnlyTheGivenAttempt) {
  auto ready = testing::Pod(0, 2);
  ready.ready = true;
  auto deleting = testing::Pod(1, 2);
  deleting.terminating = true;
  std::vector<observed::ObservedPod> pods = {ready, deleting, testing::Pod(2, 2, "Pending"),
                                           testing::Pod(3, 2, "Succeeded"), testing::FailedPod(4, 2, 1),
                                           testing::Pod(0, 1)};
  Counts c = CountPods(observed::ViewAttempt(pods, 2, 4));
  EXPECT_EQ(c.ready, 1);
  EXPECT_EQ(c.active, 2);
  EXPECT_EQ(c.running, 1);
  EXPECT_EQ(c.succeeded, 1);
  EXPECT_EQ(c.failed, 1);
}

}  // namespace
}  // namespace ncclop::status

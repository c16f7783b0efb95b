#include "status/counts.h"

#include <gtest/gtest.h>

#include <vector>

#include "test_jobs.h"

namespace ncclop::status {
namespace {

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

TEST(CountPods, APodMovedInPlaceIsReadyAndRunningOnlyOnceItRestartedIntoTheAttempt) {
  auto moved = testing::Pod(0, 2);  // still runs attempt 1's containers
  moved.in_place = true;
  moved.ready = true;
  moved.restarts_before = 1;
  auto restarted = moved;
  restarted.name = "demo-1";
  restarted.index = 1;
  restarted.trainer_restarts = 1;
  std::vector<observed::ObservedPod> pods = {moved, restarted};
  Counts c = CountPods(observed::ViewAttempt(pods, 2, 2));
  EXPECT_EQ(c.active, 2);
  EXPECT_EQ(c.ready, 1);
  EXPECT_EQ(c.running, 1);
}

}  // namespace
}  // namespace ncclop::status

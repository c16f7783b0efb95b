#include "status/conditions.h"

#include <gtest/gtest.h>

#include <vector>

#include "api/time.h"

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

}  // namespace
}  // namespace ncclop::status

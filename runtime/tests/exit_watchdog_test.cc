// The watchdog that ends a process whose blocking communicator init outlives the deadline, in
// real processes (gtest death tests fork and re-run this binary), and the message it gives.
#include <gtest/gtest.h>

#include <cstdlib>
#include <thread>

#include "exit_watchdog.h"
#include "init_deadline.h"

namespace nccl_k8s {
namespace {

using std::chrono::milliseconds;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

class ExitWatchdogTest : public ::testing::Test {
 protected:
  // Re-executes the binary for each death test: the watchdog is a thread, and fork() copies only
  // the calling one.
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(ExitWatchdogTest, EndsAHungProcessAtTheDeadlineWithItsMessage) {
  // Even with the log floor at off: these are the trainer's last words.
  setenv("NCCL_K8S_LOG_LEVEL", "off", 1);
  const auto start = Clock::now();
  EXPECT_EXIT(
      {
        ExitWatchdog watchdog(Clock::now() + milliseconds(500), "init hung", {{"world_size", "2"}});
        std::this_thread::sleep_for(std::chrono::hours(1));  // a blocking init that never returns
      },
      ::testing::ExitedWithCode(ExitWatchdog::kExitCode),
      // Fired 500-999 ms after arming: at the deadline, well within deadline + 1 s.
      " error nccl-k8s: init hung world_size=2 waited_ms=[5-9][0-9][0-9] exit_code=124");
  unsetenv("NCCL_K8S_LOG_LEVEL");
  // Seen from here too (child start included, so with room for a loaded machine).
  EXPECT_GE(SecondsSince(start), 0.5);
  EXPECT_LE(SecondsSince(start), 5.0);
}

TEST_F(ExitWatchdogTest, ADeadlineAlreadyPastEndsTheProcessAtOnce) {
  const auto start = Clock::now();
  EXPECT_EXIT(
      {
        ExitWatchdog watchdog(Clock::now() - milliseconds(1), "too late", {});
        std::this_thread::sleep_for(std::chrono::hours(1));
      },
      ::testing::ExitedWithCode(ExitWatchdog::kExitCode), "too late waited_ms=[0-9]+ exit_code=124");
  EXPECT_LE(SecondsSince(start), 5.0);
}

TEST_F(ExitWatchdogTest, AnInitThatFinishesInTimeKeepsTheProcessAlive) {
  // In this very process: had the watchdog fired after Disarm, the test binary would have ended
  // with 124 and the test failed.
  {
    ExitWatchdog watchdog(Clock::now() + milliseconds(200), "must not fire", {});
    watchdog.Disarm();
  }
  {
    ExitWatchdog by_scope(Clock::now() + milliseconds(200), "must not fire either", {});
  }  // the destructor disarms
  std::this_thread::sleep_for(milliseconds(400));
  SUCCEED();
}

TEST_F(ExitWatchdogTest, DisarmReturnsAtOnceInsteadOfSleepingOutTheDeadline) {
  ExitWatchdog watchdog(Clock::now() + std::chrono::seconds(30), "must not fire", {});
  const auto start = Clock::now();
  watchdog.Disarm();
  watchdog.Disarm();  // idempotent
  EXPECT_LT(SecondsSince(start), 1.0);  // not the 30 s
}

TEST(InitDeadlineMessage, NamesTheRanksTheWorldAndTheLikelyCauses) {
  std::string one = InitDeadlineMessage({0}, 2);
  EXPECT_EQ(one.rfind("rank(s) 0: communicator init did not finish before the deadline", 0), 0u) << one;
  EXPECT_NE(one.find("some of the 2 ranks never joined"), std::string::npos) << one;
  EXPECT_NE(one.find("NCCL_SOCKET_IFNAME"), std::string::npos) << one;
  EXPECT_EQ(InitDeadlineMessage({4, 5, 6, 7}, 16).rfind("rank(s) 4..7:", 0), 0u);
  EXPECT_EQ(RankRange({}), "none");
}

}  // namespace
}  // namespace nccl_k8s

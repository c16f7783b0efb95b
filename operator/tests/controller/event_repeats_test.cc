// The event recorder's memory of written Events: found within the window of the last sighting,
// and bounded by time and by count, so it levels off under any churn of jobs.
#include "controller/event_repeats.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

namespace ncclop::controller {
namespace {

using namespace std::chrono_literals;
using Clock = EventRepeats::Clock;

EventRepeats::Key KeyOf(int job, const std::string& message = "pod demo-1 failed") {
  return {"uid-" + std::to_string(job), "Warning", "PodFailed", message};
}

TEST(EventRepeats, ARepeatWithinTheWindowFindsTheEventWritten) {
  EventRepeats repeats(10min, 4096);
  const Clock::time_point t0{};
  repeats.Put(KeyOf(1), {"demo.17a", 1}, t0);
  auto found = repeats.Find(KeyOf(1), t0 + 9min);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->name, "demo.17a");
  EXPECT_EQ(found->count, 1);
  EXPECT_FALSE(repeats.Find(KeyOf(1, "another message"), t0 + 1s));
  EXPECT_FALSE(repeats.Find(KeyOf(2), t0 + 1s));
}

TEST(EventRepeats, AnEntryIsForgottenOnceNotSeenForTheWindowAndEachSightingExtendsIt) {
  EventRepeats repeats(10min, 4096);
  const Clock::time_point t0{};
  repeats.Put(KeyOf(1), {"demo.1", 1}, t0);
  repeats.Put(KeyOf(2), {"demo.2", 1}, t0);
  repeats.Put(KeyOf(2), {"demo.2", 2}, t0 + 9min);  // bumped: seen again
  EXPECT_FALSE(repeats.Find(KeyOf(1), t0 + 10min + 1s));
  auto bumped = repeats.Find(KeyOf(2), t0 + 18min);
  ASSERT_TRUE(bumped);
  EXPECT_EQ(bumped->count, 2);
  EXPECT_EQ(repeats.size(), 1u);  // the expired one is gone from memory, not only hidden
  EXPECT_FALSE(repeats.Find(KeyOf(2), t0 + 19min + 1s));
  EXPECT_EQ(repeats.size(), 0u);
}

// The soak's case (tests/chaos/RESULTS.md): jobs come and go, each leaves events never repeated.
// One new event a second for an hour: the memory holds the last window's and no more.
TEST(EventRepeats, UnderSteadyChurnTheMemoryLevelsOffAtOneWindowOfEvents) {
  EventRepeats repeats(10min, 4096);
  const Clock::time_point t0{};
  std::size_t largest = 0;
  for (int second = 0; second < 3600; ++second) {
    repeats.Put(KeyOf(second), {"job-" + std::to_string(second), 1}, t0 + std::chrono::seconds(second));
    largest = std::max(largest, repeats.size());
  }
  EXPECT_EQ(largest, 601u);  // 10 minutes of one a second, both ends included
  EXPECT_EQ(repeats.size(), 601u);
  EXPECT_FALSE(repeats.Find(KeyOf(2998), t0 + 3599s));
  EXPECT_TRUE(repeats.Find(KeyOf(2999), t0 + 3599s));
}

TEST(EventRepeats, AtCapacityTheLeastRecentlySeenGoes) {
  EventRepeats repeats(10min, 100);
  const Clock::time_point t0{};
  for (int job = 0; job < 1000; ++job) {
    repeats.Put(KeyOf(job), {"job-" + std::to_string(job), 1}, t0 + std::chrono::milliseconds(job));
    if (job == 990) repeats.Put(KeyOf(895), {"job-895", 2}, t0 + std::chrono::milliseconds(job));  // a repeat
    ASSERT_LE(repeats.size(), 100u);
  }
  EXPECT_EQ(repeats.size(), 100u);
  const Clock::time_point now = t0 + 1s;
  EXPECT_TRUE(repeats.Find(KeyOf(895), now));   // seen again at 990: among the 100 most recent
  EXPECT_FALSE(repeats.Find(KeyOf(900), now));  // made room for it
  EXPECT_TRUE(repeats.Find(KeyOf(901), now));
  EXPECT_TRUE(repeats.Find(KeyOf(999), now));
  EXPECT_FALSE(repeats.Find(KeyOf(0), now));
}

TEST(EventRepeats, ErasedEntriesAreGoneAndTheRestStays) {
  EventRepeats repeats(10min, 4096);
  const Clock::time_point t0{};
  repeats.Put(KeyOf(1), {"a", 1}, t0);
  repeats.Put(KeyOf(2), {"b", 1}, t0);
  repeats.Erase(KeyOf(1));
  repeats.Erase(KeyOf(3));  // never there: nothing happens
  EXPECT_FALSE(repeats.Find(KeyOf(1), t0));
  EXPECT_TRUE(repeats.Find(KeyOf(2), t0));
  EXPECT_EQ(repeats.size(), 1u);
  repeats.Put(KeyOf(1), {"c", 1}, t0 + 1s);  // written anew after the erase
  EXPECT_EQ(repeats.Find(KeyOf(1), t0 + 1s)->name, "c");
}

}  // namespace
}  // namespace ncclop::controller

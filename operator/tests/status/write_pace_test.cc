#include "status/write_pace.h"

#include <gtest/gtest.h>

#include "api/nccl_job.h"

namespace ncclop::status {
namespace {

using namespace std::chrono_literals;
using When = WritePace::When;

constexpr std::chrono::steady_clock::duration kInterval = 1s;

// Attempt 2 of 8 pods starting: 3 of them running.
api::NcclJobStatus Starting() {
  api::NcclJobStatus s;
  s.observed_generation = 1;
  s.state = api::state::kPending;
  s.attempt = 2;
  s.restarts = 1;
  s.ready = 3;
  s.active = 8;
  s.attempt_start_time = "2024-01-01T00:00:00Z";
  s.restart_strategy = "InPlace";
  s.conditions = {{"Created", "True", "AttemptStarted", "attempt 2 started", "2024-01-01T00:00:00Z", 1},
                  {"Running", "False", "PodsStarting", "3 of 8 pods are running", "2024-01-01T00:00:00Z", 1},
                  {"IdPublished", "False", "WaitingForRoot", "waiting for pod demo-0", "2024-01-01T00:00:00Z", 1}};
  return s;
}

api::NcclJobStatus OneMoreRunning() {
  api::NcclJobStatus s = Starting();
  s.ready = 4;
  s.conditions[1].message = "4 of 8 pods are running";
  return s;
}

TEST(PaceWrite, NothingToWriteWhenNothingChanged) {
  EXPECT_EQ(PaceWrite(Starting(), Starting(), 0s, kInterval).when, When::kNothingToWrite);
  EXPECT_FALSE(OnlyCountsDiffer(Starting(), Starting()));
}

TEST(PaceWrite, CountsAloneWaitForTheIntervalSinceTheLastWrite) {
  WritePace pace = PaceWrite(Starting(), OneMoreRunning(), 300ms, kInterval);
  EXPECT_EQ(pace.when, When::kLater);
  EXPECT_EQ(pace.wait, 700ms);
  EXPECT_EQ(PaceWrite(Starting(), OneMoreRunning(), 1s, kInterval).when, When::kNow);
  EXPECT_EQ(PaceWrite(Starting(), OneMoreRunning(), 5s, kInterval).when, When::kNow);
}

TEST(PaceWrite, CountsAloneAreWrittenAtOnceWhenNoWriteIsRemembered) {
  EXPECT_EQ(PaceWrite(Starting(), OneMoreRunning(), std::nullopt, kInterval).when, When::kNow);
}

TEST(PaceWrite, AZeroIntervalWritesEveryChangeAtOnce) {
  EXPECT_EQ(PaceWrite(Starting(), OneMoreRunning(), 0s, 0s).when, When::kNow);
}

TEST(PaceWrite, EachCountAndTheWordingOfAConditionThatStaysAreCounts) {
  for (auto change : std::vector<void (*)(api::NcclJobStatus&)>{
           [](api::NcclJobStatus& s) { s.ready = 0; }, [](api::NcclJobStatus& s) { s.active = 7; },
           [](api::NcclJobStatus& s) { s.succeeded = 1; }, [](api::NcclJobStatus& s) { s.failed = 1; },
           [](api::NcclJobStatus& s) { s.conditions[1].message = "pod demo-5 is unschedulable"; }}) {
    api::NcclJobStatus desired = Starting();
    change(desired);
    EXPECT_TRUE(OnlyCountsDiffer(Starting(), desired));
    EXPECT_EQ(PaceWrite(Starting(), desired, 0s, kInterval).when, When::kLater);
  }
}

// What a user or a controller acts on is written at once, the counts of the moment with it.
TEST(PaceWrite, EveryOtherChangeIsWrittenAtOnce) {
  for (auto change : std::vector<void (*)(api::NcclJobStatus&)>{
           [](api::NcclJobStatus& s) { s.state = api::state::kRunning; },
           [](api::NcclJobStatus& s) { s.attempt = 3; },
           [](api::NcclJobStatus& s) { s.restarts = 2; },
           [](api::NcclJobStatus& s) { s.disruptions = 1; },
           [](api::NcclJobStatus& s) { s.observed_generation = 2; },
           [](api::NcclJobStatus& s) { s.id_published_time = "2024-01-01T00:00:05Z"; },
           [](api::NcclJobStatus& s) { s.completion_time = "2024-01-01T00:00:05Z"; },
           [](api::NcclJobStatus& s) { s.restart_after = "2024-01-01T00:00:05Z"; },
           [](api::NcclJobStatus& s) { s.restart_strategy = "Recreate"; },
           [](api::NcclJobStatus& s) { s.pod_shape = 2; },
           [](api::NcclJobStatus& s) {
             s.progress = api::Progress{};
             s.progress->step = 10;
           },
           [](api::NcclJobStatus& s) { s.conditions[1].status = "True"; },
           [](api::NcclJobStatus& s) { s.conditions[1].reason = "ImagePullBackOff"; },
           [](api::NcclJobStatus& s) { s.conditions[1].observed_generation = 2; },
           [](api::NcclJobStatus& s) { s.conditions.push_back({"Restarting", "False", "AttemptStarted", "", "", 1}); },
       }) {
    api::NcclJobStatus desired = OneMoreRunning();
    change(desired);
    EXPECT_FALSE(OnlyCountsDiffer(Starting(), desired));
    EXPECT_EQ(PaceWrite(Starting(), desired, 0s, kInterval).when, When::kNow);
  }
}

TEST(ReconcileWait, WhileCountsAreHeldBackTheJobIsReconciledAtMostOncePerSpacing) {
  EXPECT_FALSE(ReconcileWait(std::nullopt, 100ms)) << "nothing held back: at once";
  EXPECT_EQ(ReconcileWait(30ms, 100ms), std::optional<std::chrono::steady_clock::duration>(70ms));
  EXPECT_FALSE(ReconcileWait(100ms, 100ms));
  EXPECT_FALSE(ReconcileWait(2s, 100ms));
}

}  // namespace
}  // namespace ncclop::status

#include "policy/failure_policy.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "observed/attempt.h"
#include "test_jobs.h"

namespace ncclop::policy {
namespace {

using namespace std::chrono_literals;
using observed::Disruption;
using observed::ObservedPod;
using testing::AllPods;
using testing::EvictedPod;
using testing::FailedPod;
using testing::Pod;

TEST(RestartBackoff, DoublesAndCaps) {
  api::FailurePolicy fp;
  fp.backoff_seconds = 10;
  fp.max_backoff_seconds = 35;
  EXPECT_EQ(RestartBackoff(fp, 1), 10s);
  EXPECT_EQ(RestartBackoff(fp, 2), 20s);
  EXPECT_EQ(RestartBackoff(fp, 3), 35s);
  EXPECT_EQ(RestartBackoff(fp, 40), 35s);
  fp.backoff_seconds = 0;
  EXPECT_EQ(RestartBackoff(fp, 3), 0s);
}

TEST(Judge, FailFastCodesWinOverRestartsLeft) {
  api::FailurePolicy fp;
  fp.max_restarts = 3;
  fp.fail_fast_exit_codes = {42};
  EXPECT_EQ(Judge(fp, {"p", "", 42, std::nullopt}, 0, 0), FailureVerdict::kFailFast);
  EXPECT_EQ(Judge(fp, {"p", "", 1, std::nullopt}, 2, 0), FailureVerdict::kRestart);
  EXPECT_EQ(Judge(fp, {"p", "", 1, std::nullopt}, 3, 0), FailureVerdict::kRestartsExhausted);
  EXPECT_EQ(Judge(fp, {"p", "", std::nullopt, std::nullopt}, 0, 0), FailureVerdict::kRestart);
}

TEST(Judge, DisruptionsUseTheirOwnCountAndCap) {
  api::FailurePolicy fp;
  fp.max_restarts = 0;
  fp.fail_fast_exit_codes = {143};
  AttemptFailure disrupted{"p", "", 143, Disruption{"Eviction", "evicted"}};
  EXPECT_EQ(Judge(fp, disrupted, 0, 0), FailureVerdict::kRestartAfterDisruption)
      << "neither maxRestarts 0 nor a fail-fast code stops a disruption's restart";
  EXPECT_EQ(Judge(fp, disrupted, 0, 100), FailureVerdict::kRestartAfterDisruption) << "no cap unless set";
  fp.max_disruptions = 2;
  EXPECT_EQ(Judge(fp, disrupted, 0, 1), FailureVerdict::kRestartAfterDisruption);
  EXPECT_EQ(Judge(fp, disrupted, 0, 2), FailureVerdict::kDisruptionsExhausted);
  EXPECT_EQ(Judge(fp, {"p", "", 1, std::nullopt}, 0, 2), FailureVerdict::kRestartsExhausted) << "a crash still counts";
}

TEST(FindAttemptFailure, MissingPodCountsOnlyAfterThePublish) {
  std::vector<ObservedPod> pods = {Pod(0, 1), Pod(1, 1), Pod(3, 1)};
  EXPECT_FALSE(FindAttemptFailure("demo", observed::ViewAttempt(pods, 1, 4), false));
  auto f = FindAttemptFailure("demo", observed::ViewAttempt(pods, 1, 4), true);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->pod, "demo-2");
}

TEST(FindAttemptFailure, IgnoresOtherAttempts) {
  std::vector<ObservedPod> pods = {FailedPod(0, 1, 1), Pod(0, 2)};
  EXPECT_FALSE(FindAttemptFailure("demo", observed::ViewAttempt(pods, 2, 1), false));
}

TEST(FindAttemptFailure, ADisruptedPodIsTheCauseEvenWhenAPeerCrashedFirst) {
  auto pods = AllPods(1);
  pods[0] = FailedPod(0, 1, 1);  // lost its peer, exited 1
  pods[2] = EvictedPod(2, 1);
  auto f = FindAttemptFailure("demo", observed::ViewAttempt(pods, 1, 4), true);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->pod, "demo-2");
  ASSERT_TRUE(f->disruption);
  EXPECT_EQ(f->detail, "pod demo-2 was evicted through the Eviction API, e.g. by a node drain (EvictionByEvictionAPI)");
}

TEST(FindAttemptFailure, ADisruptionTargetOnAPodStillRunningEndsNothing) {
  auto pods = AllPods(1);
  pods[1].disruption = Disruption{"Preemption", "preempted"};
  EXPECT_FALSE(FindAttemptFailure("demo", observed::ViewAttempt(pods, 1, 4), true));
}

// A pod deleted while disrupted may be seen by the reconcile only once it is gone: remembered
// from its delete event, it ends the attempt as a disruption, not as a pod that disappeared.
TEST(FindAttemptFailure, APodRememberedGoneDisruptedIsADisruption) {
  std::vector<ObservedPod> pods = {Pod(0, 1), Pod(1, 1), Pod(3, 1)};
  const std::map<int, Disruption> gone = {{2, Disruption{"Eviction", "evicted through the Eviction API"}}};
  for (bool published : {false, true}) {
    auto f = FindAttemptFailure("demo", observed::ViewAttempt(pods, 1, 4), published, gone);
    ASSERT_TRUE(f) << "published " << published;
    EXPECT_EQ(f->pod, "demo-2");
    EXPECT_EQ(f->detail, "pod demo-2 was evicted through the Eviction API");
    ASSERT_TRUE(f->disruption);
    EXPECT_EQ(f->disruption->kind, "Eviction");
  }

  pods.push_back(Pod(2, 1));  // made again at its index: the one remembered is not this attempt's end
  EXPECT_FALSE(FindAttemptFailure("demo", observed::ViewAttempt(pods, 1, 4), true, gone));
  const std::map<int, Disruption> out_of_range = {{4, Disruption{"Eviction", "e"}}, {-1, Disruption{"Eviction", "e"}}};
  EXPECT_FALSE(FindAttemptFailure("demo", observed::ViewAttempt(pods, 1, 4), true, out_of_range));
}

}  // namespace
}  // namespace ncclop::policy

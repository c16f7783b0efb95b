// Decide with progress reports and stalled ranks: status.progress follows pod 0's newest report;
// an attempt whose sidecars found ranks stalled restarts as Stalled naming them, and a pod that
// failed on its own is named before them.
#include "policy/decide.h"

#include <gtest/gtest.h>

#include <string>

#include "decide_fixtures.h"

namespace ncclop::policy {
namespace {

using observed::ObservedPod;
using testing::AllPods;
using testing::Cm;
using testing::FailedPod;
using testing::HasEvent;
using testing::kNow;
using testing::RunningJob;

ObservedPod Stalled(ObservedPod p, const std::string& words) {
  p.failed = true;
  p.stalled = true;
  p.failure_detail = "stalled: " + words;
  return p;
}

TEST(DecideProgress, AStalledAttemptRestartsAsStalledNamingEveryStalledPod) {
  auto pods = AllPods(1);
  pods[1] = Stalled(pods[1], "rank 2 sent no progress report for 61s (last step 40 at 2023-12-31T23:58:59Z)");
  pods[3] = Stalled(pods[3], "rank 6 sent no progress report for 60s (last step 41 at 2023-12-31T23:59:00Z)");
  Plan p = Decide(RunningJob(), pods, Cm(1, true), kNow);
  EXPECT_EQ(p.status.state, "Restarting");
  EXPECT_EQ(p.status.restarts, 1) << "a stall is a restart";
  const api::Condition* restarting = p.status.Find("Restarting");
  ASSERT_NE(restarting, nullptr);
  EXPECT_EQ(restarting->reason, "Stalled");
  EXPECT_EQ(restarting->message,
            "attempt 1 stalled (pod demo-1: stalled: rank 2 sent no progress report for 61s (last step 40 at "
            "2023-12-31T23:58:59Z); pod demo-3: stalled: rank 6 sent no progress report for 60s (last step 41 at "
            "2023-12-31T23:59:00Z)); attempt 2 starts in 10s");
  EXPECT_EQ(p.status.Find("Running")->reason, "Stalled");
  EXPECT_TRUE(HasEvent(p, "Restarting"));
  EXPECT_EQ(p.delete_pods.size(), 4u);
}

TEST(DecideProgress, APodThatFailedOnItsOwnIsNamedBeforeStalledOnes) {
  auto pods = AllPods(1);
  pods[0] = Stalled(pods[0], "rank 0 sent no progress report for 60s");
  pods[2] = FailedPod(2, 1, 3);
  Plan p = Decide(RunningJob(), pods, Cm(1, true), kNow);
  EXPECT_EQ(p.status.Find("Restarting")->reason, "PodFailed");
  EXPECT_NE(p.status.Find("Restarting")->message.find("demo-2"), std::string::npos);
}

TEST(DecideProgress, AStallWithNoRestartsLeftFailsTheJobSayingSo) {
  auto job = RunningJob(4, 3);
  auto pods = AllPods(4);
  pods[1] = Stalled(pods[1], "rank 2 sent no progress report for 61s");
  Plan p = Decide(job, pods, Cm(4, true), kNow);
  EXPECT_EQ(p.status.state, "Failed");
  EXPECT_NE(p.status.Find("Failed")->message.find("rank 2 sent no progress report"), std::string::npos);
}

TEST(DecideProgress, StatusShowsPodZerosNewestReportAndKeepsItWhenThePodGoes) {
  auto pods = AllPods(1);
  pods[0].progress = R"({"attempt":1,"step":120,"total":1000,"time":"2023-12-31T23:59:58Z","metrics":{"loss":1.25}})";
  pods[1].progress = R"({"attempt":1,"step":999,"time":"2023-12-31T23:59:59Z"})";  // not pod 0: not read
  Plan p = Decide(RunningJob(), pods, Cm(1, true), kNow);
  ASSERT_TRUE(p.status.progress.has_value());
  EXPECT_EQ(p.status.progress->step, 120);
  EXPECT_EQ(api::ProgressSummary(*p.status.progress), "120/1000 (12%)");

  auto job = RunningJob();
  job.status.progress = p.status.progress;
  auto later = AllPods(1);
  later[0].progress = "garbage";
  EXPECT_EQ(Decide(job, later, Cm(1, true), kNow).status.progress, p.status.progress) << "a bad report changes nothing";
  later.erase(later.begin());
  EXPECT_EQ(Decide(job, later, Cm(1, true), kNow).status.progress, p.status.progress);
}

}  // namespace
}  // namespace ncclop::policy

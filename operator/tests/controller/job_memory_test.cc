#include "controller/job_memory.h"

#include <gtest/gtest.h>

#include "test_jobs.h"

namespace ncclop::controller {
namespace {

TEST(JobMemory, EachApiWarningIsNewsOncePerJob) {
  JobMemory memory;
  api::NcclJob job = testing::Job();
  EXPECT_TRUE(memory.FirstApiWarning(job, "spec.nodeSelector[beta.kubernetes.io/os]: deprecated"));
  EXPECT_FALSE(memory.FirstApiWarning(job, "spec.nodeSelector[beta.kubernetes.io/os]: deprecated"))
      << "another pod or attempt of the same job";
  EXPECT_TRUE(memory.FirstApiWarning(job, "another text"));

  api::NcclJob again = job;  // deleted and created under the same name
  again.uid = "uid-2";
  EXPECT_TRUE(memory.FirstApiWarning(again, "another text"));

  memory.Forget("ml/demo");
  EXPECT_TRUE(memory.FirstApiWarning(again, "another text"));
}

TEST(JobMemory, AStatusWriteIsRememberedForTheJobsUid) {
  JobMemory memory;
  api::NcclJob job = testing::Job();
  EXPECT_FALSE(memory.SinceStatusWrite(job));
  memory.StatusWritten(job);
  auto since = memory.SinceStatusWrite(job);
  ASSERT_TRUE(since);
  EXPECT_GE(*since, std::chrono::steady_clock::duration::zero());
  EXPECT_LT(*since, std::chrono::minutes(1));

  api::NcclJob again = job;  // deleted and created under the same name
  again.uid = "uid-2";
  EXPECT_FALSE(memory.SinceStatusWrite(again));
  memory.Forget("ml/demo");
  EXPECT_FALSE(memory.SinceStatusWrite(job));
}

TEST(JobMemory, CountsHeldBackAreRememberedUntilAReconcileHoldsNoneBack) {
  JobMemory memory;
  EXPECT_FALSE(memory.SinceCountsHeld("ml/demo"));
  memory.CountsHeld("ml/demo", true);
  auto since = memory.SinceCountsHeld("ml/demo");
  ASSERT_TRUE(since);
  EXPECT_LT(*since, std::chrono::minutes(1));
  memory.CountsHeld("ml/demo", false);
  EXPECT_FALSE(memory.SinceCountsHeld("ml/demo"));
  memory.CountsHeld("ml/demo", true);
  memory.Forget("ml/demo");
  EXPECT_FALSE(memory.SinceCountsHeld("ml/demo"));
}

TEST(JobMemory, ApiWarningsRememberedPerJobAreBounded) {
  JobMemory memory;
  api::NcclJob job = testing::Job();
  for (std::size_t i = 0; i < JobMemory::kMaxApiWarnings; ++i) {
    EXPECT_TRUE(memory.FirstApiWarning(job, "warning " + std::to_string(i)));
  }
  EXPECT_FALSE(memory.FirstApiWarning(job, "one too many")) << "no more events for this job";
}

TEST(JobMemory, PodsGoneDisruptedAreRecalledForTheJobsCurrentAttempt) {
  JobMemory memory;
  api::NcclJob job = testing::Job();
  job.status.attempt = 2;
  const observed::Disruption eviction{"Eviction", "evicted"};
  observed::GoneDisrupted gone{"ml/demo", job.uid, 2, 1, eviction};

  memory.PodGoneDisrupted(gone);
  EXPECT_TRUE(memory.Recall(job).gone_disrupted.empty()) << "a job this process does not know keeps nothing";

  memory.StatusWritten(job);  // now it knows the job
  memory.PodGoneDisrupted(gone);
  EXPECT_EQ(memory.Recall(job).gone_disrupted, (std::map<int, observed::Disruption>{{1, eviction}}));

  api::NcclJob later = job;
  later.status.attempt = 3;
  EXPECT_TRUE(memory.Recall(later).gone_disrupted.empty()) << "of attempt 2 only";
  api::NcclJob again = job;  // deleted and created under the same name
  again.uid = "uid-2";
  EXPECT_TRUE(memory.Recall(again).gone_disrupted.empty());

  observed::GoneDisrupted older = gone;
  older.attempt = 1;
  older.index = 0;
  memory.PodGoneDisrupted(older);
  EXPECT_EQ(memory.Recall(job).gone_disrupted.size(), 1u) << "an older attempt's delete changes nothing";

  memory.PodAt("ml/demo", 1, 1);
  EXPECT_EQ(memory.Recall(job).gone_disrupted.size(), 1u) << "a pod of another attempt";
  memory.PodAt("ml/demo", 2, 1);
  EXPECT_TRUE(memory.Recall(job).gone_disrupted.empty()) << "made again at its index";

  observed::GoneDisrupted newer = gone;
  memory.PodGoneDisrupted(newer);
  newer.attempt = 3;
  newer.index = 0;
  memory.PodGoneDisrupted(newer);
  EXPECT_EQ(memory.Recall(later).gone_disrupted.size(), 1u) << "a newer attempt drops the older one's";
  EXPECT_TRUE(memory.Recall(job).gone_disrupted.empty());

  memory.ChildrenEnsured("ml/demo", job.uid, 0);
  observed::GoneDisrupted earlier_job = newer;  // a late delete of a pod of an earlier job of the name
  earlier_job.job_uid = "uid-0";
  earlier_job.attempt = 7;
  memory.PodGoneDisrupted(earlier_job);
  EXPECT_EQ(memory.Recall(later).gone_disrupted.size(), 1u) << "this job's are kept";

  memory.Forget("ml/demo");
  EXPECT_TRUE(memory.Recall(later).gone_disrupted.empty());
}

}  // namespace
}  // namespace ncclop::controller

// Decide and the id: published for the current attempt only, once every pod of it is seen, and
// recorded in the status from the ConfigMap after a crash or once the attempt has ended.
#include "policy/decide.h"

#include <gtest/gtest.h>

#include <string>

#include "decide_fixtures.h"

namespace ncclop::policy {
namespace {

using namespace std::chrono_literals;
using observed::ObservedPod;
using testing::AllPods;
using testing::Cm;
using testing::FailedPod;
using testing::HasEvent;
using testing::kNow;
using testing::Pod;
using testing::RunningJob;

TEST(Decide, PublishesTheRootsIdOnlyForTheCurrentAttempt) {
  auto pods = AllPods(2);
  pods[0].unique_id = "QUJD";
  pods[0].unique_id_attempt = 1;  // left over from attempt 1
  Plan stale = Decide(RunningJob(2, 1), pods, Cm(2), kNow);
  EXPECT_FALSE(stale.publish);

  pods[0].unique_id_attempt = 2;
  Plan p = Decide(RunningJob(2, 1), pods, Cm(2), kNow);
  ASSERT_TRUE(p.publish);
  EXPECT_EQ(p.publish->unique_id, "QUJD");
  EXPECT_TRUE(p.write_configmap);
  EXPECT_EQ(p.status.id_published_time, "2024-01-01T00:00:00Z");
  EXPECT_TRUE(p.status.IsTrue("IdPublished"));
  EXPECT_TRUE(HasEvent(p, "IdPublished"));
  ASSERT_TRUE(p.id_publish_latency_seconds);
  EXPECT_DOUBLE_EQ(*p.id_publish_latency_seconds, 30.0);
  for (const Event& e : p.events) EXPECT_EQ(e.message.find("QUJD"), std::string::npos) << "the id leaked into an event";
}

TEST(Decide, SeveralRootsPublishTheListOfTheAttemptOnlyWhenAllAreIn) {
  auto job = RunningJob(2, 1);  // 4 pods of 2 GPUs; 2 roots: ranks 0-3 and 4-7, pods 0 and 2
  job.spec.bootstrap_roots = 2;
  job.spec.bootstrap_roots_set = true;
  auto pods = AllPods(2);
  pods[0].unique_id = "QUFB";
  pods[0].unique_id_attempt = 2;
  pods[2].unique_id = "QkJC";
  pods[2].unique_id_attempt = 1;  // a root of the stale attempt: refused
  EXPECT_FALSE(Decide(job, pods, Cm(2), kNow).publish);
  pods[2].unique_id_attempt = 2;
  Plan p = Decide(job, pods, Cm(2), kNow);
  ASSERT_TRUE(p.publish);
  EXPECT_EQ(p.publish->unique_id, "QUFB,QkJC");
  EXPECT_TRUE(HasEvent(p, "IdPublished"));
  for (const Event& e : p.events) EXPECT_EQ(e.message.find("QkJC"), std::string::npos) << "an id leaked into an event";
}

TEST(Decide, PublishesOnlyOnceEveryPodOfTheAttemptIsSeen) {
  auto pods = AllPods(1);
  pods[0].unique_id = "QUJD";
  pods[0].unique_id_attempt = 1;
  pods.pop_back();  // created, but not in the cache yet
  Plan p = Decide(RunningJob(), pods, Cm(1), kNow);
  EXPECT_FALSE(p.publish) << "once the id is out, a missing pod counts as disappeared";
  EXPECT_EQ(p.create_pods, std::vector<int>{3});
}

TEST(Decide, DoesNotRepublishButFillsStatusAfterACrash) {
  auto pods = AllPods(1);
  pods[0].unique_id = "QUJD";
  pods[0].unique_id_attempt = 1;
  Plan p = Decide(RunningJob(), pods, Cm(1, true), kNow + 5s);
  EXPECT_FALSE(p.publish);
  EXPECT_EQ(p.status.id_published_time, "2024-01-01T00:00:00Z");
  EXPECT_TRUE(p.status.IsTrue("IdPublished"));
  EXPECT_TRUE(HasEvent(p, "IdPublished")) << "the fast path publishes; this path records the event";
  EXPECT_FALSE(p.id_publish_latency_seconds) << "the writer of the ConfigMap recorded the latency";

  api::NcclJob recorded = RunningJob();
  recorded.status = p.status;
  Plan again = Decide(recorded, pods, Cm(1, true), kNow + 6s);
  EXPECT_FALSE(HasEvent(again, "IdPublished")) << "once per attempt";
}

TEST(Decide, AFinishedJobNoLongerWaitsForAnId) {
  auto job = RunningJob();
  job.spec.failure_policy.max_restarts = 0;
  Plan started = Decide(testing::Job(4, 2), {}, {}, kNow);
  job.status.conditions = started.status.conditions;  // IdPublished=False WaitingForRoot
  ASSERT_EQ(job.status.Find("IdPublished")->reason, "WaitingForRoot");
  auto pods = AllPods(1);
  pods[2] = FailedPod(2, 1, 1);
  Plan failed = Decide(job, pods, Cm(1), kNow);
  ASSERT_EQ(failed.status.state, "Failed");
  EXPECT_EQ(failed.status.Find("IdPublished")->reason, "JobFinished");
  EXPECT_EQ(failed.status.Find("IdPublished")->status, "False");
  EXPECT_NE(failed.status.Find("Failed")->message.find("failurePolicy.maxRestarts is 0"), std::string::npos)
      << failed.status.Find("Failed")->message;

  Plan succeeded = Decide(job, AllPods(1, "Succeeded"), Cm(1), kNow);
  ASSERT_EQ(succeeded.status.state, "Succeeded");
  EXPECT_EQ(succeeded.status.Find("IdPublished")->reason, "JobFinished");
}

// Issue 11: the id went into the ConfigMap (fast path) and the operator died before the status;
// by the time the next one looks, every trainer has exited 0. Status comes from what the API
// server holds: IdPublished=True at the ConfigMap's publishedAt, not "finished before an id".
TEST(Decide, AnIdInTheConfigMapIsRecordedEvenWhenTheAttemptEndedSince) {
  auto job = RunningJob();
  job.status.conditions = Decide(testing::Job(4, 2), {}, {}, kNow).status.conditions;  // IdPublished=False WaitingForRoot
  Plan p = Decide(job, AllPods(1, "Succeeded"), Cm(1, true), kNow + 30s);
  ASSERT_EQ(p.status.state, "Succeeded");
  ASSERT_NE(p.status.Find("IdPublished"), nullptr);
  EXPECT_EQ(p.status.Find("IdPublished")->status, "True");
  EXPECT_EQ(p.status.Find("IdPublished")->reason, "Published");
  EXPECT_EQ(p.status.id_published_time, "2024-01-01T00:00:00Z") << "the ConfigMap's publishedAt";
  EXPECT_TRUE(HasEvent(p, "IdPublished"));

  auto failed_job = RunningJob();
  failed_job.status.conditions = job.status.conditions;
  failed_job.spec.failure_policy.max_restarts = 0;
  auto pods = AllPods(1);
  pods[2] = FailedPod(2, 1, 1);
  Plan failed = Decide(failed_job, pods, Cm(1, true), kNow + 30s);
  ASSERT_EQ(failed.status.state, "Failed");
  EXPECT_EQ(failed.status.Find("IdPublished")->reason, "Published") << "the id did go out before the failure";
}

// A job an earlier operator already finished with IdPublished=False although the ConfigMap
// holds the id (the same crash, before this fix): the status is put right, once.
TEST(Decide, AFinishedJobsIdConditionFollowsTheConfigMap) {
  auto job = RunningJob();
  job.status.conditions = Decide(testing::Job(4, 2), {}, {}, kNow).status.conditions;
  job.status = Decide(job, AllPods(1, "Succeeded"), Cm(1), kNow).status;  // no id: JobFinished
  ASSERT_EQ(job.status.Find("IdPublished")->reason, "JobFinished");
  Plan p = Decide(job, AllPods(1, "Succeeded"), Cm(1, true), kNow + 5s);
  EXPECT_EQ(p.status.Find("IdPublished")->reason, "Published");
  EXPECT_EQ(p.status.id_published_time, "2024-01-01T00:00:00Z");
  job.status = p.status;
  EXPECT_FALSE(HasEvent(Decide(job, AllPods(1, "Succeeded"), Cm(1, true), kNow + 6s), "IdPublished")) << "once";
}

}  // namespace
}  // namespace ncclop::policy

#include <gtest/gtest.h>

#include "policy/fast_publish.h"
#include "test_jobs.h"

namespace ncclop::policy {
namespace {

using Json = nlohmann::json;

const api::Time kNow = *api::ParseTime("2024-01-01T00:00:00Z");

api::NcclJob JobAt(int attempt) {
  api::NcclJob job = testing::Job(4, 2);
  job.status.attempt = attempt;
  job.status.state = api::state::kPending;
  job.status.attempt_start_time = "2023-12-31T23:59:30Z";
  return job;
}

RootPod Root(int attempt, int id_attempt, const std::string& id = "QUJD") {
  ObservedPod p = testing::Pod(0, attempt, "Running");
  p.unique_id = id;
  p.unique_id_attempt = id_attempt;
  return {p, true};
}

ObservedConfigMap Cm(int attempt, bool has_id = false, const std::string& uid = "uid-1") {
  ObservedConfigMap cm;
  cm.exists = true;
  cm.attempt = attempt;
  cm.has_id = has_id;
  cm.job_uid = uid;
  return cm;
}

TEST(DecideFastPublish, PublishesWhenJobPodAnnotationAndConfigMapAgreeOnTheAttempt) {
  FastPublish d = DecideFastPublish(JobAt(2), Root(2, 2), 4, Cm(2), kNow);
  ASSERT_TRUE(d.publish) << d.skipped_because;
  EXPECT_EQ(d.publish->unique_id, "QUJD");
  EXPECT_EQ(d.publish->published_at, "2024-01-01T00:00:00Z");
}

TEST(DecideFastPublish, SkipsAStaleAttemptAnywhere) {
  EXPECT_FALSE(DecideFastPublish(JobAt(2), Root(2, 1), 4, Cm(2), kNow).publish) << "id left over from attempt 1";
  EXPECT_FALSE(DecideFastPublish(JobAt(2), Root(1, 1), 4, Cm(2), kNow).publish) << "root pod of attempt 1";
  EXPECT_FALSE(DecideFastPublish(JobAt(1), Root(2, 2), 4, Cm(1), kNow).publish) << "job cache behind the pod";
  EXPECT_FALSE(DecideFastPublish(JobAt(2), Root(2, 2), 4, Cm(1), kNow).publish) << "ConfigMap not reset to attempt 2 yet";
  FastPublish d = DecideFastPublish(JobAt(2), Root(2, 1), 4, Cm(2), kNow);
  EXPECT_EQ(d.skipped_because, "the root pod's id is of another attempt");
}

TEST(DecideFastPublish, SkipsAnotherJobsObjects) {
  RootPod foreign = Root(1, 1);
  foreign.owned_by_job = false;
  EXPECT_FALSE(DecideFastPublish(JobAt(1), foreign, 4, Cm(1), kNow).publish);
  FastPublish d = DecideFastPublish(JobAt(1), Root(1, 1), 4, Cm(1, false, "uid-of-an-old-job"), kNow);
  EXPECT_FALSE(d.publish);
  EXPECT_EQ(d.skipped_because, "the ConfigMap belongs to another job of the same name");
}

TEST(DecideFastPublish, SkipsWhenAlreadyPublished) {
  FastPublish d = DecideFastPublish(JobAt(1), Root(1, 1), 4, Cm(1, true), kNow);
  EXPECT_FALSE(d.publish);
  EXPECT_EQ(d.skipped_because, "the ConfigMap already holds this attempt's id");
}

TEST(DecideFastPublish, SkipsFinishedSuspendedRestartingAndDeletedJobs) {
  api::NcclJob failed = JobAt(1);
  failed.status.conditions.push_back({"Failed", "True", "MaxRestartsExceeded", "", "", 1});
  EXPECT_FALSE(DecideFastPublish(failed, Root(1, 1), 4, Cm(1), kNow).publish);

  api::NcclJob succeeded = JobAt(1);
  succeeded.status.conditions.push_back({"Succeeded", "True", "AllTrainersSucceeded", "", "", 1});
  EXPECT_FALSE(DecideFastPublish(succeeded, Root(1, 1), 4, Cm(1), kNow).publish);

  api::NcclJob suspending = JobAt(1);
  suspending.spec.suspend = true;  // not yet acted on: the pods are about to go
  EXPECT_EQ(DecideFastPublish(suspending, Root(1, 1), 4, Cm(1), kNow).skipped_because, "the job is suspended");

  api::NcclJob suspended = JobAt(1);
  suspended.status.conditions.push_back({"Suspended", "True", "Suspended", "", "", 1});
  EXPECT_FALSE(DecideFastPublish(suspended, Root(1, 1), 4, Cm(1), kNow).publish);

  api::NcclJob restarting = JobAt(1);
  restarting.status.conditions.push_back({"Restarting", "True", "PodFailed", "", "", 1});
  EXPECT_FALSE(DecideFastPublish(restarting, Root(1, 1), 4, Cm(1), kNow).publish);

  api::NcclJob deleted = JobAt(1);
  deleted.being_deleted = true;
  EXPECT_FALSE(DecideFastPublish(deleted, Root(1, 1), 4, Cm(1), kNow).publish);

  api::NcclJob invalid = JobAt(1);
  invalid.spec_error = "spec.replicas: must be at least 1";
  EXPECT_FALSE(DecideFastPublish(invalid, Root(1, 1), 4, Cm(1), kNow).publish);
}

TEST(DecideFastPublish, WaitsUntilEveryPodOfTheAttemptIsInTheCache) {
  FastPublish d = DecideFastPublish(JobAt(1), Root(1, 1), 3, Cm(1), kNow);
  EXPECT_FALSE(d.publish) << "a pod not yet in the cache would count as disappeared once the id is out";
  EXPECT_TRUE(d.retry_soon);
  EXPECT_FALSE(DecideFastPublish(JobAt(1), Root(1, 1), 3, Cm(1, true), kNow).retry_soon) << "published: done";
}

TEST(PodsOfAttempt, CountsDistinctIndicesOfTheAttemptInRange) {
  std::vector<ObservedPod> pods = {testing::Pod(0, 2), testing::Pod(1, 2), testing::Pod(1, 2), testing::Pod(2, 1),
                                   testing::Pod(7, 2), testing::Pod(-1, 2)};
  EXPECT_EQ(PodsOfAttempt(pods, 2, 4), 2);
  EXPECT_EQ(PodsOfAttempt(pods, 1, 4), 1);
}

TEST(DecideFastPublish, SkipsMissingOrUnusableRootAndConfigMap) {
  EXPECT_FALSE(DecideFastPublish(JobAt(1), std::nullopt, 4, Cm(1), kNow).publish);
  EXPECT_FALSE(DecideFastPublish(JobAt(0), Root(0, 0), 4, Cm(0), kNow).publish) << "no attempt yet";
  EXPECT_FALSE(DecideFastPublish(JobAt(1), Root(1, 1, ""), 4, Cm(1), kNow).publish) << "no id";
  EXPECT_FALSE(DecideFastPublish(JobAt(1), Root(1, 1), 4, ObservedConfigMap{}, kNow).publish) << "no ConfigMap";

  RootPod terminating = Root(1, 1);
  terminating.pod.terminating = true;
  EXPECT_FALSE(DecideFastPublish(JobAt(1), terminating, 4, Cm(1), kNow).publish);
  RootPod failed = Root(1, 1);
  failed.pod.failed = true;
  EXPECT_FALSE(DecideFastPublish(JobAt(1), failed, 4, Cm(1), kNow).publish);
  RootPod not_root = Root(1, 1);
  not_root.pod.index = 3;
  EXPECT_FALSE(DecideFastPublish(JobAt(1), not_root, 4, Cm(1), kNow).publish);
}

Json PodJson(const std::string& index, const std::string& id, const std::string& id_attempt) {
  Json pod = {{"metadata", {{"name", "demo-" + index}, {"labels", {{"nccl.dev/index", index}}}, {"annotations", Json::object()}}}};
  if (!id.empty()) pod["metadata"]["annotations"]["nccl.dev/unique-id"] = id;
  if (!id_attempt.empty()) pod["metadata"]["annotations"]["nccl.dev/unique-id-attempt"] = id_attempt;
  return pod;
}

TEST(RootIdAnnounced, OnlyANewIdOnTheRootPod) {
  Json without = PodJson("0", "", "");
  Json with = PodJson("0", "QUJD", "1");
  EXPECT_TRUE(RootIdAnnounced(&without, with));
  EXPECT_TRUE(RootIdAnnounced(nullptr, with)) << "seen first with the id (e.g. after a relist)";
  EXPECT_FALSE(RootIdAnnounced(&with, with)) << "a status change of the root pod";
  EXPECT_FALSE(RootIdAnnounced(&without, without));
  Json next_attempt = PodJson("0", "QUJD", "2");
  EXPECT_TRUE(RootIdAnnounced(&with, next_attempt));
  Json other = PodJson("1", "QUJD", "1");
  EXPECT_FALSE(RootIdAnnounced(nullptr, other)) << "only index 0 publishes";
  EXPECT_FALSE(RootIdAnnounced(nullptr, Json::object()));
}

TEST(ObserveConfigMap, ReadsTheJobUid) {
  ObservedConfigMap cm = ObserveConfigMap(Json::parse(R"({"data":{"attempt":"2","jobUID":"uid-1","uniqueId":"QUJD"}})"));
  EXPECT_EQ(cm.job_uid, "uid-1");
  EXPECT_EQ(cm.attempt, 2);
  EXPECT_TRUE(cm.has_id);
}

}  // namespace
}  // namespace ncclop::policy

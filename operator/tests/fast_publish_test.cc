#include <gtest/gtest.h>

#include "policy/fast_publish.h"
#include "policy/root_ids.h"
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

// The new attempt's pods are made while the last old ones go (decide.cc): an old pod of
// another name still there holds the id back, and the publish is tried again soon.
TEST(DecideFastPublish, WaitsWhileAPodOfAnotherAttemptIsThere) {
  std::vector<ObservedPod> pods;
  for (int i = 0; i < 4; ++i) pods.push_back(testing::Pod(i, 2));
  ObservedPod old = testing::Pod(9, 1);
  old.name = "demo-extra";
  old.terminating = true;
  pods.push_back(old);
  FastPublish d = DecideFastPublish(JobAt(2), Root(2, 2), 4, Cm(2), kNow, pods);
  EXPECT_FALSE(d.publish);
  EXPECT_EQ(d.skipped_because, "a pod of another attempt is still there");
  EXPECT_TRUE(d.retry_soon);
  pods.pop_back();
  EXPECT_TRUE(DecideFastPublish(JobAt(2), Root(2, 2), 4, Cm(2), kNow, pods).publish);
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
  Json other = PodJson("2", "QUJD", "1");
  EXPECT_TRUE(RootIdAnnounced(nullptr, other)) << "a bootstrap root other than pod 0";
  Json no_index = PodJson("", "QUJD", "1");
  EXPECT_FALSE(RootIdAnnounced(nullptr, no_index)) << "not a pod of a job";
  EXPECT_FALSE(RootIdAnnounced(nullptr, Json::object()));
}

// 4 pods of 1 GPU, 2 bootstrap roots: pods 0 and 2 make the ids.
api::NcclJob TwoRootJobAt(int attempt) {
  api::NcclJob job = JobAt(attempt);
  job.spec.gpus_per_pod = 1;
  job.spec.bootstrap_roots = 2;
  job.spec.bootstrap_roots_set = true;
  return job;
}

std::vector<ObservedPod> PodsWithIds(int attempt, int id2_attempt, int pod2_attempt) {
  std::vector<ObservedPod> pods;
  for (int i = 0; i < 4; ++i) pods.push_back(testing::Pod(i, i == 2 ? pod2_attempt : attempt));
  pods[0].unique_id = "QUFB";
  pods[0].unique_id_attempt = attempt;
  pods[2].unique_id = "QkJC";
  pods[2].unique_id_attempt = id2_attempt;
  return pods;
}

TEST(CollectRootIds, ListsEveryRootsIdInRootOrderOnceAllAreIn) {
  RootIds ids = CollectRootIds(TwoRootJobAt(2), PodsWithIds(2, 2, 2), 2);
  ASSERT_TRUE(ids.list);
  EXPECT_EQ(*ids.list, "QUFB,QkJC");
  EXPECT_EQ(SplitIdList(*ids.list), (std::vector<std::string>{"QUFB", "QkJC"}));
  std::vector<ObservedPod> pods = PodsWithIds(2, 2, 2);
  pods[2].unique_id.clear();
  ids = CollectRootIds(TwoRootJobAt(2), pods, 2);
  EXPECT_FALSE(ids.list);
  EXPECT_EQ(ids.missing, "root pod demo-2 has not reported an id");
  pods.erase(pods.begin() + 2);
  EXPECT_EQ(CollectRootIds(TwoRootJobAt(2), pods, 2).missing, "root pod demo-2 is not in the cache");
}

TEST(CollectRootIds, NeverMixesAttempts) {
  // Pod 2 still carries attempt 1's id: nothing is published for attempt 2.
  RootIds ids = CollectRootIds(TwoRootJobAt(2), PodsWithIds(2, 1, 2), 2);
  EXPECT_FALSE(ids.list);
  EXPECT_EQ(ids.missing, "root pod demo-2 reported an id of another attempt");
  // Pod 2 itself is of attempt 1 (not yet replaced).
  EXPECT_EQ(CollectRootIds(TwoRootJobAt(2), PodsWithIds(2, 2, 1), 2).missing, "root pod demo-2 is of another attempt");
  std::vector<ObservedPod> pods = PodsWithIds(2, 2, 2);
  pods[2].terminating = true;
  EXPECT_EQ(CollectRootIds(TwoRootJobAt(2), pods, 2).missing, "root pod demo-2 is being deleted");
}

TEST(CollectRootIds, OneRootIsPodZerosIdAsBefore) {
  api::NcclJob job = JobAt(1);
  std::vector<ObservedPod> pods = PodsWithIds(1, 1, 1);
  RootIds ids = CollectRootIds(job, pods, 1);
  ASSERT_TRUE(ids.list);
  EXPECT_EQ(*ids.list, "QUFB");
}

TEST(DecideFastPublish, SeveralRootsPublishTheListOnlyWhenEveryRootReported) {
  std::vector<ObservedPod> pods = PodsWithIds(2, 2, 2);
  RootPod root{pods[0], true};
  FastPublish d = DecideFastPublish(TwoRootJobAt(2), root, 4, Cm(2), kNow, pods);
  ASSERT_TRUE(d.publish) << d.skipped_because;
  EXPECT_EQ(d.publish->unique_id, "QUFB,QkJC");
  pods = PodsWithIds(2, 1, 2);
  d = DecideFastPublish(TwoRootJobAt(2), root, 4, Cm(2), kNow, pods);
  EXPECT_FALSE(d.publish);
  EXPECT_EQ(d.skipped_because, "root pod demo-2 reported an id of another attempt");
}

TEST(ObserveConfigMap, ReadsTheJobUid) {
  ObservedConfigMap cm = ObserveConfigMap(Json::parse(R"({"data":{"attempt":"2","jobUID":"uid-1","uniqueId":"QUJD"}})"));
  EXPECT_EQ(cm.job_uid, "uid-1");
  EXPECT_EQ(cm.attempt, 2);
  EXPECT_TRUE(cm.has_id);
}

}  // namespace
}  // namespace ncclop::policy

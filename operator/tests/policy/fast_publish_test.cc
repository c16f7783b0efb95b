#include "policy/fast_publish.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "publish_fixtures.h"

namespace ncclop::policy {
namespace {

using Json = nlohmann::json;
using observed::ObservedConfigMap;
using observed::ObservedPod;
using testing::ConfigMapAt;
using testing::Fast;
using testing::JobAt;
using testing::kNow;
using testing::Pods;
using testing::PodsWithIds;
using testing::Root;
using testing::TwoRootJobAt;

Json PodJson(const std::string& index, const std::string& id, const std::string& id_attempt) {
  Json pod = {{"metadata", {{"name", "demo-" + index}, {"labels", {{"nccl.dev/index", index}}}, {"annotations", Json::object()}}}};
  if (!id.empty()) pod["metadata"]["annotations"]["nccl.dev/unique-id"] = id;
  if (!id_attempt.empty()) pod["metadata"]["annotations"]["nccl.dev/unique-id-attempt"] = id_attempt;
  return pod;
}

TEST(DecideFastPublish, PublishesWhenJobPodAnnotationAndConfigMapAgreeOnTheAttempt) {
  PublishDecision d = Fast(JobAt(2), Pods(Root(2, 2), 2), ConfigMapAt(2));
  ASSERT_TRUE(d.publish) << d.skipped_because;
  EXPECT_EQ(d.publish->unique_id, "QUJD");
  EXPECT_EQ(d.publish->published_at, "2024-01-01T00:00:00Z");
}

TEST(DecideFastPublish, SkipsAStaleAttemptAnywhere) {
  EXPECT_FALSE(Fast(JobAt(2), Pods(Root(2, 1), 2), ConfigMapAt(2)).publish) << "id left over from attempt 1";
  EXPECT_FALSE(Fast(JobAt(2), Pods(Root(1, 1), 2), ConfigMapAt(2)).publish) << "root pod of attempt 1";
  EXPECT_FALSE(Fast(JobAt(1), Pods(Root(2, 2), 2), ConfigMapAt(1)).publish) << "job cache behind the pod";
  EXPECT_FALSE(Fast(JobAt(2), Pods(Root(2, 2), 2), ConfigMapAt(1)).publish) << "ConfigMap not reset to attempt 2 yet";
  PublishDecision d = Fast(JobAt(2), Pods(Root(2, 1), 2), ConfigMapAt(2));
  EXPECT_EQ(d.skipped_because, "the root pod's id is of another attempt");
}

// The new attempt's pods are made while the last old ones go (decide.cc): an old pod of
// another name still there holds the id back, and the publish is tried again soon.
TEST(DecideFastPublish, WaitsWhileAPodOfAnotherAttemptIsThere) {
  std::vector<ObservedPod> pods = Pods(Root(2, 2), 2);
  ObservedPod old = testing::Pod(9, 1);
  old.name = "demo-extra";
  old.terminating = true;
  pods.push_back(old);
  PublishDecision d = Fast(JobAt(2), pods, ConfigMapAt(2));
  EXPECT_FALSE(d.publish);
  EXPECT_EQ(d.skipped_because, "a pod of another attempt is still there");
  EXPECT_TRUE(d.retry_soon);
  pods.pop_back();
  EXPECT_TRUE(Fast(JobAt(2), pods, ConfigMapAt(2)).publish);
}

TEST(DecideFastPublish, SkipsAnotherJobsObjects) {
  // A root pod of another job of the same name has no owner reference to this job's UID:
  // controller/observe.h leaves it out, so the view has no root.
  std::vector<ObservedPod> without_root = Pods(Root(1, 1), 1);
  without_root.erase(without_root.begin());
  EXPECT_FALSE(Fast(JobAt(1), without_root, ConfigMapAt(1)).publish);
  PublishDecision d = Fast(JobAt(1), Pods(Root(1, 1), 1), ConfigMapAt(1, false, "uid-of-an-old-job"));
  EXPECT_FALSE(d.publish);
  EXPECT_EQ(d.skipped_because, "the ConfigMap belongs to another job of the same name");
}

TEST(DecideFastPublish, SkipsWhenAlreadyPublished) {
  PublishDecision d = Fast(JobAt(1), Pods(Root(1, 1), 1), ConfigMapAt(1, true));
  EXPECT_FALSE(d.publish);
  EXPECT_EQ(d.skipped_because, "the ConfigMap already holds this attempt's id");
}

TEST(DecideFastPublish, SkipsFinishedSuspendedRestartingAndDeletedJobs) {
  const std::vector<ObservedPod> pods = Pods(Root(1, 1), 1);
  api::NcclJob failed = JobAt(1);
  failed.status.conditions.push_back({"Failed", "True", "MaxRestartsExceeded", "", "", 1});
  EXPECT_FALSE(Fast(failed, pods, ConfigMapAt(1)).publish);

  api::NcclJob succeeded = JobAt(1);
  succeeded.status.conditions.push_back({"Succeeded", "True", "AllTrainersSucceeded", "", "", 1});
  EXPECT_FALSE(Fast(succeeded, pods, ConfigMapAt(1)).publish);

  api::NcclJob suspending = JobAt(1);
  suspending.spec.suspend = true;  // not yet acted on: the pods are about to go
  EXPECT_EQ(Fast(suspending, pods, ConfigMapAt(1)).skipped_because, "the job is suspended");

  api::NcclJob suspended = JobAt(1);
  suspended.status.conditions.push_back({"Suspended", "True", "Suspended", "", "", 1});
  EXPECT_FALSE(Fast(suspended, pods, ConfigMapAt(1)).publish);

  api::NcclJob restarting = JobAt(1);
  restarting.status.conditions.push_back({"Restarting", "True", "PodFailed", "", "", 1});
  EXPECT_FALSE(Fast(restarting, pods, ConfigMapAt(1)).publish);

  api::NcclJob deleted = JobAt(1);
  deleted.being_deleted = true;
  EXPECT_FALSE(Fast(deleted, pods, ConfigMapAt(1)).publish);

  api::NcclJob invalid = JobAt(1);
  invalid.spec_error = "spec.replicas: must be at least 1";
  EXPECT_FALSE(Fast(invalid, pods, ConfigMapAt(1)).publish);
}

TEST(DecideFastPublish, WaitsUntilEveryPodOfTheAttemptIsInTheCache) {
  PublishDecision d = Fast(JobAt(1), Pods(Root(1, 1), 1, 3), ConfigMapAt(1));
  EXPECT_FALSE(d.publish) << "a pod not yet in the cache would count as disappeared once the id is out";
  EXPECT_TRUE(d.retry_soon);
  EXPECT_FALSE(Fast(JobAt(1), Pods(Root(1, 1), 1, 3), ConfigMapAt(1, true)).retry_soon) << "published: done";
}

TEST(DecideFastPublish, SkipsMissingOrUnusableRootAndConfigMap) {
  std::vector<ObservedPod> no_root = Pods(Root(1, 1), 1);
  no_root.erase(no_root.begin());
  EXPECT_FALSE(Fast(JobAt(1), no_root, ConfigMapAt(1)).publish);
  EXPECT_FALSE(Fast(JobAt(0), Pods(Root(0, 0), 0), ConfigMapAt(0)).publish) << "no attempt yet";
  EXPECT_FALSE(Fast(JobAt(1), Pods(Root(1, 1, ""), 1), ConfigMapAt(1)).publish) << "no id";
  EXPECT_FALSE(Fast(JobAt(1), Pods(Root(1, 1), 1), ObservedConfigMap{}).publish) << "no ConfigMap";

  ObservedPod terminating = Root(1, 1);
  terminating.terminating = true;
  EXPECT_FALSE(Fast(JobAt(1), Pods(terminating, 1), ConfigMapAt(1)).publish);
  ObservedPod failed = Root(1, 1);
  failed.failed = true;
  EXPECT_FALSE(Fast(JobAt(1), Pods(failed, 1), ConfigMapAt(1)).publish);
  ObservedPod not_root = Root(1, 1);
  not_root.index = 3;
  EXPECT_FALSE(Fast(JobAt(1), Pods(not_root, 1), ConfigMapAt(1)).publish);
}

TEST(DecideFastPublish, SeveralRootsPublishTheListOnlyWhenEveryRootReported) {
  PublishDecision d = Fast(TwoRootJobAt(2), PodsWithIds(2, 2, 2), ConfigMapAt(2));
  ASSERT_TRUE(d.publish) << d.skipped_because;
  EXPECT_EQ(d.publish->unique_id, "QUFB,QkJC");
  d = Fast(TwoRootJobAt(2), PodsWithIds(2, 1, 2), ConfigMapAt(2));
  EXPECT_FALSE(d.publish);
  EXPECT_EQ(d.skipped_because, "root pod demo-2 reported an id of another attempt");
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

}  // namespace
}  // namespace ncclop::policy

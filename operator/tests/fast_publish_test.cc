#include <gtest/gtest.h>

#include "observed/attempt.h"
#include "observed/ownership.h"
#include "policy/fast_publish.h"
#include "policy/decide.h"
#include "policy/publish_rule.h"
#include "policy/root_ids.h"
#include "test_jobs.h"

namespace ncclop::policy {
namespace {

using Json = nlohmann::json;
using observed::ObservedConfigMap;
using observed::ObservedPod;
using observed::ObserveConfigMap;

const api::Time kNow = *api::ParseTime("2024-01-01T00:00:00Z");

api::NcclJob JobAt(int attempt) {
  api::NcclJob job = testing::Job(4, 2);
  job.status.attempt = attempt;
  job.status.state = api::state::kPending;
  job.status.attempt_start_time = "2023-12-31T23:59:30Z";
  return job;
}

ObservedPod Root(int attempt, int id_attempt, const std::string& id = "QUJD") {
  ObservedPod p = testing::Pod(0, attempt, "Running");
  p.unique_id = id;
  p.unique_id_attempt = id_attempt;
  return p;
}

// The root and pods 1..present-1 of `attempt`: what the cache holds of the job's pods.
std::vector<ObservedPod> Pods(const ObservedPod& root, int attempt, int present = 4) {
  std::vector<ObservedPod> pods = {root};
  for (int i = 1; i < present; ++i) pods.push_back(testing::Pod(i, attempt));
  return pods;
}

ObservedConfigMap Cm(int attempt, bool has_id = false, const std::string& uid = "uid-1") {
  ObservedConfigMap cm;
  cm.exists = true;
  cm.attempt = attempt;
  cm.has_id = has_id;
  cm.job_uid = uid;
  return cm;
}

PublishDecision Fast(const api::NcclJob& job, const std::vector<ObservedPod>& pods, const ObservedConfigMap& cm) {
  return DecideFastPublish(job, observed::ViewAttempt(pods, job.status.attempt, job.spec.replicas), cm, kNow);
}

TEST(DecideFastPublish, PublishesWhenJobPodAnnotationAndConfigMapAgreeOnTheAttempt) {
  PublishDecision d = Fast(JobAt(2), Pods(Root(2, 2), 2), Cm(2));
  ASSERT_TRUE(d.publish) << d.skipped_because;
  EXPECT_EQ(d.publish->unique_id, "QUJD");
  EXPECT_EQ(d.publish->published_at, "2024-01-01T00:00:00Z");
}

TEST(DecideFastPublish, SkipsAStaleAttemptAnywhere) {
  EXPECT_FALSE(Fast(JobAt(2), Pods(Root(2, 1), 2), Cm(2)).publish) << "id left over from attempt 1";
  EXPECT_FALSE(Fast(JobAt(2), Pods(Root(1, 1), 2), Cm(2)).publish) << "root pod of attempt 1";
  EXPECT_FALSE(Fast(JobAt(1), Pods(Root(2, 2), 2), Cm(1)).publish) << "job cache behind the pod";
  EXPECT_FALSE(Fast(JobAt(2), Pods(Root(2, 2), 2), Cm(1)).publish) << "ConfigMap not reset to attempt 2 yet";
  PublishDecision d = Fast(JobAt(2), Pods(Root(2, 1), 2), Cm(2));
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
  PublishDecision d = Fast(JobAt(2), pods, Cm(2));
  EXPECT_FALSE(d.publish);
  EXPECT_EQ(d.skipped_because, "a pod of another attempt is still there");
  EXPECT_TRUE(d.retry_soon);
  pods.pop_back();
  EXPECT_TRUE(Fast(JobAt(2), pods, Cm(2)).publish);
}

TEST(DecideFastPublish, SkipsAnotherJobsObjects) {
  // A root pod of another job of the same name has no owner reference to this job's UID:
  // controller/observe.h leaves it out, so the view has no root.
  std::vector<ObservedPod> without_root = Pods(Root(1, 1), 1);
  without_root.erase(without_root.begin());
  EXPECT_FALSE(Fast(JobAt(1), without_root, Cm(1)).publish);
  PublishDecision d = Fast(JobAt(1), Pods(Root(1, 1), 1), Cm(1, false, "uid-of-an-old-job"));
  EXPECT_FALSE(d.publish);
  EXPECT_EQ(d.skipped_because, "the ConfigMap belongs to another job of the same name");
}

TEST(DecideFastPublish, SkipsWhenAlreadyPublished) {
  PublishDecision d = Fast(JobAt(1), Pods(Root(1, 1), 1), Cm(1, true));
  EXPECT_FALSE(d.publish);
  EXPECT_EQ(d.skipped_because, "the ConfigMap already holds this attempt's id");
}

TEST(DecideFastPublish, SkipsFinishedSuspendedRestartingAndDeletedJobs) {
  const std::vector<ObservedPod> pods = Pods(Root(1, 1), 1);
  api::NcclJob failed = JobAt(1);
  failed.status.conditions.push_back({"Failed", "True", "MaxRestartsExceeded", "", "", 1});
  EXPECT_FALSE(Fast(failed, pods, Cm(1)).publish);

  api::NcclJob succeeded = JobAt(1);
  succeeded.status.conditions.push_back({"Succeeded", "True", "AllTrainersSucceeded", "", "", 1});
  EXPECT_FALSE(Fast(succeeded, pods, Cm(1)).publish);

  api::NcclJob suspending = JobAt(1);
  suspending.spec.suspend = true;  // not yet acted on: the pods are about to go
  EXPECT_EQ(Fast(suspending, pods, Cm(1)).skipped_because, "the job is suspended");

  api::NcclJob suspended = JobAt(1);
  suspended.status.conditions.push_back({"Suspended", "True", "Suspended", "", "", 1});
  EXPECT_FALSE(Fast(suspended, pods, Cm(1)).publish);

  api::NcclJob restarting = JobAt(1);
  restarting.status.conditions.push_back({"Restarting", "True", "PodFailed", "", "", 1});
  EXPECT_FALSE(Fast(restarting, pods, Cm(1)).publish);

  api::NcclJob deleted = JobAt(1);
  deleted.being_deleted = true;
  EXPECT_FALSE(Fast(deleted, pods, Cm(1)).publish);

  api::NcclJob invalid = JobAt(1);
  invalid.spec_error = "spec.replicas: must be at least 1";
  EXPECT_FALSE(Fast(invalid, pods, Cm(1)).publish);
}

TEST(DecideFastPublish, WaitsUntilEveryPodOfTheAttemptIsInTheCache) {
  PublishDecision d = Fast(JobAt(1), Pods(Root(1, 1), 1, 3), Cm(1));
  EXPECT_FALSE(d.publish) << "a pod not yet in the cache would count as disappeared once the id is out";
  EXPECT_TRUE(d.retry_soon);
  EXPECT_FALSE(Fast(JobAt(1), Pods(Root(1, 1), 1, 3), Cm(1, true)).retry_soon) << "published: done";
}

TEST(ViewAttempt, SortsThePodsOfTheAttemptByIndexOnce) {
  std::vector<ObservedPod> pods = {testing::Pod(0, 2), testing::Pod(1, 2), testing::Pod(1, 2), testing::Pod(2, 1),
                                   testing::Pod(7, 2), testing::Pod(-1, 2)};
  observed::AttemptView two = observed::ViewAttempt(pods, 2, 4);
  EXPECT_EQ(two.by_index.size(), 2u) << "distinct indices of the attempt in range";
  EXPECT_EQ(two.members.size(), 5u) << "every pod labelled with the attempt";
  EXPECT_EQ(two.stale.size(), 3u) << "another attempt's, or an index out of range";
  ASSERT_NE(two.root(), nullptr);
  EXPECT_EQ(two.root()->name, "demo-0");
  EXPECT_FALSE(two.complete());
  observed::AttemptView one = observed::ViewAttempt(pods, 1, 4);
  EXPECT_EQ(one.by_index.size(), 1u);
  EXPECT_EQ(one.root(), nullptr);
  EXPECT_TRUE(observed::ViewAttempt(Pods(Root(1, 1), 1), 1, 4).complete());
}

TEST(DecideFastPublish, SkipsMissingOrUnusableRootAndConfigMap) {
  std::vector<ObservedPod> no_root = Pods(Root(1, 1), 1);
  no_root.erase(no_root.begin());
  EXPECT_FALSE(Fast(JobAt(1), no_root, Cm(1)).publish);
  EXPECT_FALSE(Fast(JobAt(0), Pods(Root(0, 0), 0), Cm(0)).publish) << "no attempt yet";
  EXPECT_FALSE(Fast(JobAt(1), Pods(Root(1, 1, ""), 1), Cm(1)).publish) << "no id";
  EXPECT_FALSE(Fast(JobAt(1), Pods(Root(1, 1), 1), ObservedConfigMap{}).publish) << "no ConfigMap";

  ObservedPod terminating = Root(1, 1);
  terminating.terminating = true;
  EXPECT_FALSE(Fast(JobAt(1), Pods(terminating, 1), Cm(1)).publish);
  ObservedPod failed = Root(1, 1);
  failed.failed = true;
  EXPECT_FALSE(Fast(JobAt(1), Pods(failed, 1), Cm(1)).publish);
  ObservedPod not_root = Root(1, 1);
  not_root.index = 3;
  EXPECT_FALSE(Fast(JobAt(1), Pods(not_root, 1), Cm(1)).publish);
}

// One rule for both writers (policy/publish_rule.h): the fast path had a rule of its own and
// published while a pod of another attempt was still there, which the full reconcile refused.
TEST(PublishRule, NeitherPathPublishesWhileAPodOfAnotherAttemptIsLeft) {
  std::vector<ObservedPod> pods = Pods(Root(2, 2), 2);
  ObservedPod old = testing::Pod(9, 1);  // a pod of attempt 1 not yet gone
  old.name = "demo-extra";
  pods.push_back(old);
  PublishDecision fast = Fast(JobAt(2), pods, Cm(2));
  EXPECT_FALSE(fast.publish);
  EXPECT_EQ(fast.skipped_because, "a pod of another attempt is still there");
  api::NcclJob job = JobAt(2);
  job.status.state = api::state::kRunning;
  EXPECT_FALSE(Decide(job, pods, Cm(2), kNow).publish);
}

// The full reconcile and the fast path agree wherever the ConfigMap is already set to the
// attempt (the fast path only fills in the id of such a ConfigMap).
TEST(PublishRule, TheFullReconcileAndTheFastPathAgree) {
  struct Case {
    const char* what;
    std::vector<ObservedPod> pods;
    ObservedConfigMap cm;
  };
  ObservedPod terminating = Root(1, 1);
  terminating.terminating = true;
  std::vector<Case> cases = {
      {"all pods, root with the id", Pods(Root(1, 1), 1), Cm(1)},
      {"a pod missing", Pods(Root(1, 1), 1, 3), Cm(1)},
      {"no id yet", Pods(Root(1, 1, ""), 1), Cm(1)},
      {"id of another attempt", Pods(Root(1, 0), 1), Cm(1)},
      {"root being deleted", Pods(terminating, 1), Cm(1)},
      {"already published", Pods(Root(1, 1), 1), Cm(1, true)},
      {"a pod of another attempt left", Pods(Root(1, 1), 1), Cm(1)},
  };
  cases.back().pods.push_back(testing::Pod(9, 0));
  cases.back().pods.back().name = "demo-extra";
  for (const Case& c : cases) {
    const bool fast = Fast(JobAt(1), c.pods, c.cm).publish.has_value();
    const bool full = Decide(JobAt(1), c.pods, c.cm, kNow).publish.has_value();
    EXPECT_EQ(fast, full) << c.what;
    EXPECT_EQ(full, DecidePublish(JobAt(1), JobAt(1).status, observed::ViewAttempt(c.pods, 1, 4), c.cm, kNow)
                        .publish.has_value())
        << c.what;
  }
  EXPECT_TRUE(Decide(JobAt(1), cases[0].pods, cases[0].cm, kNow).publish) << "the agreeing case publishes";
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

RootIds Collect(const api::NcclJob& job, const std::vector<ObservedPod>& pods) {
  return CollectRootIds(job, observed::ViewAttempt(pods, job.status.attempt, job.spec.replicas));
}

TEST(CollectRootIds, ListsEveryRootsIdInRootOrderOnceAllAreIn) {
  RootIds ids = Collect(TwoRootJobAt(2), PodsWithIds(2, 2, 2));
  ASSERT_TRUE(ids.list);
  EXPECT_EQ(*ids.list, "QUFB,QkJC");
  EXPECT_EQ(SplitIdList(*ids.list), (std::vector<std::string>{"QUFB", "QkJC"}));
  std::vector<ObservedPod> pods = PodsWithIds(2, 2, 2);
  pods[2].unique_id.clear();
  ids = Collect(TwoRootJobAt(2), pods);
  EXPECT_FALSE(ids.list);
  EXPECT_EQ(ids.missing, "root pod demo-2 has not reported an id");
  pods.erase(pods.begin() + 2);
  EXPECT_EQ(Collect(TwoRootJobAt(2), pods).missing, "root pod demo-2 is not in the cache");
}

TEST(CollectRootIds, NeverMixesAttempts) {
  // Pod 2 still carries attempt 1's id: nothing is published for attempt 2.
  RootIds ids = Collect(TwoRootJobAt(2), PodsWithIds(2, 1, 2));
  EXPECT_FALSE(ids.list);
  EXPECT_EQ(ids.missing, "root pod demo-2 reported an id of another attempt");
  // Pod 2 itself is of attempt 1 (not yet replaced).
  EXPECT_EQ(Collect(TwoRootJobAt(2), PodsWithIds(2, 2, 1)).missing, "root pod demo-2 is of another attempt");
  std::vector<ObservedPod> pods = PodsWithIds(2, 2, 2);
  pods[2].terminating = true;
  EXPECT_EQ(Collect(TwoRootJobAt(2), pods).missing, "root pod demo-2 is being deleted");
}

TEST(CollectRootIds, OneRootIsPodZerosIdAsBefore) {
  api::NcclJob job = JobAt(1);
  std::vector<ObservedPod> pods = PodsWithIds(1, 1, 1);
  RootIds ids = Collect(job, pods);
  ASSERT_TRUE(ids.list);
  EXPECT_EQ(*ids.list, "QUFB");
}

TEST(DecideFastPublish, SeveralRootsPublishTheListOnlyWhenEveryRootReported) {
  PublishDecision d = Fast(TwoRootJobAt(2), PodsWithIds(2, 2, 2), Cm(2));
  ASSERT_TRUE(d.publish) << d.skipped_because;
  EXPECT_EQ(d.publish->unique_id, "QUFB,QkJC");
  d = Fast(TwoRootJobAt(2), PodsWithIds(2, 1, 2), Cm(2));
  EXPECT_FALSE(d.publish);
  EXPECT_EQ(d.skipped_because, "root pod demo-2 reported an id of another attempt");
}

TEST(ObserveConfigMap, ReadsTheJobUid) {
  ObservedConfigMap cm = ObserveConfigMap(Json::parse(R"({"data":{"attempt":"2","jobUID":"uid-1","uniqueId":"QUJD"}})"));
  EXPECT_EQ(cm.job_uid, "uid-1");
  EXPECT_EQ(cm.attempt, 2);
  EXPECT_TRUE(cm.has_id);
  EXPECT_TRUE(cm.Published(2));
  EXPECT_FALSE(cm.Published(3));
  const Json text = Json::parse(R"({"data":{"attempt":"2","jobUID":"uid-1","uniqueId":"QUJD"}})");
  EXPECT_TRUE(observed::ObserveConfigMapOf(text, "uid-1").exists);
  EXPECT_FALSE(observed::ObserveConfigMapOf(text, "uid-of-a-new-job").exists) << "a deleted job's reads as absent";
}

TEST(Ownership, JobKeysAndOwnerReferences) {
  const Json pod = Json::parse(R"({"metadata":{"name":"demo-0","namespace":"ml","labels":{"nccl.dev/job-name":"demo"},
      "ownerReferences":[{"kind":"NcclJob","name":"demo","uid":"uid-1"}]}})");
  EXPECT_EQ(observed::OwningJobKey(pod), "ml/demo");
  EXPECT_EQ(observed::JobKey("ml", "demo"), "ml/demo");
  EXPECT_TRUE(observed::OwnedBy(pod, "uid-1"));
  EXPECT_FALSE(observed::OwnedBy(pod, "uid-2"));
  EXPECT_EQ(observed::OwningJobKey(Json::parse(R"({"metadata":{"labels":{"nccl.dev/job-name":7}}})")), "");
  EXPECT_EQ(observed::OwningJobKey(Json::parse(R"({"metadata":"x"})")), "");
  EXPECT_FALSE(observed::OwnedBy(Json::parse(R"({"metadata":{"ownerReferences":{"uid":"uid-1"}}})"), "uid-1"));
}

}  // namespace
}  // namespace ncclop::policy

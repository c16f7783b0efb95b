#include <gtest/gtest.h>

#include <algorithm>

#include "policy/failure_policy.h"
#include "policy/decide.h"
#include "policy/pod_refusal.h"
#include "policy/success_policy.h"
#include "policy/ttl_policy.h"
#include "test_jobs.h"

namespace ncclop::policy {
namespace {

using namespace std::chrono_literals;
using Json = nlohmann::json;
using observed::ObservedConfigMap;
using observed::ObservedPod;
using observed::ObservedKueueWorkload;
using observed::ObserveConfigMap;
using observed::ObservePod;
using testing::FailedPod;
using testing::Pod;

const api::Time kNow = *api::ParseTime("2024-01-01T00:00:00Z");

api::NcclJob RunningJob(int attempt = 1, int restarts = 0) {
  auto job = testing::Job(4, 2);
  job.status.attempt = attempt;
  job.status.restarts = restarts;
  job.status.start_time = "2023-12-31T23:59:00Z";
  job.status.attempt_start_time = "2023-12-31T23:59:30Z";
  return job;
}

std::vector<ObservedPod> AllPods(int attempt, const char* phase = "Running") {
  std::vector<ObservedPod> pods;
  for (int i = 0; i < 4; ++i) pods.push_back(Pod(i, attempt, phase));
  return pods;
}

ObservedConfigMap Cm(int attempt, bool has_id = false) { return {true, attempt, has_id, has_id ? "2024-01-01T00:00:00Z" : "", "uid-1"}; }

bool HasEvent(const Plan& p, const std::string& reason) {
  return std::any_of(p.events.begin(), p.events.end(), [&](const Event& e) { return e.reason == reason; });
}

TEST(ObservePod, ReadsLabelsExitCodeAndIdAnnotation) {
  Json pod = Json::parse(R"({"metadata":{"name":"demo-0","labels":{"nccl.dev/index":"0","nccl.dev/attempt":"2"},
      "annotations":{"nccl.dev/unique-id":"QUJD","nccl.dev/unique-id-attempt":"2"}},
    "status":{"phase":"Running","containerStatuses":[
      {"name":"other","state":{"terminated":{"exitCode":0}}},
      {"name":"trainer","state":{"terminated":{"exitCode":3,"reason":"Error"}}}]}})");
  ObservedPod p = ObservePod(pod, "trainer");
  EXPECT_EQ(p.index, 0);
  EXPECT_EQ(p.attempt, 2);
  EXPECT_TRUE(p.failed);
  EXPECT_EQ(p.trainer_exit_code, 3);
  EXPECT_EQ(p.failure_detail, "trainer exited with code 3 (Error)");
  EXPECT_EQ(p.unique_id, "QUJD");
  EXPECT_EQ(p.unique_id_attempt, 2);
}

// Found by fuzz/observe_pod (regression input regression-metadata-not-an-object): fields of an
// unexpected kind made .value() throw, which would end the operator; now they read as absent.
TEST(ObservePod, FieldsOfTheWrongKindReadAsAbsentInsteadOfThrowing) {
  for (const char* text : {R"("a pod")", R"({"metadata":"x","status":[]})",
                           R"({"metadata":{"labels":7,"annotations":[]},"status":{"conditions":{}}})",
                           R"({"status":{"containerStatuses":[7,{"name":"trainer","state":[]}]}})",
                           R"({"status":{"initContainerStatuses":[{"name":"init","state":{"terminated":"x"}}]}})"}) {
    ObservedPod p;
    EXPECT_NO_THROW(p = ObservePod(Json::parse(text), "trainer")) << text;
    EXPECT_FALSE(p.failed) << text;
  }
  Json pod = Json::parse(R"({"status":{"phase":"Running","containerStatuses":[
      {"name":"trainer","state":{"terminated":{"exitCode":"3","reason":"Error"}}}]}})");
  ObservedPod p = ObservePod(pod, "trainer");
  EXPECT_EQ(p.trainer_exit_code, 0);  // a code that is not a number is no failure code
  pod["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] = 3;
  p = ObservePod(pod, "trainer");
  EXPECT_TRUE(p.failed);
  EXPECT_EQ(p.trainer_exit_code, 3);
  EXPECT_NO_THROW(ObserveConfigMap(Json::parse(R"({"data":"x"})")));
}

TEST(ObservePod, FailedPhaseWithoutContainerStatusIsAFailure) {
  ObservedPod p = ObservePod(Json::parse(R"({"metadata":{"name":"x","labels":{"nccl.dev/index":"x"}},
      "status":{"phase":"Failed","reason":"Evicted","message":"node low on memory"}})"), "trainer");
  EXPECT_EQ(p.index, -1);
  EXPECT_TRUE(p.failed);
  EXPECT_FALSE(p.trainer_exit_code);
  EXPECT_EQ(p.failure_detail, "pod failed: Evicted (node low on memory)");
}

TEST(ObservePod, TheTrainerDecidesWhenAnotherContainerFails) {
  ObservedPod ok = ObservePod(Json::parse(R"({"metadata":{"name":"x"},"status":{"phase":"Failed",
      "containerStatuses":[{"name":"trainer","state":{"terminated":{"exitCode":0}}},
                           {"name":"helper","state":{"terminated":{"exitCode":3}}}]}})"), "trainer");
  EXPECT_TRUE(ok.trainer_succeeded);
  EXPECT_FALSE(ok.failed);

  ObservedPod failed = ObservePod(Json::parse(R"({"metadata":{"name":"x"},"status":{"phase":"Failed",
      "containerStatuses":[{"name":"trainer","state":{"running":{}}},
                           {"name":"helper","state":{"terminated":{"exitCode":3}}}]}})"), "trainer");
  EXPECT_TRUE(failed.failed);
  EXPECT_EQ(failed.failure_detail, "pod failed: container helper exited with code 3");
}

TEST(ObservePod, ADisruptionFailsThePodEvenWhenTheTrainerExitedZeroOnSigterm) {
  ObservedPod evicted = ObservePod(Json::parse(R"({"metadata":{"name":"x"},"status":{"phase":"Failed",
      "reason":"Evicted","message":"node low on memory",
      "containerStatuses":[{"name":"trainer","state":{"terminated":{"exitCode":0}}}]}})"), "trainer");
  EXPECT_TRUE(evicted.failed);
  EXPECT_FALSE(evicted.trainer_succeeded);
  EXPECT_EQ(evicted.failure_detail, "pod failed: Evicted (node low on memory)");

  ObservedPod preempted = ObservePod(Json::parse(R"({"metadata":{"name":"x"},"status":{"phase":"Failed",
      "conditions":[{"type":"DisruptionTarget","status":"True"}],
      "containerStatuses":[{"name":"trainer","state":{"terminated":{"exitCode":0}}}]}})"), "trainer");
  EXPECT_TRUE(preempted.failed);
}

TEST(ObservePod, AFailedInitContainerIsNamedButTheSidecarIsNot) {
  ObservedPod p = ObservePod(Json::parse(R"({"metadata":{"name":"x"},"status":{"phase":"Failed",
      "initContainerStatuses":[{"name":"nccl-sidecar","state":{"terminated":{"exitCode":2}}},
                               {"name":"fetch-data","state":{"terminated":{"exitCode":1}}}],
      "containerStatuses":[{"name":"trainer","state":{"waiting":{}}}]}})"), "trainer");
  EXPECT_TRUE(p.failed);
  EXPECT_EQ(p.failure_detail, "pod failed: init container fetch-data exited with code 1");
}

TEST(PodRefusal, OnlyTheApiServersOwnVerdictOnThePodIsPermanent) {
  auto status = [](long code, const std::string& body) { return kube::Status::FromResponse(code, body); };
  EXPECT_TRUE(IsMalformedPod(status(422, R"({"kind":"Status","reason":"Invalid","message":"Pod \"a-0\" is invalid: spec.containers[0].volumeMounts[0].name: Not found: \"data\"","details":{"name":"a-0","kind":"Pod"},"code":422})")));
  EXPECT_TRUE(IsMalformedPod(status(400, R"({"kind":"Status","reason":"BadRequest","message":"Pod in version \"v1\" cannot be handled as a Pod: quantities must match the regular expression","code":400})")));
  EXPECT_FALSE(IsMalformedPod(status(422, R"({"kind":"Status","reason":"Invalid","message":"admission webhook \"x.example\" denied the request: no","details":{"kind":"Pod"},"code":422})")));
  EXPECT_FALSE(IsMalformedPod(status(400, "<html>Request Header Or Cookie Too Large</html>")));
  EXPECT_FALSE(IsMalformedPod(status(422, "")));  // no Status body: no details.kind
  EXPECT_FALSE(IsMalformedPod(status(403, R"({"kind":"Status","reason":"Forbidden","message":"pods \"a-0\" is forbidden: exceeded quota","code":403})")));
  std::string long_message(10000, 'x');
  std::string cut = RefusalMessage("a-0", status(422, R"({"kind":"Status","reason":"Invalid","message":")" + long_message + R"("})"), 100);
  EXPECT_EQ(cut.size(), 103u);
  EXPECT_EQ(cut.rfind("the API server refused pod a-0: ", 0), 0u);
  // A multi-byte character at the cut is dropped whole, so the message stays valid UTF-8.
  std::string prefix = "the API server refused pod a-0: ";
  std::string accented = RefusalMessage("a-0", status(422, R"({"kind":"Status","message":")" + std::string(60, 'x') +
                                                            "\u00e9\u00e9\u00e9\u00e9" + R"("})"), prefix.size() + 61);
  EXPECT_EQ(accented, prefix + std::string(60, 'x') + "...");
  EXPECT_NO_THROW(Json(accented).dump());
}

TEST(PodRefusal, ARoundOfCreatesIsSummarisedByItsFirstRefusalAndLowestRefusedIndex) {
  auto status = [](long code, const std::string& body) { return kube::Status::FromResponse(code, body); };
  const kube::Status timeout = status(504, R"({"kind":"Status","reason":"Timeout","message":"slow","code":504})");
  const kube::Status quota = status(403, R"({"kind":"Status","reason":"Forbidden","message":"exceeded quota","code":403})");
  const kube::Status invalid = status(422, R"({"kind":"Status","reason":"Invalid","message":"bad","details":{"kind":"Pod"},"code":422})");
  CreateSummary none = SummarizeCreates({});
  EXPECT_TRUE(none.first_error.ok());
  EXPECT_EQ(none.errors, 0);
  EXPECT_FALSE(none.refused);

  CreateSummary errors = SummarizeCreates({{5, timeout}, {2, timeout}});
  EXPECT_EQ(errors.errors, 2);
  EXPECT_EQ(errors.first_error.code(), 504);
  EXPECT_FALSE(errors.refused) << "a timeout may pass: no refusal";

  // The refusal wins over an earlier error; the lowest refused index is reported whichever came first.
  CreateSummary refused = SummarizeCreates({{6, timeout}, {4, quota}, {1, invalid}});
  EXPECT_EQ(refused.errors, 3);
  EXPECT_EQ(refused.first_error.code(), 403);
  ASSERT_TRUE(refused.refused);
  EXPECT_EQ(refused.refused->index, 1);
  EXPECT_EQ(refused.refused->status.code(), 422);
  EXPECT_TRUE(IsRefusal(quota));
  EXPECT_FALSE(IsRefusal(timeout));
}

TEST(ObservePod, AFailedTrainersLastOutputIsQuoted) {
  ObservedPod p = ObservePod(Json::parse(R"({"metadata":{"name":"x"},"status":{"phase":"Failed",
      "containerStatuses":[{"name":"trainer","state":{"terminated":{"exitCode":7,"reason":"Error",
        "message":"loading data\nRuntimeError: CUDA out of memory\n"}}}]}})"), "trainer");
  EXPECT_EQ(p.failure_detail, "trainer exited with code 7 (Error), last output: loading data | RuntimeError: CUDA out of memory");

  std::string long_output = std::string(1000, 'a') + "\u00e9 the end";
  ObservedPod cut = ObservePod(Json{{"metadata", {{"name", "x"}}},
      {"status", {{"phase", "Failed"}, {"containerStatuses", Json::array({{{"name", "trainer"},
        {"state", {{"terminated", {{"exitCode", 1}, {"message", long_output}}}}}}})}}}}, "trainer");
  EXPECT_LT(cut.failure_detail.size(), 400u);
  EXPECT_NE(cut.failure_detail.find("...a"), std::string::npos) << cut.failure_detail;
  EXPECT_NE(cut.failure_detail.find("the end"), std::string::npos);
  EXPECT_NO_THROW(Json(cut.failure_detail).dump());
}

TEST(ObservePod, TheSidecarExitingDoesNotMakeTheTrainerDone) {
  ObservedPod p = ObservePod(Json::parse(R"({"metadata":{"name":"x"},"status":{"phase":"Running",
      "containerStatuses":[{"name":"nccl-sidecar","state":{"terminated":{"exitCode":0}}}]}})"), "trainer");
  EXPECT_FALSE(p.trainer_succeeded);
  EXPECT_FALSE(p.failed);
}

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

TEST(Decide, NewJobRecordsAttemptOneAndCreatesEverything) {
  Plan p = Decide(testing::Job(4, 2), {}, {}, kNow);
  EXPECT_EQ(p.status.attempt, 1);
  EXPECT_EQ(p.status.state, "Pending");
  EXPECT_EQ(p.status.start_time, "2024-01-01T00:00:00Z");
  EXPECT_TRUE(p.status.IsTrue("Created"));
  EXPECT_TRUE(p.ensure_children);
  EXPECT_TRUE(p.write_configmap);
  EXPECT_FALSE(p.publish);
  EXPECT_EQ(p.create_pods, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_TRUE(HasEvent(p, "Created"));
  EXPECT_TRUE(p.attempt_started);
}

TEST(Decide, WarnsOnceWhenTheTrainerAnnotationIsOnTheJobInsteadOfTheTemplate) {
  auto job = testing::Job(4, 2);
  job.misplaced_trainer_annotation = "worker";
  Plan p = Decide(job, {}, {}, kNow);
  ASSERT_TRUE(HasEvent(p, "AnnotationIgnored"));
  auto running = RunningJob();
  running.misplaced_trainer_annotation = "worker";
  Plan later = Decide(running, AllPods(1), Cm(1), kNow);
  EXPECT_FALSE(HasEvent(later, "AnnotationIgnored")) << "said once, when the job starts";
  EXPECT_FALSE(HasEvent(Decide(testing::Job(4, 2), {}, {}, kNow), "AnnotationIgnored"));
}

TEST(Decide, CreatesOnlyMissingPods) {
  std::vector<ObservedPod> pods = {Pod(0, 1), Pod(2, 1)};
  Plan p = Decide(RunningJob(), pods, Cm(1), kNow);
  EXPECT_EQ(p.create_pods, (std::vector<int>{1, 3}));
  EXPECT_FALSE(p.write_configmap);
  EXPECT_TRUE(p.events.empty());
}

TEST(Decide, RunningWhenAllPodsRun) {
  Plan p = Decide(RunningJob(), AllPods(1), Cm(1), kNow);
  EXPECT_EQ(p.status.state, "Running");
  EXPECT_TRUE(p.status.IsTrue("Running"));
  EXPECT_TRUE(p.create_pods.empty());
  EXPECT_EQ(p.status.active, 4);
}

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

TEST(Decide, AFailedPodStartsABackoffAndDeletesTheAttempt) {
  auto pods = AllPods(1);
  pods[2] = FailedPod(2, 1, 1);
  Plan p = Decide(RunningJob(), pods, Cm(1, true), kNow);
  EXPECT_EQ(p.status.state, "Restarting");
  EXPECT_EQ(p.status.restarts, 1);
  EXPECT_EQ(p.status.attempt, 1) << "the next attempt is recorded only when it starts";
  EXPECT_EQ(p.status.restart_after, "2024-01-01T00:00:10Z");
  EXPECT_TRUE(p.status.IsTrue("Restarting"));
  EXPECT_EQ(p.delete_pods.size(), 4u);
  EXPECT_TRUE(p.create_pods.empty());
  EXPECT_EQ(p.requeue_after, 10s);
  EXPECT_TRUE(HasEvent(p, "Restarting"));
  EXPECT_TRUE(p.restarted);
}

TEST(Decide, BackoffWaitsThenStartsTheNextAttemptAndItsPodsAsOldNamesFree) {
  auto job = RunningJob(1, 1);
  job.status.restart_after = "2024-01-01T00:00:10Z";
  job.status.conditions.push_back({"Restarting", "True", "PodFailed", "", "2024-01-01T00:00:00Z", 1});

  Plan waiting = Decide(job, {FailedPod(2, 1, 1)}, Cm(1, true), kNow + 4s);
  EXPECT_EQ(waiting.status.attempt, 1);
  EXPECT_EQ(waiting.requeue_after, 6s);
  EXPECT_EQ(waiting.delete_pods, std::vector<std::string>{"demo-2"});

  auto terminating = FailedPod(2, 1, 1);
  terminating.terminating = true;
  Plan started = Decide(job, {terminating}, Cm(1, true), kNow + 10s);
  EXPECT_EQ(started.status.attempt, 2);
  EXPECT_FALSE(started.status.IsTrue("Restarting"));
  EXPECT_TRUE(started.status.id_published_time.empty());
  EXPECT_TRUE(started.write_configmap) << "the ConfigMap is reset to attempt 2 without an id";
  EXPECT_FALSE(started.publish);
  EXPECT_EQ(started.create_pods, (std::vector<int>{0, 1, 3})) << "demo-2 of attempt 1 still holds its name";

  job.status = started.status;
  Plan creating = Decide(job, {Pod(0, 2), Pod(1, 2), Pod(3, 2)}, Cm(2), kNow + 11s);
  EXPECT_EQ(creating.create_pods, (std::vector<int>{2}));
  EXPECT_EQ(creating.status.attempt, 2);
}

// A restart makes pod i of the new attempt as soon as the old pod i is gone, without waiting
// for the last old pod (names are reused, so never two pods of one name); the id waits for
// every old pod to be gone.
TEST(Decide, PodsOfANewAttemptAreMadeAsTheirNamesFreeButTheIdWaitsForEveryOldPod) {
  auto old_pod = Pod(1, 1);
  old_pod.terminating = true;
  Plan p = Decide(RunningJob(2, 1), {old_pod}, Cm(2), kNow);
  EXPECT_TRUE(p.delete_pods.empty()) << "already being deleted";
  EXPECT_EQ(p.create_pods, (std::vector<int>{0, 2, 3}));

  Plan undeleted = Decide(RunningJob(2, 1), {Pod(1, 1)}, Cm(2), kNow);
  EXPECT_EQ(undeleted.delete_pods, std::vector<std::string>{"demo-1"});
  EXPECT_EQ(undeleted.create_pods, (std::vector<int>{0, 2, 3}));

  auto root = Pod(0, 2);
  root.unique_id = "QUJD";
  root.unique_id_attempt = 2;
  std::vector<ObservedPod> pods = {root, Pod(2, 2), Pod(3, 2), old_pod};
  Plan held = Decide(RunningJob(2, 1), pods, Cm(2), kNow);
  EXPECT_FALSE(held.publish) << "demo-1 of attempt 1 is still there";
  EXPECT_TRUE(held.create_pods.empty());

  pods.back() = Pod(1, 2);
  Plan published = Decide(RunningJob(2, 1), pods, Cm(2), kNow);
  ASSERT_TRUE(published.publish);
  EXPECT_EQ(published.publish->unique_id, "QUJD");
}

// A stale pod whose name is not one of the attempt's (a hand-made pod with the job's labels)
// holds back nothing but the id.
TEST(Decide, AStalePodOfAnotherNameHoldsBackOnlyTheId) {
  auto odd = Pod(7, 1);
  odd.name = "demo-extra";
  Plan p = Decide(RunningJob(2, 1), {odd}, Cm(2), kNow);
  EXPECT_EQ(p.delete_pods, std::vector<std::string>{"demo-extra"});
  EXPECT_EQ(p.create_pods, (std::vector<int>{0, 1, 2, 3}));
}

// The name decides, not the labels: a pod named demo-2 whatever its index label holds pod 2's
// name; demo-02, demo-+3, demo--1, demo-4 (out of range) and demo-3x hold none of the attempt's.
TEST(Decide, ANameIsHeldByThePodOfThatExactName) {
  auto relabelled = Pod(5, 1);
  relabelled.name = "demo-2";
  std::vector<ObservedPod> pods = {relabelled};
  for (const char* name : {"demo-02", "demo-+3", "demo--1", "demo-4", "demo-3x", "demo-", "demo", "dem-1", "demox-1"}) {
    auto odd = Pod(9, 1);
    odd.name = name;
    pods.push_back(odd);
  }
  Plan p = Decide(RunningJob(2, 1), pods, Cm(2), kNow);
  EXPECT_EQ(p.create_pods, (std::vector<int>{0, 1, 3}));
  EXPECT_EQ(p.delete_pods.size(), pods.size()) << "every one is stale";
}

TEST(Decide, FailFastExitCodeFailsAtOnce) {
  auto job = RunningJob();
  job.spec.failure_policy.fail_fast_exit_codes = {42};
  auto pods = AllPods(1);
  pods[3] = FailedPod(3, 1, 42);
  Plan p = Decide(job, pods, Cm(1, true), kNow);
  EXPECT_EQ(p.status.state, "Failed");
  const api::Condition* failed = p.status.Find("Failed");
  ASSERT_NE(failed, nullptr);
  EXPECT_EQ(failed->reason, "FailFastExitCode");
  EXPECT_NE(failed->message.find("42"), std::string::npos);
  EXPECT_EQ(p.status.restarts, 0);
  EXPECT_EQ(p.delete_pods.size(), 3u) << "the running pods go, the failed one stays for its logs";
  EXPECT_FALSE(p.status.completion_time.empty());
}

TEST(Decide, NoRestartsLeftFailsTheJob) {
  auto job = RunningJob(4, 3);
  auto pods = AllPods(4);
  pods[0] = FailedPod(0, 4, 1);
  Plan p = Decide(job, pods, Cm(4, true), kNow);
  EXPECT_EQ(p.status.state, "Failed");
  EXPECT_EQ(p.status.Find("Failed")->reason, "MaxRestartsExceeded");
  EXPECT_TRUE(HasEvent(p, "MaxRestartsExceeded"));
}

TEST(ObservePod, ReadsWhyTheClusterDoesNotStartIt) {
  ObservedPod pull = ObservePod(Json::parse(R"({"metadata":{"name":"demo-1"},"status":{"phase":"Pending",
      "initContainerStatuses":[{"name":"nccl-sidecar","state":{"running":{}}}],
      "containerStatuses":[{"name":"trainer","state":{"waiting":{"reason":"ImagePullBackOff",
        "message":"Back-off pulling image \"nope:1\""}}}]}})"), "trainer");
  EXPECT_EQ(pull.start_blocked_reason, "ImagePullBackOff");
  EXPECT_EQ(pull.start_blocked_detail, "container trainer: ImagePullBackOff: Back-off pulling image \"nope:1\"");

  ObservedPod unschedulable = ObservePod(Json::parse(R"({"metadata":{"name":"demo-1"},"status":{"phase":"Pending",
      "conditions":[{"type":"PodScheduled","status":"False","reason":"Unschedulable",
        "message":"0/1 nodes are available: 1 Insufficient cpu."}]}})"), "trainer");
  EXPECT_EQ(unschedulable.start_blocked_reason, "Unschedulable");
  EXPECT_EQ(unschedulable.start_blocked_detail, "Unschedulable: 0/1 nodes are available: 1 Insufficient cpu.");

  ObservedPod creating = ObservePod(Json::parse(R"({"metadata":{"name":"demo-1"},"status":{"phase":"Pending",
      "containerStatuses":[{"name":"trainer","state":{"waiting":{"reason":"ContainerCreating"}}}]}})"), "trainer");
  EXPECT_TRUE(creating.start_blocked_reason.empty()) << "a normal start is not blocked";

  ObservedPod ended = ObservePod(Json::parse(R"({"metadata":{"name":"demo-1"},"status":{"phase":"Failed",
      "initContainerStatuses":[{"name":"nccl-sidecar","state":{"waiting":{"reason":"CrashLoopBackOff"}}}]}})"), "trainer");
  EXPECT_TRUE(ended.start_blocked_reason.empty()) << "an ended pod is a failure, not a blocked start";
}

ObservedPod BlockedPod(int index, int attempt) {
  ObservedPod p = Pod(index, attempt, "Pending");
  p.start_blocked_reason = "ErrImagePull";
  p.start_blocked_detail = "container trainer: ErrImagePull: not found";
  return p;
}

TEST(Decide, ABlockedPodIsShownAtOnceAndCheckedAgainAtTheDeadline) {
  auto job = RunningJob();  // attempt started 30 s before kNow; initTimeoutSeconds 300
  auto pods = AllPods(1);
  pods[3] = BlockedPod(3, 1);
  pods[2] = BlockedPod(2, 1);
  Plan p = Decide(job, pods, Cm(1, true), kNow);
  EXPECT_EQ(p.status.state, "Pending");
  const api::Condition* running = p.status.Find("Running");
  ASSERT_NE(running, nullptr);
  EXPECT_EQ(running->reason, "ErrImagePull");
  EXPECT_EQ(running->message,
            "pod demo-2 cannot start: container trainer: ErrImagePull: not found; the attempt is given up 300s after "
            "it started (initTimeoutSeconds)");
  EXPECT_TRUE(HasEvent(p, "PodStartBlocked"));
  EXPECT_EQ(p.requeue_after, 270s);
  EXPECT_EQ(p.status.restarts, 0);

  job.status = p.status;
  EXPECT_FALSE(HasEvent(Decide(job, pods, Cm(1, true), kNow + 1s), "PodStartBlocked")) << "said once per change";
}

TEST(Decide, ABlockedPodFailsItsAttemptAfterInitTimeoutSeconds) {
  auto job = RunningJob();
  auto pods = AllPods(1);
  pods[1] = BlockedPod(1, 1);
  Plan p = Decide(job, pods, Cm(1, true), kNow + 270s);
  EXPECT_EQ(p.status.state, "Restarting");
  EXPECT_EQ(p.status.restarts, 1);
  EXPECT_NE(p.status.Find("Restarting")->message.find("pod demo-1 cannot start: container trainer: ErrImagePull"),
            std::string::npos);

  job.spec.failure_policy.max_restarts = 0;
  Plan failed = Decide(job, pods, Cm(1, true), kNow + 270s);
  EXPECT_EQ(failed.status.state, "Failed");
  EXPECT_EQ(failed.status.Find("Failed")->reason, "MaxRestartsExceeded");
  EXPECT_NE(failed.status.Find("Failed")->message.find("still after initTimeoutSeconds, 300s"), std::string::npos);
}

TEST(Decide, SucceedsWhenEveryTrainerExitedZero) {
  auto job = RunningJob();
  Plan partial = Decide(job, {Pod(0, 1, "Succeeded"), Pod(1, 1), Pod(2, 1), Pod(3, 1)}, Cm(1, true), kNow);
  EXPECT_FALSE(partial.status.Finished());
  Plan p = Decide(job, AllPods(1, "Succeeded"), Cm(1, true), kNow);
  EXPECT_EQ(p.status.state, "Succeeded");
  EXPECT_TRUE(p.status.IsTrue("Succeeded"));
  EXPECT_EQ(p.status.succeeded, 4);
  EXPECT_TRUE(p.delete_pods.empty());
  EXPECT_TRUE(HasEvent(p, "Succeeded"));
}

TEST(Decide, SuspendDeletesPodsAndResumeStartsANewAttempt) {
  auto job = RunningJob(2, 1);
  job.spec.suspend = true;
  Plan s = Decide(job, AllPods(2), Cm(2, true), kNow);
  EXPECT_EQ(s.status.state, "Suspended");
  EXPECT_TRUE(s.status.IsTrue("Suspended"));
  EXPECT_EQ(s.delete_pods.size(), 4u);
  EXPECT_TRUE(s.create_pods.empty());

  job.status = s.status;
  job.spec.suspend = false;
  Plan r = Decide(job, {}, Cm(2, true), kNow + 60s);
  EXPECT_EQ(r.status.attempt, 3);
  EXPECT_EQ(r.status.restarts, 1) << "resuming is not a restart";
  EXPECT_FALSE(r.status.IsTrue("Suspended"));
  EXPECT_EQ(r.create_pods.size(), 4u);
  EXPECT_TRUE(HasEvent(r, "Resumed"));
}

TEST(Decide, AJobCreatedSuspendedSaysNoPodsWereMade) {
  auto job = testing::Job(2, 1);
  job.spec.suspend = true;
  Plan s = Decide(job, {}, {}, kNow);
  EXPECT_EQ(s.status.state, "Suspended");
  ASSERT_FALSE(s.events.empty());
  EXPECT_EQ(s.events.front().message.find("attempt 0"), std::string::npos) << s.events.front().message;
  EXPECT_NE(s.status.Find("Suspended")->message.find("no pods"), std::string::npos);
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

TEST(Decide, InvalidSpecBecomesAFailedCondition) {
  auto job = testing::Job();
  job.spec_error = "spec.replicas must be between 1 and 4096, got 0";
  Plan p = Decide(job, {}, {}, kNow);
  EXPECT_EQ(p.status.Find("Failed")->reason, "InvalidSpec");
  EXPECT_TRUE(p.create_pods.empty());
  EXPECT_FALSE(p.ensure_children);
}

TEST(Decide, APodTemplateTheApiServerRefusedFailsTheJobAndItsRunningPods) {
  auto job = RunningJob();
  const std::string refusal = "the API server refused pod train-1: Pod \"train-1\" is invalid: spec.volumes: Not found";
  Plan p = Decide(job, {Pod(0, 1)}, Cm(1), kNow, {.pod_create_verdict = TemplateRejected(refusal)});
  EXPECT_EQ(p.status.state, "Failed");
  const api::Condition* failed = p.status.Find("Failed");
  ASSERT_NE(failed, nullptr);
  EXPECT_EQ(failed->reason, "PodTemplateRejected");
  EXPECT_NE(failed->message.find("spec.volumes: Not found"), std::string::npos) << failed->message;
  EXPECT_NE(failed->message.find("fix spec.template"), std::string::npos) << failed->message;
  EXPECT_TRUE(p.create_pods.empty());
  ASSERT_EQ(p.delete_pods.size(), 1u);  // the pod that did get created goes
  ASSERT_FALSE(p.events.empty());
  EXPECT_EQ(p.events.front().reason, "PodTemplateRejected");

  Plan without = Decide(job, {Pod(0, 1)}, Cm(1), kNow);
  EXPECT_NE(without.status.state, "Failed");
}

TEST(Decide, PodCreatesForbiddenTooLongFailTheJobWithTheApiServersMessage) {
  const std::string refusal = "the API server refused pod demo-0: pods \"demo-0\" is forbidden: violates PodSecurity";
  Plan p = Decide(RunningJob(), {}, Cm(1), kNow, {.pod_create_verdict = ForbiddenTooLong(refusal, 300)});
  EXPECT_EQ(p.status.state, "Failed");
  const api::Condition* failed = p.status.Find("Failed");
  ASSERT_NE(failed, nullptr);
  EXPECT_EQ(failed->reason, "PodCreateForbidden");
  EXPECT_NE(failed->message.find("violates PodSecurity"), std::string::npos) << failed->message;
  EXPECT_NE(failed->message.find("300s"), std::string::npos) << failed->message;
  EXPECT_TRUE(p.create_pods.empty());
}

TEST(Decide, ActiveDeadlineFailsTheJobAndItsPodsAndWakesAtTheDeadline) {
  auto job = RunningJob();  // started 60 s before kNow
  job.spec.active_deadline_seconds = 100;
  Plan early = Decide(job, AllPods(1), Cm(1), kNow);
  EXPECT_NE(early.status.state, "Failed");
  ASSERT_TRUE(early.requeue_after);
  EXPECT_EQ(*early.requeue_after, 41s) << "the deadline is 40 s away; looked at again just after it";
  Plan due = Decide(job, AllPods(1), Cm(1), kNow + 40s);
  EXPECT_EQ(due.status.state, "Failed");
  EXPECT_EQ(due.status.Find("Failed")->reason, "DeadlineExceeded");
  EXPECT_NE(due.status.Find("Failed")->message.find("activeDeadlineSeconds (100s"), std::string::npos);
  EXPECT_EQ(due.delete_pods.size(), 4u);
  EXPECT_TRUE(due.create_pods.empty());
  EXPECT_TRUE(HasEvent(due, "DeadlineExceeded"));
}

TEST(Decide, ActiveDeadlineCountsBackoffsAndStopsWhileSuspended) {
  auto restarting = RunningJob(1, 1);
  restarting.spec.active_deadline_seconds = 30;
  restarting.status.restart_after = "2024-01-01T00:05:00Z";
  restarting.status.conditions.push_back({"Restarting", "True", "PodFailed", "", "2024-01-01T00:00:00Z", 1});
  EXPECT_EQ(Decide(restarting, {}, Cm(1), kNow).status.state, "Failed") << "a backoff does not stop the clock";

  auto suspended = RunningJob();
  suspended.spec.active_deadline_seconds = 30;
  suspended.spec.suspend = true;
  EXPECT_NE(Decide(suspended, {}, Cm(1), kNow).status.state, "Failed");
  suspended.spec.suspend = false;
  suspended.status.conditions.push_back({"Suspended", "True", "Suspended", "", "2023-12-31T23:59:00Z", 1});
  Plan resumed = Decide(suspended, {}, Cm(1), kNow);
  EXPECT_NE(resumed.status.state, "Failed") << "the clock restarts when the job resumes";
  EXPECT_EQ(resumed.status.start_time, "2024-01-01T00:00:00Z");
}

TEST(Decide, TtlDeletesTheFinishedJobWhenDue) {
  auto job = RunningJob();
  job.spec.ttl_seconds_after_finished = 30;
  job.status.completion_time = "2024-01-01T00:00:00Z";
  job.status.conditions.push_back({"Succeeded", "True", "", "", "2024-01-01T00:00:00Z", 1});
  Plan early = Decide(job, {}, Cm(1, true), kNow + 10s);
  EXPECT_FALSE(early.delete_job);
  EXPECT_EQ(early.requeue_after, 20s);
  Plan due = Decide(job, {}, Cm(1, true), kNow + 30s);
  EXPECT_TRUE(due.delete_job);
}

TEST(Decide, ADeletedJobIsLeftToTheGarbageCollector) {
  auto job = RunningJob();
  job.being_deleted = true;
  Plan p = Decide(job, {FailedPod(0, 1, 1)}, Cm(1), kNow);
  EXPECT_TRUE(p.delete_pods.empty());
  EXPECT_TRUE(p.create_pods.empty());
  EXPECT_TRUE(p.events.empty());
  EXPECT_FALSE(p.ensure_children);
}

TEST(Decide, IsStableWhenNothingChanged) {
  auto pods = AllPods(1);
  Plan first = Decide(RunningJob(), pods, Cm(1), kNow);
  auto job = RunningJob();
  job.status = first.status;
  Plan second = Decide(job, pods, Cm(1), kNow + 5s);
  EXPECT_EQ(second.status, first.status) << "a no-op reconcile must not rewrite status";
  EXPECT_TRUE(second.events.empty());
}

}  // namespace
}  // namespace ncclop::policy

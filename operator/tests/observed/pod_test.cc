// ObservePod: what the operator reads of a pod (its index, attempt, id, and why it failed or
// cannot start).
#include "observed/pod.h"

#include <gtest/gtest.h>

#include <string>

#include "observed/configmap.h"

namespace ncclop::observed {
namespace {

using Json = nlohmann::json;

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

TEST(ObservePod, CarriesTheDisruption) {
  ObservedPod p = ObservePod(Json::parse(R"({"metadata":{"name":"demo-2","deletionTimestamp":"2024-01-01T00:00:00Z",
      "labels":{"nccl.dev/index":"2","nccl.dev/attempt":"1"}},
    "status":{"phase":"Running","conditions":[{"type":"DisruptionTarget","status":"True","reason":"EvictionByEvictionAPI"}],
      "containerStatuses":[{"name":"trainer","state":{"terminated":{"exitCode":143}}}]}})"), "trainer");
  ASSERT_TRUE(p.disruption);
  EXPECT_EQ(p.disruption->kind, "Eviction");
  EXPECT_TRUE(p.terminating);
  EXPECT_TRUE(p.failed);
}

}  // namespace
}  // namespace ncclop::observed

namespace ncclop::observed {
namespace {

// A pod made to restart in place, its trainer restarted `restart_count` times, the attempt
// starting from `before`; `trainer_state` and `last` are its state and lastState.
ObservedPod InPlace(int before, int restart_count, const char* trainer_state, const char* last = "{}") {
  std::string text = std::string(R"({"metadata":{"name":"demo-1","labels":{"nccl.dev/index":"1","nccl.dev/attempt":"2"},
      "annotations":{"nccl.dev/restarts-before-attempt":")") + std::to_string(before) + R"("}},
    "status":{"phase":"Running",
      "initContainerStatuses":[{"name":"nccl-sidecar","ready":true,"restartCount":)" + std::to_string(restart_count) +
                     R"(,"lastState":{"terminated":{"exitCode":137}}}],
      "containerStatuses":[{"name":"trainer","restartCount":)" + std::to_string(restart_count) +
                     R"(,"state":)" + trainer_state + R"(,"lastState":)" + last + "}]}}";
  return ObservePod(nlohmann::json::parse(text), "trainer");
}

TEST(ObservePod, APodRestartedInPlaceBeyondItsAttemptsStartFailedWithItsTrainersWords) {
  ObservedPod p = InPlace(1, 2, R"({"running":{}})", R"({"terminated":{"exitCode":3,"reason":"Error","message":"boom"}})");
  EXPECT_TRUE(p.in_place);
  EXPECT_EQ(p.restarts_before, 1);
  EXPECT_EQ(p.trainer_restarts, 2);
  EXPECT_TRUE(p.failed);
  EXPECT_FALSE(p.Terminal() && p.phase != "Running") << "it runs again";
  EXPECT_EQ(p.trainer_exit_code, 3);
  EXPECT_EQ(p.failure_detail, "trainer exited with code 3 (Error), last output: boom; its pod restarts in place");
}

TEST(ObservePod, TheRestartThatMovesAPodToItsAttemptIsNoFailure) {
  // Killed by its kubelet while its sidecar restarts it for attempt 2 (restart count 1 to come).
  ObservedPod killed = InPlace(1, 0, R"({"terminated":{"exitCode":137,"reason":"Error"}})");
  EXPECT_EQ(killed.trainer_restarts, 1);
  EXPECT_FALSE(killed.failed);
  EXPECT_FALSE(killed.trainer_exit_code.has_value());
  EXPECT_TRUE(killed.failure_detail.empty());
  ObservedPod moved = InPlace(1, 1, R"({"running":{}})", R"({"terminated":{"exitCode":137}})");
  EXPECT_FALSE(moved.failed);
  ObservedPod not_yet = InPlace(1, 0, R"({"running":{}})");
  EXPECT_FALSE(not_yet.failed);
}

TEST(ObservePod, APodMovedAsItsTrainerExitedZeroNeverEntersItsAttempt) {
  // Moved to attempt 2 (one restart to come) while its trainer of attempt 1 was exiting 0: that
  // exit is no success of attempt 2, nor a failure; the pod is not of attempt 2.
  ObservedPod exited = InPlace(1, 0, R"({"terminated":{"exitCode":0,"reason":"Completed"}})");
  EXPECT_TRUE(exited.ended_before_its_attempt);
  EXPECT_FALSE(exited.trainer_succeeded);
  EXPECT_FALSE(exited.failed);
  // The same exit after the restart into attempt 2 is the attempt's own success.
  ObservedPod entered = InPlace(1, 1, R"({"terminated":{"exitCode":0,"reason":"Completed"}})");
  EXPECT_FALSE(entered.ended_before_its_attempt);
  EXPECT_TRUE(entered.trainer_succeeded);
  ObservedPod waiting = InPlace(1, 0, R"({"running":{}})");
  EXPECT_FALSE(waiting.ended_before_its_attempt);
}

TEST(ObservePod, ATrainerLyingTerminatedInItsAttemptIsAFailureBeforeItsRestart) {
  ObservedPod p = InPlace(1, 1, R"({"terminated":{"exitCode":1,"reason":"Error"}})");
  EXPECT_EQ(p.trainer_restarts, 2);
  EXPECT_TRUE(p.failed);
  EXPECT_EQ(p.trainer_exit_code, 1);
}

TEST(ObservePod, APodNotMadeToRestartInPlaceReadsAsBefore) {
  nlohmann::json pod = nlohmann::json::parse(R"({"metadata":{"name":"demo-0"},"status":{"phase":"Running",
      "containerStatuses":[{"name":"trainer","restartCount":4,"state":{"running":{}}}]}})");
  ObservedPod p = ObservePod(pod, "trainer");
  EXPECT_FALSE(p.in_place);
  EXPECT_FALSE(p.failed);
}

}  // namespace
}  // namespace ncclop::observed

namespace ncclop::observed {
namespace {

ObservedPod RestartedWith(const char* trainer_last, const char* sidecar_last) {
  std::string text = std::string(R"({"metadata":{"name":"demo-1","annotations":{"nccl.dev/restarts-before-attempt":"0"}},
    "status":{"phase":"Running",
      "initContainerStatuses":[{"name":"nccl-sidecar","restartCount":1,"lastState":{"terminated":)") + sidecar_last + R"(}}],
      "containerStatuses":[{"name":"trainer","restartCount":1,"state":{"running":{}},"lastState":{"terminated":)" +
                     trainer_last + "}}]}}";
  return ObservePod(nlohmann::json::parse(text), "trainer");
}

TEST(ObservePod, ARestartInPlaceNamesItsCause) {
  ObservedPod killed =
      RestartedWith(R"({"exitCode":137,"reason":"Error"})", R"({"exitCode":137,"reason":"RestartingAllContainers"})");
  EXPECT_TRUE(killed.failed);
  EXPECT_EQ(killed.trainer_exit_code, 137) << "a SIGKILL of the trainer is its own ending";
  EXPECT_EQ(killed.failure_detail, "trainer exited with code 137 (Error); its pod restarts in place");
  ObservedPod sidecar = RestartedWith(R"({"exitCode":137,"reason":"RestartingAllContainers"})", R"({"exitCode":2,"reason":"Error"})");
  EXPECT_EQ(sidecar.failure_detail, "the sidecar exited with code 2 (Error); its pod restarts in place");
  EXPECT_FALSE(sidecar.trainer_exit_code.has_value()) << "killed by its kubelet: not the trainer's code";
}

}  // namespace
}  // namespace ncclop::observed

namespace ncclop::observed {
namespace {

// A pod recreated per attempt whose sidecar is in `sidecar_state` with `sidecar_last` before its
// restart, its trainer in `trainer_state`.
ObservedPod RecreatedWithSidecar(const char* sidecar_state, const char* sidecar_last, const char* trainer_state) {
  std::string text = std::string(R"({"metadata":{"name":"demo-1"},"status":{"phase":"Running",
      "initContainerStatuses":[{"name":"nccl-sidecar","restartCount":1,"state":)") + sidecar_state +
                     R"(,"lastState":)" + sidecar_last + R"(}],
      "containerStatuses":[{"name":"trainer","state":)" + trainer_state + "}]}}";
  return ObservePod(nlohmann::json::parse(text), "trainer");
}

TEST(ObservePod, ASidecarThatFoundARankStalledFailsItsPodWithItsWords) {
  const char* stall = R"j({"terminated":{"exitCode":86,"reason":"Error","message":"rank 3 sent no progress report for 62s (last step 1234 at 2026-12-04T20:00:00Z)\n"}})j";
  ObservedPod restarted = RecreatedWithSidecar(R"({"running":{}})", stall, R"({"running":{}})");
  EXPECT_TRUE(restarted.failed);
  EXPECT_TRUE(restarted.stalled);
  EXPECT_EQ(restarted.failure_detail,
            "stalled: rank 3 sent no progress report for 62s (last step 1234 at 2026-12-04T20:00:00Z)");
  EXPECT_FALSE(restarted.trainer_exit_code.has_value());
  ObservedPod ended_now = RecreatedWithSidecar(stall, "{}", R"({"running":{}})");
  EXPECT_TRUE(ended_now.stalled) << "seen before its kubelet restarts it";
}

TEST(ObservePod, ATrainerThatEndedSaysWhyBeforeAStall) {
  const char* stall = R"({"terminated":{"exitCode":86,"message":"rank 3 sent no progress report for 62s"}})";
  ObservedPod crashed = RecreatedWithSidecar(R"({"running":{}})", stall, R"({"terminated":{"exitCode":3}})");
  EXPECT_TRUE(crashed.failed);
  EXPECT_FALSE(crashed.stalled);
  EXPECT_EQ(crashed.trainer_exit_code, 3);
  ObservedPod done = RecreatedWithSidecar(R"({"running":{}})", stall, R"({"terminated":{"exitCode":0}})");
  EXPECT_FALSE(done.failed);
  EXPECT_FALSE(done.stalled);
}

TEST(ObservePod, OtherSidecarExitsAreNoStall) {
  ObservedPod p = RecreatedWithSidecar(R"({"running":{}})", R"({"terminated":{"exitCode":2}})", R"({"running":{}})");
  EXPECT_FALSE(p.failed);
  EXPECT_FALSE(p.stalled);
}

TEST(ObservePod, AStallRestartsAPodInPlaceAsItsCause) {
  // The status that starts the restart: the sidecar lies terminated with the stall code, the
  // trainer still runs; the next status shows every container killed for the restart.
  nlohmann::json pod = nlohmann::json::parse(R"j({"metadata":{"name":"demo-1","annotations":{"nccl.dev/restarts-before-attempt":"0"}},
    "status":{"phase":"Running",
      "initContainerStatuses":[{"name":"nccl-sidecar","restartCount":0,"state":{"terminated":{"exitCode":86,"reason":"Error",
          "message":"rank 5 sent no progress report for 30s (last step 7 at 2026-12-04T20:00:00Z)"}}}],
      "containerStatuses":[{"name":"trainer","restartCount":0,"state":{"running":{}}}]}})j");
  ObservedPod p = ObservePod(pod, "trainer");
  EXPECT_TRUE(p.failed);
  EXPECT_TRUE(p.stalled);
  EXPECT_EQ(p.trainer_restarts, 0) << "its restart is to come";
  EXPECT_EQ(p.failure_detail, "stalled: rank 5 sent no progress report for 30s (last step 7 at 2026-12-04T20:00:00Z)");

  // Moved to the next attempt (restarts-before-attempt 1) before its kubelet restarted it: the
  // stall is the last attempt's, and the coming restart enters this one.
  pod["metadata"]["annotations"]["nccl.dev/restarts-before-attempt"] = "1";
  ObservedPod moved = ObservePod(pod, "trainer");
  EXPECT_FALSE(moved.failed);
  EXPECT_FALSE(moved.stalled);
}

TEST(ObservePod, AStallOfAnEarlierAttemptIsNoFailureOfAPodMovedInPlace) {
  // Its sidecar's last exit was the stall that ended attempt 1; the pod restarted once for it
  // and runs attempt 2 (restarts-before-attempt 1).
  nlohmann::json pod = nlohmann::json::parse(R"({"metadata":{"name":"demo-1","annotations":{"nccl.dev/restarts-before-attempt":"1"}},
    "status":{"phase":"Running",
      "initContainerStatuses":[{"name":"nccl-sidecar","restartCount":1,"state":{"running":{}},"lastState":{"terminated":{"exitCode":86}}}],
      "containerStatuses":[{"name":"trainer","restartCount":1,"state":{"running":{}},"lastState":{"terminated":{"exitCode":137,"reason":"RestartingAllContainers"}}}]}})");
  ObservedPod p = ObservePod(pod, "trainer");
  EXPECT_FALSE(p.failed);
  EXPECT_FALSE(p.stalled);
}

TEST(ObservePod, ReadsTheProgressAnnotation) {
  nlohmann::json pod = nlohmann::json::parse(R"({"metadata":{"name":"demo-0","annotations":{"nccl.dev/progress":"{\"step\":3}"}}})");
  EXPECT_EQ(ObservePod(pod, "trainer").progress, R"({"step":3})");
}

// A pod's delete event carries its last state; a disrupted pod of a job is remembered from it.
TEST(GoneDisruptedOf, ReadsTheJobIndexAttemptAndDisruptionOfADeletedPod) {
  Json pod = Json::parse(R"({"metadata":{"name":"demo-2","namespace":"ml",
      "labels":{"nccl.dev/job-name":"demo","nccl.dev/index":"2","nccl.dev/attempt":"3"},
      "ownerReferences":[{"kind":"ConfigMap","uid":"other"},{"kind":"NcclJob","uid":"uid-1"}]},
    "status":{"phase":"Running",
              "conditions":[{"type":"DisruptionTarget","status":"True","reason":"EvictionByEvictionAPI"}]}})");
  std::optional<GoneDisrupted> gone = GoneDisruptedOf(pod);
  ASSERT_TRUE(gone);
  EXPECT_EQ(gone->job_key, "ml/demo");
  EXPECT_EQ(gone->job_uid, "uid-1");
  EXPECT_EQ(gone->index, 2);
  EXPECT_EQ(gone->attempt, 3);
  EXPECT_EQ(gone->disruption.kind, "Eviction");

  Json succeeded = pod;  // evicted after its trainer exited 0, while its peers still ran
  succeeded["status"]["phase"] = "Succeeded";
  EXPECT_TRUE(GoneDisruptedOf(succeeded));
  Json plain = pod;  // deleted by someone, no disruption
  plain["status"]["conditions"] = Json::array();
  EXPECT_FALSE(GoneDisruptedOf(plain));
  Json orphan = pod;  // no NcclJob owner
  orphan["metadata"]["ownerReferences"].erase(1);
  EXPECT_FALSE(GoneDisruptedOf(orphan));
  Json unlabelled = pod;
  unlabelled["metadata"]["labels"].erase("nccl.dev/index");
  EXPECT_FALSE(GoneDisruptedOf(unlabelled));
  EXPECT_FALSE(GoneDisruptedOf(Json::parse(R"("a pod")")));
}

}  // namespace
}  // namespace ncclop::observed

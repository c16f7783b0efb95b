// What the operator saw of a job's pod, reduced to the facts the policies use. Built from the
// informer cache; pure, so the policies are tested with hand-made observations.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "observed/disruption.h"

namespace ncclop::observed {

struct ObservedPod {
  std::string name;
  int index = -1;    // nccl.dev/index label; -1 when missing or garbage
  int attempt = 0;   // nccl.dev/attempt label; 0 when missing or garbage
  std::string phase;
  bool ready = false;
  bool terminating = false;  // deletionTimestamp set
  bool trainer_succeeded = false;
  bool failed = false;                     // pod Failed or trainer exited non-zero
  std::optional<int> trainer_exit_code;    // when the trainer terminated
  std::string failure_detail;              // "exit code 3 (Error)", "Evicted: ..."
  std::optional<Disruption> disruption;    // preempted, evicted, node gone: not the trainer's own ending
  // Why the cluster does not start the pod, as the scheduler or the kubelet says it
  // (reason "ImagePullBackOff", detail "container trainer: ImagePullBackOff: Back-off pulling
  // image ..."); empty while it starts normally or once it ended.
  std::string start_blocked_reason;
  std::string start_blocked_detail;
  std::string unique_id;                   // root pod's id annotation (never logged)
  int unique_id_attempt = 0;
  std::string progress;                    // annotation nccl.dev/progress (pod 0's sidecar writes it)
  // Its sidecar found a rank stalled (exit code contract::kSidecarExitStalled): failed, and
  // failure_detail is the sidecar's termination message ("rank 3 sent no progress report for 62s
  // (last step 1234 at ...)").
  bool stalled = false;
  // Restarts in place (failurePolicy.restartStrategy InPlace, docs/DESIGN.md): a pod made for it
  // carries annotation nccl.dev/restarts-before-attempt (0 at creation; the operator sets it with
  // the attempt label when the pod is moved to a later attempt): the trainer's restart count its
  // attempt starts from. trainer_restarts is the trainer container's restartCount, plus one while
  // it lies terminated with a non-zero code (its restart is coming). Beyond restarts_before, the
  // pod failed in its attempt (failed, failure_detail from the containers' lastState).
  bool in_place = false;
  int restarts_before = 0;
  int trainer_restarts = 0;
  // Moved to its attempt but ended before the restart into it: its trainer exited 0 (the pod then
  // Succeeded) in the attempt before, when the move raced that exit. It never enters the attempt
  // it is labelled with (no restart will come), so it is not one of that attempt's pods: it goes
  // and is made again, and its exit is no success of this attempt.
  bool ended_before_its_attempt = false;

  bool Terminal() const { return failed || trainer_succeeded || phase == "Succeeded" || phase == "Failed"; }
};

ObservedPod ObservePod(const nlohmann::json& pod, const std::string& trainer_container);

// Which job, attempt and index a pod is of, from its labels: job_key namespace/<nccl.dev/job-name>
// ("" without that label), attempt 0 and index -1 when missing or garbage (as ObservePod reads them).
struct PodPlace {
  std::string job_key;
  int attempt = 0;
  int index = -1;
};
PodPlace PlaceOf(const nlohmann::json& pod);

// A job's pod deleted while disrupted, from the last state its delete event carried. Once it is
// gone no cache holds that state: a reconcile that comes only then sees a pod that disappeared,
// no disruption (policy/failure_policy.h). So the controller remembers these
// (controller/job_memory.h).
struct GoneDisrupted {
  std::string job_key;  // namespace/<nccl.dev/job-name label>
  std::string job_uid;  // its NcclJob owner reference's UID
  int attempt = 0;
  int index = -1;
  Disruption disruption;
};
// nullopt for a pod of no job or one that was not disrupted. A pod whose trainer had already
// exited 0 counts too: its attempt lost it as it would a pod seen being deleted disrupted
// (policy/failure_policy.h), and a pod that vanished cannot count among those that succeeded.
std::optional<GoneDisrupted> GoneDisruptedOf(const nlohmann::json& pod);

}  // namespace ncclop::observed

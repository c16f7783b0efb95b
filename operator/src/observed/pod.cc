#include "observed/pod.h"

#include <optional>
#include <set>
#include <string_view>

#include "api/nccl_job.h"
#include "contract/names.h"
#include "observed/fields.h"
#include "observed/ownership.h"

namespace ncclop::observed {
namespace {

using Json = nlohmann::json;

// state.terminated when the container terminated (any value there counts, as before), else null.
const Json* Terminated(const Json& container_status) {
  const Json& state = ObjectField(container_status, "state");
  auto it = state.find("terminated");
  return it != state.end() ? &*it : nullptr;
}

int ExitCode(const Json& terminated) {
  if (!terminated.is_object()) return 0;
  auto it = terminated.find("exitCode");
  return it != terminated.end() && it->is_number_integer() ? static_cast<int>(it->get<int64_t>()) : 0;
}

// The end of a termination message on one line: at most max_bytes, starting on a UTF-8
// character, newlines shown as " | ".
std::string MessageTail(const std::string& message, std::size_t max_bytes = 300) {
  std::size_t start = message.size() > max_bytes ? message.size() - max_bytes : 0;
  while (start < message.size() && (static_cast<unsigned char>(message[start]) & 0xC0) == 0x80) ++start;
  std::string out;
  for (std::size_t i = start; i < message.size(); ++i) {
    if (message[i] == '\n' || message[i] == '\r') {
      if (!out.empty() && out.back() != ' ') out += " | ";
    } else {
      out += message[i];
    }
  }
  while (!out.empty() && (out.back() == ' ' || out.back() == '|')) out.pop_back();
  return (start > 0 ? "..." : "") + out;
}

// Waiting reasons of a container the kubelet cannot start or keeps restarting; the rest
// (ContainerCreating, PodInitializing) are a normal start.
bool BlocksStart(const std::string& reason) {
  static const std::set<std::string> kBlocking = {
      "ErrImagePull",         "ImagePullBackOff",      "InvalidImageName", "ErrImageNeverPull",
      "CreateContainerError", "CreateContainerConfigError", "RunContainerError", "CrashLoopBackOff"};
  return kBlocking.count(reason) > 0;
}

// The scheduler's or the kubelet's reason why a pod that has not ended does not start.
void ObserveStartBlocked(const Json& status, ObservedPod& out) {
  for (const Json& c : ArrayField(status, "conditions")) {
    if (StringField(c, "type") == "PodScheduled" && StringField(c, "status") == "False" && StringField(c, "reason") == "Unschedulable") {
      out.start_blocked_reason = "Unschedulable";
      out.start_blocked_detail = "Unschedulable: " + MessageTail(StringField(c, "message"));
      return;
    }
  }
  for (const char* key : {"initContainerStatuses", "containerStatuses"}) {
    for (const Json& cs : ArrayField(status, key)) {
      const Json& waiting = ObjectField(ObjectField(cs, "state"), "waiting");
      const std::string reason = StringField(waiting, "reason");
      if (!BlocksStart(reason)) continue;
      out.start_blocked_reason = reason;
      out.start_blocked_detail = "container " + StringField(cs, "name") + ": " + reason;
      if (std::string message = MessageTail(StringField(waiting, "message")); !message.empty()) out.start_blocked_detail += ": " + message;
      return;
    }
  }
}

int IntAt(const Json& obj, const char* key) {
  if (!obj.is_object()) return 0;
  auto it = obj.find(key);
  return it != obj.end() && it->is_number_integer() ? static_cast<int>(it->get<int64_t>()) : 0;
}

// How a container ended before its last restart: its lastState.terminated, or null.
const Json* LastTerminated(const Json& container_status) {
  const Json& last = ObjectField(ObjectField(container_status, "lastState"), "terminated");
  return last.is_object() && last.contains("exitCode") ? &last : nullptr;
}

std::string EndedWith(const std::string& who, const Json& terminated) {
  const std::string reason = StringField(terminated, "reason");
  std::string detail = who + " exited with code " + std::to_string(ExitCode(terminated)) + (reason.empty() ? "" : " (" + reason + ")");
  if (std::string tail = MessageTail(StringField(terminated, "message")); !tail.empty()) detail += ", last output: " + tail;
  return detail + "; its pod restarts in place";
}

// Why a pod restarted in place, from how its containers ended last. The kubelet records every
// container it killed for the restart as reason RestartingAllContainers (code 137); the one whose
// exit started it ended otherwise: the trainer (its code, also a SIGKILL's 137), the sidecar (not
// with kSidecarExitAttemptOver: that is a move to the next attempt) or another container.
std::string RestartDetail(const Json& status, const std::string& trainer_container, std::optional<int>* trainer_code) {
  std::string other;
  for (const char* key : {"containerStatuses", "initContainerStatuses"}) {
    for (const Json& cs : ArrayField(status, key)) {
      const Json* last = LastTerminated(cs);
      if (last == nullptr || StringField(*last, "reason") == "RestartingAllContainers") continue;
      const std::string name = StringField(cs, "name");
      const int code = ExitCode(*last);
      if (code == 0) continue;
      if (key == std::string_view("containerStatuses") && name == trainer_container) {
        *trainer_code = code;
        return EndedWith("trainer", *last);
      }
      if (name == contract::kSidecarContainerName && code == contract::kSidecarExitAttemptOver) continue;
      if (other.empty()) {
        other = EndedWith(name == contract::kSidecarContainerName ? std::string("the sidecar") : "container " + name, *last);
      }
    }
  }
  return other.empty() ? "its containers were restarted in place" : other;
}

// The restart-in-place facts of ObservedPod (observed/pod.h).
void ObserveInPlace(const Json& annotations, const Json& status, const std::string& trainer_container, ObservedPod& out) {
  if (!annotations.is_object() || !annotations.contains(contract::kAnnotationRestartsBefore)) return;
  out.in_place = true;
  out.restarts_before = CountField(annotations, contract::kAnnotationRestartsBefore, 0);
  for (const Json& cs : ArrayField(status, "containerStatuses")) {
    if (StringField(cs, "name") != trainer_container) continue;
    const Json* terminated = Terminated(cs);
    out.trainer_restarts = IntAt(cs, "restartCount") + (terminated != nullptr && ExitCode(*terminated) != 0 ? 1 : 0);
  }
  if (out.phase == "Failed") return;  // as for any pod: ended, and why is said above
  if (out.trainer_restarts < out.restarts_before && (out.phase == "Succeeded" || out.trainer_succeeded)) {
    out.ended_before_its_attempt = true;
    out.trainer_succeeded = false;
    return;
  }
  if (out.trainer_restarts <= out.restarts_before) {
    // Killed by the restart that moves the pod to its attempt (or not started since): no failure.
    if (out.failed) {
      out.failed = false;
      out.failure_detail.clear();
      out.trainer_exit_code.reset();
    }
    return;
  }
  if (out.failed) return;  // terminated now: said above with its own words
  out.failed = true;
  out.failure_detail = RestartDetail(status, trainer_container, &out.trainer_exit_code);
}

// The sidecar's exit for a stalled rank: its termination message, or nullopt. `now`: only its
// current state (terminated, before its kubelet restarts it); else its last state as well.
std::optional<std::string> SidecarStall(const Json& status, bool now) {
  for (const Json& cs : ArrayField(status, "initContainerStatuses")) {
    if (StringField(cs, "name") != contract::kSidecarContainerName) continue;
    for (const Json* t : {Terminated(cs), now ? nullptr : LastTerminated(cs)}) {
      if (t != nullptr && ExitCode(*t) == contract::kSidecarExitStalled) {
        std::string message = StringField(*t, "message");
        while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
        return message.empty() ? std::string("its sidecar found a rank stalled") : message;
      }
    }
  }
  return std::nullopt;
}

// A stalled rank ends the attempt. A pod recreated per attempt: any stall exit of its sidecar,
// now or before its restart (the kubelet restarts a native sidecar alone and keeps its last
// state). A pod restarted in place: the sidecar lying terminated with the stall code, since that
// exit restarts every container and the kubelet's next status shows every container's last state
// as the restart's kill; the trainer's own non-zero exit says why first. Once the pod is moved to
// the next attempt (restarts-before-attempt beyond the trainer's restarts), the stall that still
// shows is the last attempt's.
void ObserveStall(const Json& status, ObservedPod& out) {
  if (out.trainer_succeeded || out.phase == "Succeeded" || out.phase == "Failed") return;
  if (out.trainer_exit_code && *out.trainer_exit_code != 0 && out.failed) return;
  // Moved to a later attempt before its kubelet restarted it: that restart enters the attempt.
  if (out.in_place && out.trainer_restarts < out.restarts_before) return;
  auto stall = SidecarStall(status, /*now=*/out.in_place);
  if (!stall) return;
  out.failed = true;
  out.stalled = true;
  out.failure_detail = "stalled: " + *stall;
}

}  // namespace

ObservedPod ObservePod(const Json& pod, const std::string& trainer_container) {
  ObservedPod out;
  const Json& md = ObjectField(pod, "metadata");
  const Json& labels = ObjectField(md, "labels");
  const Json& annotations = ObjectField(md, "annotations");
  out.name = StringField(md, "name");
  out.index = CountField(labels, contract::kLabelIndex, -1);
  out.attempt = CountField(labels, contract::kLabelAttempt, 0);
  out.terminating = api::BeingDeleted(md);
  if (annotations.is_object()) {
    out.unique_id = StringField(annotations, contract::kAnnotationUniqueId);
    out.unique_id_attempt = CountField(annotations, contract::kAnnotationUniqueIdAttempt, 0);
    out.progress = StringField(annotations, contract::kAnnotationProgress);
  }

  const Json& status = ObjectField(pod, "status");
  out.phase = StringField(status, "phase");
  for (const Json& c : ArrayField(status, "conditions")) {
    if (StringField(c, "type") == "Ready") out.ready = StringField(c, "status") == "True";
  }
  out.disruption = DisruptionOf(status);
  std::string other_failure;  // the first other container that exited non-zero, for the message
  for (const Json& cs : ArrayField(status, "initContainerStatuses")) {
    if (StringField(cs, "name") == contract::kSidecarContainerName) continue;
    const Json* terminated = Terminated(cs);
    if (terminated == nullptr) continue;
    const int code = ExitCode(*terminated);
    if (code != 0 && other_failure.empty()) {
      other_failure = "init container " + StringField(cs, "name") + " exited with code " + std::to_string(code);
    }
  }
  for (const Json& cs : ArrayField(status, "containerStatuses")) {
    const Json* terminated = Terminated(cs);
    if (terminated == nullptr) continue;
    if (StringField(cs, "name") != trainer_container) {
      const int other_code = ExitCode(*terminated);
      if (other_code != 0 && other_failure.empty()) {
        other_failure = "container " + StringField(cs, "name") + " exited with code " + std::to_string(other_code);
      }
      continue;
    }
    const Json& t = *terminated;
    int code = ExitCode(t);
    out.trainer_exit_code = code;
    if (code == 0) {
      out.trainer_succeeded = true;
    } else {
      out.failed = true;
      std::string reason = StringField(t, "reason");
      out.failure_detail = "trainer exited with code " + std::to_string(code) + (reason.empty() ? "" : " (" + reason + ")");
      if (std::string tail = MessageTail(StringField(t, "message")); !tail.empty()) out.failure_detail += ", last output: " + tail;
    }
  }
  if (out.phase == "Succeeded") out.trainer_succeeded = !out.failed;
  // The trainer decides: a pod that failed after its trainer exited 0 because another
  // container failed does not fail the attempt. A disruption does, even when the trainer
  // exited 0 on the SIGTERM that came with it (checkpoint and exit is common).
  if (out.phase == "Failed" && out.disruption) out.trainer_succeeded = false;
  if (out.phase == "Failed" && !out.failed && !out.trainer_succeeded) {
    out.failed = true;
    std::string reason = StringField(status, "reason");
    std::string message = StringField(status, "message");
    out.failure_detail = "pod failed" + (reason.empty() ? std::string() : ": " + reason) +
                         (message.empty() ? std::string() : " (" + message + ")") +
                         (other_failure.empty() ? std::string() : (reason.empty() ? ": " : "; ") + other_failure);
  }
  ObserveInPlace(annotations, status, trainer_container, out);
  ObserveStall(status, out);
  if (!out.Terminal() && !out.terminating) ObserveStartBlocked(status, out);
  return out;
}

PodPlace PlaceOf(const Json& pod) {
  const Json& labels = ObjectField(Metadata(pod), "labels");
  return {OwningJobKey(pod), CountField(labels, contract::kLabelAttempt, 0),
          CountField(labels, contract::kLabelIndex, -1)};
}

std::optional<GoneDisrupted> GoneDisruptedOf(const Json& pod) {
  std::optional<Disruption> disruption = DisruptionOf(ObjectField(pod, "status"));
  PodPlace place = PlaceOf(pod);
  if (!disruption || place.job_key.empty() || place.index < 0 || place.attempt < 1) return std::nullopt;
  std::string uid;
  for (const Json& ref : ArrayField(Metadata(pod), "ownerReferences")) {
    if (StringField(ref, "kind") == contract::kKind) uid = StringField(ref, "uid");
  }
  if (uid.empty()) return std::nullopt;
  return GoneDisrupted{std::move(place.job_key), std::move(uid), place.attempt, place.index, *disruption};
}

}  // namespace ncclop::observed

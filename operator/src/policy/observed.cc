#include "policy/observed.h"

#include <charconv>
#include <set>

#include "contract/names.h"
#include "api/nccl_job.h"

namespace ncclop::policy {
namespace {

using Json = nlohmann::json;

int PositiveInt(const Json& map, std::string_view key, int fallback) {
  if (!map.is_object()) return fallback;
  auto it = map.find(std::string(key));
  if (it == map.end() || !it->is_string()) return fallback;
  const std::string& s = it->get_ref<const std::string&>();
  int v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && end == s.data() + s.size() && v >= 0 ? v : fallback;
}

// A field of the expected kind, else an empty one: a pod is read, never trusted to be well-formed
// (a .value() of the wrong kind throws, which would end the operator).
const Json& ObjectAt(const Json& obj, const char* key) {
  static const Json kEmpty = Json::object();
  if (!obj.is_object()) return kEmpty;
  auto it = obj.find(key);
  return it != obj.end() && it->is_object() ? *it : kEmpty;
}

const Json& ArrayAt(const Json& obj, const char* key) {
  static const Json kEmpty = Json::array();
  if (!obj.is_object()) return kEmpty;
  auto it = obj.find(key);
  return it != obj.end() && it->is_array() ? *it : kEmpty;
}

// state.terminated when the container terminated (any value there counts, as before), else null.
const Json* Terminated(const Json& container_status) {
  const Json& state = ObjectAt(container_status, "state");
  auto it = state.find("terminated");
  return it != state.end() ? &*it : nullptr;
}

int ExitCode(const Json& terminated) {
  if (!terminated.is_object()) return 0;
  auto it = terminated.find("exitCode");
  return it != terminated.end() && it->is_number_integer() ? static_cast<int>(it->get<int64_t>()) : 0;
}

std::string Str(const Json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
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
  for (const Json& c : ArrayAt(status, "conditions")) {
    if (Str(c, "type") == "PodScheduled" && Str(c, "status") == "False" && Str(c, "reason") == "Unschedulable") {
      out.start_blocked_reason = "Unschedulable";
      out.start_blocked_detail = "Unschedulable: " + MessageTail(Str(c, "message"));
      return;
    }
  }
  for (const char* key : {"initContainerStatuses", "containerStatuses"}) {
    for (const Json& cs : ArrayAt(status, key)) {
      const Json& waiting = ObjectAt(ObjectAt(cs, "state"), "waiting");
      const std::string reason = Str(waiting, "reason");
      if (!BlocksStart(reason)) continue;
      out.start_blocked_reason = reason;
      out.start_blocked_detail = "container " + Str(cs, "name") + ": " + reason;
      if (std::string message = MessageTail(Str(waiting, "message")); !message.empty()) out.start_blocked_detail += ": " + message;
      return;
    }
  }
}

}  // namespace

ObservedPod ObservePod(const Json& pod, const std::string& trainer_container) {
  ObservedPod out;
  const Json& md = ObjectAt(pod, "metadata");
  const Json& labels = ObjectAt(md, "labels");
  const Json& annotations = ObjectAt(md, "annotations");
  out.name = Str(md, "name");
  out.index = PositiveInt(labels, contract::kLabelIndex, -1);
  out.attempt = PositiveInt(labels, contract::kLabelAttempt, 0);
  out.terminating = api::BeingDeleted(md);
  if (annotations.is_object()) {
    out.unique_id = Str(annotations, std::string(contract::kAnnotationUniqueId).c_str());
    out.unique_id_attempt = PositiveInt(annotations, contract::kAnnotationUniqueIdAttempt, 0);
  }

  const Json& status = ObjectAt(pod, "status");
  out.phase = Str(status, "phase");
  for (const Json& c : ArrayAt(status, "conditions")) {
    if (Str(c, "type") == "Ready") out.ready = Str(c, "status") == "True";
  }
  out.disruption = DisruptionOf(status);
  std::string other_failure;  // the first other container that exited non-zero, for the message
  for (const Json& cs : ArrayAt(status, "initContainerStatuses")) {
    if (Str(cs, "name") == contract::kSidecarContainerName) continue;
    const Json* terminated = Terminated(cs);
    if (terminated == nullptr) continue;
    const int code = ExitCode(*terminated);
    if (code != 0 && other_failure.empty()) {
      other_failure = "init container " + Str(cs, "name") + " exited with code " + std::to_string(code);
    }
  }
  for (const Json& cs : ArrayAt(status, "containerStatuses")) {
    const Json* terminated = Terminated(cs);
    if (terminated == nullptr) continue;
    if (Str(cs, "name") != trainer_container) {
      const int other_code = ExitCode(*terminated);
      if (other_code != 0 && other_failure.empty()) {
        other_failure = "container " + Str(cs, "name") + " exited with code " + std::to_string(other_code);
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
      std::string reason = Str(t, "reason");
      out.failure_detail = "trainer exited with code " + std::to_string(code) + (reason.empty() ? "" : " (" + reason + ")");
      if (std::string tail = MessageTail(Str(t, "message")); !tail.empty()) out.failure_detail += ", last output: " + tail;
    }
  }
  if (out.phase == "Succeeded") out.trainer_succeeded = !out.failed;
  // The trainer decides: a pod that failed after its trainer exited 0 because another
  // container failed does not fail the attempt. A disruption does, even when the trainer
  // exited 0 on the SIGTERM that came with it (checkpoint and exit is common).
  if (out.phase == "Failed" && out.disruption) out.trainer_succeeded = false;
  if (out.phase == "Failed" && !out.failed && !out.trainer_succeeded) {
    out.failed = true;
    std::string reason = Str(status, "reason");
    std::string message = Str(status, "message");
    out.failure_detail = "pod failed" + (reason.empty() ? std::string() : ": " + reason) +
                         (message.empty() ? std::string() : " (" + message + ")") +
                         (other_failure.empty() ? std::string() : (reason.empty() ? ": " : "; ") + other_failure);
  }
  if (!out.Terminal() && !out.terminating) ObserveStartBlocked(status, out);
  return out;
}

ObservedConfigMap ObserveConfigMap(const Json& configmap) {
  ObservedConfigMap out;
  if (!configmap.is_object()) return out;
  out.exists = true;
  const Json& data = ObjectAt(configmap, "data");
  out.attempt = PositiveInt(data, contract::kDataAttempt, 0);
  out.has_id = data.is_object() && !Str(data, std::string(contract::kDataUniqueId).c_str()).empty();
  out.published_at = data.is_object() ? Str(data, std::string(contract::kDataPublishedAt).c_str()) : "";
  out.job_uid = data.is_object() ? Str(data, std::string(contract::kDataJobUid).c_str()) : "";
  return out;
}

}  // namespace ncclop::policy

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

  bool Terminal() const { return failed || trainer_succeeded || phase == "Succeeded" || phase == "Failed"; }
};

ObservedPod ObservePod(const nlohmann::json& pod, const std::string& trainer_container);

}  // namespace ncclop::observed

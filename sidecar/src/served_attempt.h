// In place (--in-place-state, Kubernetes mode): the kubelet restarts every container of a pod
// for the job's next attempt instead of the operator recreating the pod, so the attempt a pod
// serves can move past its NCCLJOB_ATTEMPT (the attempt it was created for). The sidecar keeps
// the last attempt it served in a file of the pod's emptyDir, which outlives such a restart, and
// on each start serves the first attempt the ConfigMap names after that one: a pod restarted
// because its own trainer failed waits for the operator's next attempt and never hands out the
// id of the attempt that just failed. The decisions are pure; the file's I/O is beside them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sidecar {

// The state file in the --in-place-state directory: the last attempt served, in decimal.
inline constexpr char kServedAttemptFile[] = "attempt";

// A state file's text as an attempt (>= 1, decimal, one trailing newline allowed); nullopt for
// anything else.
std::optional<int64_t> ParseServedAttempt(std::string_view text);

// The last attempt this pod served: the state file's, or, without one (the pod's first start),
// the one before the attempt the pod was created for.
int64_t LastServedAttempt(std::optional<int64_t> state_file, int64_t env_attempt);

struct ServedAttemptDecision {
  bool serve = false;   // false: wait for the ConfigMap to name a later attempt
  // A first start (no state file) that finds the job already past the attempt the pod was made
  // for: the pod enters the later attempt as every other pod of its attempt does, through one
  // restart of its containers (record `attempt`, the pod's own, then exit
  // contract::kSidecarExitAttemptOver), so the operator counts one restart for every pod it moves.
  bool restart = false;
  int64_t attempt = 0;  // when serve: the attempt this pod serves from now on; when restart: the one to record
};

// `configmap_attempt`: the latest attempt the job's ConfigMap named (0: not listed yet).
ServedAttemptDecision DecideServedAttempt(std::optional<int64_t> state_file, int64_t env_attempt,
                                          int64_t configmap_attempt);

// What a start records before it waits for the ConfigMap: a pod's first start (no state file) enters
// the attempt the pod was made for, so it records that attempt at once, before it has served it. A
// restart of the pod's containers before the first start served (its trainer killed while the
// sidecar still waited for the ConfigMap) is then the end of that attempt for this pod, as every
// other restart is: it waits for the next attempt instead of serving the one that just failed.
// nullopt: nothing to record (a later start, whose file already says).
std::optional<int64_t> AttemptEnteredAtStart(std::optional<int64_t> state_file, int64_t env_attempt);

// Serving `served`: the ConfigMap names a later attempt, so this pod's attempt is over.
bool AttemptOver(int64_t served, int64_t configmap_attempt);

// What ReadServedAttempt found in the directory.
struct ServedAttemptFile {
  std::optional<int64_t> attempt;  // the attempt the file holds
  std::string problem;             // set when a file is there but holds no attempt (for a warning)
  std::string error;               // set when the directory cannot be used at all
};

// Reads `dir`/attempt. No file is not an error (a pod's first start); a directory that is not
// there is (the operator mounts an emptyDir at contract::kSidecarStateDir).
ServedAttemptFile ReadServedAttempt(const std::string& dir);

// Writes `attempt` to `dir`/attempt through a temporary file renamed over it, so a restart reads
// the old attempt or the new one, never a torn write. Returns "" or what failed.
std::string WriteServedAttempt(const std::string& dir, int64_t attempt);

}  // namespace sidecar

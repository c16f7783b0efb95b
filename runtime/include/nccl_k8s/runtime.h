// nccl-k8s runtime, C++ API. A trainer in an NcclJob pod builds its NCCL communicators with one
// call:
//
//   auto comms = nccl_k8s::Init();          // env -> NCCL_SOCKET_IFNAME -> id -> communicators
//   if (!comms.ok()) { std::cerr << comms.status().ToString(); return 1; }
//   ncclAllReduce(..., comms->comm(0), stream);
//
// or step by step (ReadJobEnv, ConfigureSocketIfname, ObtainUniqueId, InitCommunicators) when a
// framework owns part of the flow. The C API over this is nccl_k8s/nccl_k8s.h.
#pragma once

#include <nccl.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "nccl_k8s/job_env.h"
#include "nccl_k8s/progress.h"
#include "nccl_k8s/status.h"

namespace nccl_k8s {

using Clock = std::chrono::steady_clock;
using Deadline = Clock::time_point;

// ---- NCCL_SOCKET_IFNAME ------------------------------------------------------------------

enum class IfnameSource {
  kUser,          // NCCL_SOCKET_IFNAME was already set; kept as it is
  kPodIp,         // the interface that holds NCCLJOB_POD_IP
  kDefaultRoute,  // the interface of the default route
  kNone,          // nothing found: left unset, NCCL chooses
};
const char* IfnameSourceName(IfnameSource source);

struct IfnameChoice {
  std::string value;  // what NCCL_SOCKET_IFNAME holds afterwards ("" when unset)
  IfnameSource source = IfnameSource::kNone;
  std::vector<std::string> warnings;
};

// Sets NCCL_SOCKET_IFNAME unless the user set it. Must run before the process's first NCCL
// call (NCCL reads the variable once); ObtainUniqueId and Init call it for you. Logs the choice
// once per process; later calls return the first choice.
IfnameChoice ConfigureSocketIfname(const JobEnv& env);

// ---- the unique id ---------------------------------------------------------------------------

// The attempt this pod serves now, as its sidecar says (GET /v1/info): after the kubelet restarted
// the pod's containers in place for a later attempt it is past env.attempt (NCCLJOB_ATTEMPT, the
// attempt the pod was created for). Asks again while the sidecar does not answer (it is starting,
// or waits to learn its attempt) or answers 5xx, until the deadline. ObtainUniqueIds uses it.
Result<int> ServedAttempt(const JobEnv& env, Deadline deadline);

// The ids of this pod's attempt (ServedAttempt), one per bootstrap root (NCCLJOB_BOOTSTRAP_ROOTS,
// default 1), in the order ncclCommInitRankScalable takes them. A root pod (index 0 with one root;
// docs/contracts.md "Bootstrap roots" with several) calls ncclGetUniqueId and POSTs its id to the sidecar;
// every pod but a lone root then long-polls the sidecar until it serves the list of its attempt,
// retrying on connection errors until the deadline.
Result<std::vector<ncclUniqueId>> ObtainUniqueIds(const JobEnv& env, Deadline deadline);

// The one id of a job with one bootstrap root (kInvalidArgument when it has several).
Result<ncclUniqueId> ObtainUniqueId(const JobEnv& env, Deadline deadline);

// ---- communicators ---------------------------------------------------------------------------

struct CommOptions {
  // CUDA device of each local rank. Empty: devices 0 .. ranks_per_pod-1.
  std::vector<int> devices;
  // Overrides NCCLJOB_INIT_TIMEOUT_SECONDS when > 0.
  std::chrono::milliseconds timeout{0};
  // Which communicators comm() hands out. Unset: NCCL_K8S_COMM_MODE (default "blocking").
  // true: plain blocking NCCL communicators, made by ncclCommInitRankConfig with NCCL's default
  //   config (what a trainer's own ncclCommInitRank makes): plain NCCL semantics and speed. A
  //   blocking init cannot be abandoned, so if it is still running at the deadline a watchdog
  //   thread logs why and ends the process (exit status 124); the operator restarts the attempt.
  // false: non-blocking communicators (config.blocking = 0), polled against the deadline and
  //   aborted when it passes (Init returns kDeadlineExceeded instead of ending the process); but
  //   any NCCL call on them may answer ncclInProgress (poll ncclCommGetAsyncError or WaitReady
  //   before the next call), and NCCL runs every group call on a new thread: tens of µs more per
  //   collective. For frameworks that already poll non-blocking communicators.
  std::optional<bool> blocking;
};

// Where init time went (milliseconds), for logs and benchmarks.
struct InitTimings {
  double init_ms = 0;  // ncclCommInitRankConfig (or ...Scalable) of every local rank until ready
};

// The communicators of this process: local rank g has NCCL rank index*ranks_per_pod + g.
// Move-only; the destructor destroys what is still alive (Destroy reports errors instead).
class Communicators {
 public:
  Communicators() = default;
  Communicators(Communicators&& other) noexcept;
  Communicators& operator=(Communicators&& other) noexcept;
  Communicators(const Communicators&) = delete;
  Communicators& operator=(const Communicators&) = delete;
  ~Communicators();

  int local_count() const { return static_cast<int>(comms_.size()); }
  int world_size() const { return world_size_; }
  ncclComm_t comm(int local) const { return comms_.at(local); }
  int rank(int local) const { return ranks_.at(local); }
  int device(int local) const { return devices_.at(local); }
  // Whether these are blocking communicators (kept after Abort/Destroy).
  bool blocking() const { return blocking_; }
  // Whether ncclCommInitRankScalable built them, and from how many ids.
  bool scalable() const { return scalable_; }
  int id_count() const { return id_count_; }
  const InitTimings& timings() const { return timings_; }

  // Non-blocking communicators (CommOptions.blocking = false) may answer ncclInProgress to any
  // call; this polls ncclCommGetAsyncError on every communicator until all are ready, an error
  // comes (then all are aborted) or the timeout passes (likewise). Blocking ones: an error check.
  Status WaitReady(std::chrono::milliseconds timeout);

  // Finalizes (flushes outstanding work) and destroys every communicator.
  Status Destroy(std::chrono::milliseconds timeout = std::chrono::seconds(60));
  // Aborts every communicator at once (after an error; never blocks on peers).
  void Abort();

 private:
  friend Result<Communicators> InitCommunicators(const JobEnv&, const std::vector<ncclUniqueId>&,
                                                 const CommOptions&, Deadline);
  std::vector<ncclComm_t> comms_;
  InitTimings timings_;
  std::vector<int> ranks_;
  std::vector<int> devices_;
  int world_size_ = 0;
  bool blocking_ = false;
  bool scalable_ = false;
  int id_count_ = 1;
};

// This process's communicators (one group init for several GPUs) in the mode CommOptions.blocking /
// NCCL_K8S_COMM_MODE picks, under `deadline`: blocking ones end the process when the deadline
// passes during init (see CommOptions); non-blocking ones are aborted and the Status says why.
// NCCL errors carry ncclGetErrorString and ncclGetLastError. One id: ncclCommInitRankConfig;
// several ids, or NCCLJOB_BOOTSTRAP_ROOTS given (env.bootstrap_roots_set):
// ncclCommInitRankScalable with the list, under the same deadline, abort and errors.
Result<Communicators> InitCommunicators(const JobEnv& env, const std::vector<ncclUniqueId>& ids,
                                        const CommOptions& options, Deadline deadline);
Result<Communicators> InitCommunicators(const JobEnv& env, const ncclUniqueId& id,
                                        const CommOptions& options, Deadline deadline);

// options.blocking if set, else NCCL_K8S_COMM_MODE (kInvalidEnv when it is neither mode).
Result<bool> ResolveBlocking(const CommOptions& options);

// All of it under one deadline (NCCLJOB_INIT_TIMEOUT_SECONDS or options.timeout).
Result<Communicators> Init(const CommOptions& options = {});

// ---- id encodings (for tools and frameworks that take the id as text) -----------------------

std::string EncodeIdHex(const ncclUniqueId& id);
std::string EncodeIdBase64(const ncclUniqueId& id);

}  // namespace nccl_k8s

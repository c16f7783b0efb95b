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

// Root (index 0): ncclGetUniqueId, then POST it to the sidecar. Others: long-poll the sidecar
// until it serves the id of this pod's attempt, retrying on connection errors until deadline.
Result<ncclUniqueId> ObtainUniqueId(const JobEnv& env, Deadline deadline);

// ---- communicators ---------------------------------------------------------------------------

struct CommOptions {
  // CUDA device of each local rank. Empty: devices 0 .. ranks_per_pod-1.
  std::vector<int> devices;
  // Overrides NCCLJOB_INIT_TIMEOUT_SECONDS when > 0.
  std::chrono::milliseconds timeout{0};
  // Which communicators comm() hands out. Unset: NCCL_K8S_COMM_MODE (default "nonblocking").
  // false: the non-blocking init communicators themselves (config.blocking = 0): init costs
  //   NCCL's own init plus ~1 ms, but any NCCL call on them may answer ncclInProgress (poll
  //   ncclCommGetAsyncError or WaitReady before the next call), and NCCL runs every group call on
  //   a new thread: tens of µs more per collective (1 MiB all-reduce ~74 µs vs ~20 µs raw).
  // true: blocking communicators split (ncclCommSplit, shared resources) from those once they
  //   are ready, under the same deadline: plain NCCL semantics and raw small-message latency,
  //   for about one more NCCL init (~50 ms on 2 H200) once per job.
  std::optional<bool> blocking;
};

// Where init time went (milliseconds), for logs and benchmarks.
struct InitTimings {
  double init_ms = 0;   // non-blocking ncclCommInitRankConfig until ready
  double split_ms = 0;  // ncclCommSplit to blocking communicators until ready (0 when not split)
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
  // Whether these are the blocking split communicators (kept after Abort/Destroy).
  bool blocking() const { return blocking_; }
  const InitTimings& timings() const { return timings_; }

  // Non-blocking communicators (the default; CommOptions.blocking) may answer ncclInProgress to any
  // call; this polls ncclCommGetAsyncError on every communicator until all are ready, an error
  // comes (then all are aborted) or the timeout passes (likewise). Blocking ones: an error check.
  Status WaitReady(std::chrono::milliseconds timeout);

  // Finalizes (flushes outstanding work) and destroys every communicator.
  Status Destroy(std::chrono::milliseconds timeout = std::chrono::seconds(60));
  // Aborts every communicator at once (after an error; never blocks on peers).
  void Abort();

 private:
  friend Result<Communicators> InitCommunicators(const JobEnv&, const ncclUniqueId&,
                                                 const CommOptions&, Deadline);
  std::vector<ncclComm_t> comms_;    // what comm() hands out
  // The non-blocking init communicators comms_ were split from; idle, kept until Destroy because
  // the split shares their resources (proxy thread, buffers).
  std::vector<ncclComm_t> parents_;
  InitTimings timings_;
  std::vector<int> ranks_;
  std::vector<int> devices_;
  int world_size_ = 0;
  bool blocking_ = false;
};

// Non-blocking init of this process's communicators (group init for several GPUs), then (when
// blocking communicators are asked for) their blocking split; aborts all of them when the deadline passes or NCCL reports an
// error, with ncclGetErrorString and ncclGetLastError in the message.
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

// Communicator init for the ranks of this process (several GPUs through one group) under the init
// deadline, in the mode NCCL_K8S_COMM_MODE / CommOptions.blocking picks:
//   blocking (default): plain blocking NCCL communicators, made by ncclCommInitRankConfig with
//     NCCL's default config, as a trainer would make them; an ExitWatchdog ends the process if the
//     init outlives the deadline (a blocking init cannot be abandoned);
//   non-blocking: config.blocking = 0, polled against the deadline and aborted when it passes.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <thread>

#include "exit_watchdog.h"
#include "init_deadline.h"
#include "log.h"
#include "nccl_k8s/runtime.h"
#include "nccl_version.h"

// A weak reference: an older NCCL without it (before 2.23) leaves it null instead of stopping the
// process at load or at the call (RequireScalableInit says so first).
#pragma weak ncclCommInitRankScalable

namespace nccl_k8s {
namespace {

using std::chrono::milliseconds;

std::string NcclError(const std::string& what, ncclResult_t rc, ncclComm_t comm) {
  const char* last = ncclGetLastError(comm);
  return what + ": " + ncclGetErrorString(rc) + (last && *last ? std::string(" (") + last + ")" : "");
}

// Polls until no communicator is in progress. Returns the first error, or kDeadlineExceeded.
// Blocking communicators are never in progress: one ncclCommGetAsyncError each.
Status PollReady(const std::vector<ncclComm_t>& comms, Deadline deadline, const std::string& what) {
  // Yields for the first millisecond, then sleeps 50 µs a round: a ready communicator is seen
  // within ~0.1 ms (a sleep that backs off to 1 ms added ~0.5 ms to every init on average).
  const auto spin_until = Clock::now() + milliseconds(1);
  for (;;) {
    bool pending = false;
    for (ncclComm_t comm : comms) {
      ncclResult_t state = ncclSuccess;
      ncclResult_t rc = ncclCommGetAsyncError(comm, &state);
      if (rc != ncclSuccess) return Status(Code::kNccl, NcclError(what + ": ncclCommGetAsyncError", rc, comm));
      if (state == ncclInProgress) {
        pending = true;
      } else if (state != ncclSuccess) {
        return Status(Code::kNccl, NcclError(what, state, comm));
      }
    }
    if (!pending) return Status::Ok();
    auto now = Clock::now();
    if (now >= deadline) {
      return Status(Code::kDeadlineExceeded, what + " did not finish before the deadline");
    }
    if (now < spin_until) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
}

double MillisSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Finalize flushes outstanding operations; grouped so several local ranks finish together.
// Blocking communicators finish inside ncclGroupEnd, non-blocking ones are polled.
Status FinalizeAndDestroy(std::vector<ncclComm_t>& comms, milliseconds timeout) {
  if (comms.empty()) return Status::Ok();
  ncclGroupStart();
  for (ncclComm_t comm : comms) ncclCommFinalize(comm);
  ncclResult_t rc = ncclGroupEnd();
  if (rc != ncclSuccess && rc != ncclInProgress) {
    return Status(Code::kNccl, NcclError("ncclCommFinalize", rc, comms.front()));
  }
  Status status = PollReady(comms, Clock::now() + timeout, "ncclCommFinalize");
  if (!status.ok()) return status;
  for (ncclComm_t comm : comms) ncclCommDestroy(comm);
  comms.clear();
  return Status::Ok();
}

void AbortAll(std::vector<ncclComm_t>& comms) {
  for (ncclComm_t comm : comms) {
    if (comm != nullptr) ncclCommAbort(comm);
  }
  comms.clear();
}

// The CUDA device of each local rank: options.devices, else 0 .. ranks_per_pod-1; each must exist.
Result<std::vector<int>> ChooseDevices(const JobEnv& env, const CommOptions& options) {
  const int local = env.ranks_per_pod();
  std::vector<int> devices = options.devices;
  if (devices.empty()) {
    for (int g = 0; g < local; ++g) devices.push_back(g);
  }
  if (static_cast<int>(devices.size()) != local) {
    return Status(Code::kInvalidArgument, "CommOptions.devices names " + std::to_string(devices.size()) +
                                              " devices but this pod has " + std::to_string(local) +
                                              " ranks (NCCLJOB_GPUS_PER_POD)");
  }
  int device_count = 0;
  cudaError_t cerr = cudaGetDeviceCount(&device_count);
  if (cerr != cudaSuccess || device_count == 0) {
    return Status(Code::kNoGpu, std::string("no CUDA device visible to this process (") +
                                    (cerr != cudaSuccess ? cudaGetErrorString(cerr) : "0 devices") +
                                    "); request nvidia.com/gpu in the pod or set gpusPerPod");
  }
  for (int d : devices) {
    if (d < 0 || d >= device_count) {
      return Status(Code::kInvalidArgument, "CUDA device " + std::to_string(d) + " does not exist (" +
                                                std::to_string(device_count) + " visible)");
    }
  }
  return devices;
}

// What the init of this process's ranks takes besides the mode: the ids, and whether
// ncclCommInitRankScalable takes them (several ids, or asked for) rather than ncclCommInitRankConfig.
struct InitIds {
  std::vector<ncclUniqueId> ids;
  bool scalable = false;
  const char* call() const { return scalable ? "ncclCommInitRankScalable" : "ncclCommInitRankConfig"; }
};

// One init per local rank, in one group. Blocking: returns when every init is
// done. Non-blocking: returns once they are started (poll them). On failure nothing is left.
Status StartInit(InitIds& ids, int world_size, const std::vector<int>& ranks,
                 const std::vector<int>& devices, bool blocking, std::vector<ncclComm_t>& comms) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;  // NCCL's defaults, as a trainer's own init has
  config.blocking = blocking ? 1 : 0;
  comms.assign(ranks.size(), nullptr);
  int previous_device = 0;
  cudaGetDevice(&previous_device);
  std::string failure;
  Code code = Code::kNccl;
  ncclResult_t rc = ncclGroupStart();
  for (size_t g = 0; g < ranks.size() && rc == ncclSuccess && failure.empty(); ++g) {
    if (cudaError_t cerr = cudaSetDevice(devices[g]); cerr != cudaSuccess) {
      failure = "cudaSetDevice(" + std::to_string(devices[g]) + "): " + cudaGetErrorString(cerr);
      code = Code::kCuda;
      break;
    }
    ncclResult_t init =
        ids.scalable ? ncclCommInitRankScalable(&comms[g], world_size, ranks[g], static_cast<int>(ids.ids.size()),
                                                ids.ids.data(), &config)
                     : ncclCommInitRankConfig(&comms[g], world_size, ids.ids.front(), ranks[g], &config);
    if (init != ncclSuccess && init != ncclInProgress) rc = init;
  }
  ncclResult_t end = ncclGroupEnd();
  cudaSetDevice(previous_device);
  if (rc == ncclSuccess && end != ncclSuccess && end != ncclInProgress) rc = end;
  std::erase(comms, nullptr);  // a failed init leaves no handle to poll or abort
  if (failure.empty() && rc == ncclSuccess && comms.size() == ranks.size()) return Status::Ok();
  if (failure.empty()) {
    failure = NcclError(ids.call(), rc == ncclSuccess ? ncclInternalError : rc,
                        comms.empty() ? nullptr : comms.front());
  }
  AbortAll(comms);
  return Status(code, failure);
}

// Blocking init: NCCL's own call, watched. If it is still running at the deadline the watchdog
// ends the process with InitDeadlineMessage (ExitWatchdog says why nothing gentler is safe).
Status InitBlocking(InitIds& id, int world_size, const std::vector<int>& ranks,
                    const std::vector<int>& devices, Deadline deadline, std::vector<ncclComm_t>& comms) {
  // One line under the 300 bytes of its end that the operator quotes in the job's status.
  ExitWatchdog watchdog(deadline, InitDeadlineMessage(ranks, world_size) + "; ending the process", {});
  Status started = StartInit(id, world_size, ranks, devices, /*blocking=*/true, comms);
  if (!started.ok()) return started;
  // Returns at once, unless NCCL_COMM_BLOCKING=0 in the environment made NCCL build them non-blocking.
  return PollReady(comms, deadline, "communicator init");
}

// Non-blocking init: started, then polled until ready, an error, or the deadline.
Status InitNonBlocking(InitIds& id, int world_size, const std::vector<int>& ranks,
                       const std::vector<int>& devices, Deadline deadline, std::vector<ncclComm_t>& comms) {
  Status started = StartInit(id, world_size, ranks, devices, /*blocking=*/false, comms);
  if (!started.ok()) return started;
  return PollReady(comms, deadline, "communicator init");
}

void LogReady(const Communicators& comms) {
  char init_ms[32];
  std::snprintf(init_ms, sizeof init_ms, "%.1f", comms.timings().init_ms);
  std::vector<int> ranks;
  for (int g = 0; g < comms.local_count(); ++g) ranks.push_back(comms.rank(g));
  log::Info("communicators ready", {{"ranks", RankRange(ranks)},
                                    {"world_size", std::to_string(comms.world_size())},
                                    {"blocking", comms.blocking() ? "true" : "false"},
                                    {"ids", std::to_string(comms.id_count())},
                                    {"scalable", comms.scalable() ? "true" : "false"},
                                    {"init_ms", init_ms}});
}

}  // namespace

Communicators::Communicators(Communicators&& other) noexcept { *this = std::move(other); }

Communicators& Communicators::operator=(Communicators&& other) noexcept {
  if (this != &other) {
    Destroy();
    comms_ = std::move(other.comms_);
    timings_ = other.timings_;
    ranks_ = std::move(other.ranks_);
    devices_ = std::move(other.devices_);
    world_size_ = other.world_size_;
    blocking_ = other.blocking_;
    scalable_ = other.scalable_;
    id_count_ = other.id_count_;
    other.comms_.clear();
  }
  return *this;
}

Communicators::~Communicators() { Destroy(); }

Status Communicators::WaitReady(milliseconds timeout) {
  Status status = PollReady(comms_, Clock::now() + timeout, "NCCL operation");
  if (!status.ok()) Abort();
  return status;
}

void Communicators::Abort() {
  if (comms_.empty()) return;
  log::Warn("aborting communicators", {{"count", std::to_string(comms_.size())}});
  AbortAll(comms_);
}

Status Communicators::Destroy(milliseconds timeout) {
  Status status = FinalizeAndDestroy(comms_, timeout);
  if (!status.ok()) Abort();
  return status;
}

Result<Communicators> InitCommunicators(const JobEnv& env, const ncclUniqueId& id,
                                        const CommOptions& options, Deadline deadline) {
  return InitCommunicators(env, std::vector<ncclUniqueId>{id}, options, deadline);
}

Result<Communicators> InitCommunicators(const JobEnv& env, const std::vector<ncclUniqueId>& id_list,
                                        const CommOptions& options, Deadline deadline) {
  if (id_list.empty() || static_cast<int>(id_list.size()) > env.world_size) {
    return Status(Code::kInvalidArgument, "communicator init takes 1 to world size (" +
                                              std::to_string(env.world_size) + ") ids, got " +
                                              std::to_string(id_list.size()));
  }
  InitIds ids{id_list, id_list.size() > 1 || env.bootstrap_roots_set};
  if (ids.scalable) {
    int loaded = 0;
    ncclGetVersion(&loaded);
    if (ncclCommInitRankScalable == nullptr) loaded = std::min(loaded, kNcclScalableInit - 1);
    if (Status s = RequireNccl(loaded, kNcclScalableInit, "init from several bootstrap roots (ncclCommInitRankScalable)");
        !s.ok()) {
      return s;
    }
  }
  auto blocking = ResolveBlocking(options);
  if (!blocking.ok()) return blocking.status();
  auto devices = ChooseDevices(env, options);
  if (!devices.ok()) return devices.status();

  Communicators out;
  out.world_size_ = env.world_size;
  out.blocking_ = *blocking;
  out.scalable_ = ids.scalable;
  out.id_count_ = static_cast<int>(ids.ids.size());
  out.devices_ = std::move(*devices);
  for (int g = 0; g < env.ranks_per_pod(); ++g) out.ranks_.push_back(env.first_rank() + g);
  if (Clock::now() >= deadline) {
    return Status(Code::kDeadlineExceeded, "rank(s) " + RankRange(out.ranks_) +
                                               ": the init deadline passed before communicator init began");
  }

  const auto start = Clock::now();
  Status ready = *blocking ? InitBlocking(ids, env.world_size, out.ranks_, out.devices_, deadline, out.comms_)
                           : InitNonBlocking(ids, env.world_size, out.ranks_, out.devices_, deadline, out.comms_);
  out.timings_.init_ms = MillisSince(start);
  if (!ready.ok()) {
    out.Abort();
    std::string what = ready.code() == Code::kDeadlineExceeded
                           ? InitDeadlineMessage(out.ranks_, env.world_size)
                           : "rank(s) " + RankRange(out.ranks_) + ": " + ready.message();
    return Status(ready.code(), what + "; all communicators of this process were aborted");
  }
  LogReady(out);
  return out;
}

Result<bool> ResolveBlocking(const CommOptions& options) {
  if (options.blocking.has_value()) return *options.blocking;
  return ReadBlockingCommMode();
}

Result<Communicators> Init(const CommOptions& options) {
  auto env = ReadJobEnv();
  if (!env.ok()) return env.status();
  auto blocking = ResolveBlocking(options);  // a bad NCCL_K8S_COMM_MODE fails before the id exchange
  if (!blocking.ok()) return blocking.status();
  CommOptions resolved = options;
  resolved.blocking = *blocking;
  auto timeout = options.timeout.count() > 0 ? options.timeout
                                             : std::chrono::duration_cast<milliseconds>(env->init_timeout);
  Deadline deadline = Clock::now() + timeout;
  auto ids = ObtainUniqueIds(*env, deadline);
  if (!ids.ok()) return ids.status();
  return InitCommunicators(*env, *ids, resolved, deadline);
}

}  // namespace nccl_k8s

// Non-blocking communicator init with a deadline, several GPUs per process through one group,
// then, when asked for (CommOptions.blocking, NCCL_K8S_COMM_MODE=blocking), a blocking split.
#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdio>
#include <thread>

#include "log.h"
#include "nccl_k8s/runtime.h"

namespace nccl_k8s {
namespace {

using std::chrono::milliseconds;

std::string NcclError(const std::string& what, ncclResult_t rc, ncclComm_t comm) {
  const char* last = ncclGetLastError(comm);
  return what + ": " + ncclGetErrorString(rc) + (last && *last ? std::string(" (") + last + ")" : "");
}

// Polls until no communicator is in progress. Returns the first error, or kDeadlineExceeded.
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
  for (ncclComm_t& comm : comms) {
    if (comm != nullptr) ncclCommAbort(comm);
    comm = nullptr;
  }
}

// Splits each non-blocking parent into a blocking communicator of the same ranks. The split is
// collective over the parent and runs asynchronously (the parent is non-blocking), so it is
// polled against the same deadline; a rank that dies in between cannot hang us.
Result<std::vector<ncclComm_t>> SplitBlocking(const std::vector<ncclComm_t>& parents,
                                              const std::vector<int>& ranks, Deadline deadline) {
  std::vector<ncclComm_t> children(parents.size(), nullptr);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 1;
  ncclResult_t rc = ncclGroupStart();
  for (size_t g = 0; g < parents.size() && rc == ncclSuccess; ++g) {
    ncclResult_t split = ncclCommSplit(parents[g], /*color=*/0, /*key=*/ranks[g], &children[g], &config);
    if (split != ncclSuccess && split != ncclInProgress) rc = split;
  }
  ncclResult_t end = ncclGroupEnd();
  if (rc == ncclSuccess && end != ncclSuccess && end != ncclInProgress) rc = end;
  if (rc != ncclSuccess) return Status(Code::kNccl, NcclError("ncclCommSplit", rc, parents.front()));
  Status ready = PollReady(parents, deadline, "communicator split");
  if (!ready.ok()) return ready;
  // NCCL's helper thread publishes each child when its split is done.
  for (ncclComm_t& child : children) child = std::atomic_ref<ncclComm_t>(child).load(std::memory_order_acquire);
  for (size_t g = 0; g < children.size(); ++g) {
    ncclResult_t state = ncclInternalError;
    if (children[g] == nullptr || ncclCommGetAsyncError(children[g], &state) != ncclSuccess || state != ncclSuccess) {
      std::erase(children, nullptr);
      AbortAll(children);
      return Status(Code::kNccl, NcclError("ncclCommSplit gave no usable communicator", state, parents[g]));
    }
  }
  return children;
}

}  // namespace

Communicators::Communicators(Communicators&& other) noexcept { *this = std::move(other); }

Communicators& Communicators::operator=(Communicators&& other) noexcept {
  if (this != &other) {
    Destroy();
    comms_ = std::move(other.comms_);
    parents_ = std::move(other.parents_);
    timings_ = other.timings_;
    ranks_ = std::move(other.ranks_);
    devices_ = std::move(other.devices_);
    world_size_ = other.world_size_;
    blocking_ = other.blocking_;
    other.comms_.clear();
    other.parents_.clear();
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
  if (comms_.empty() && parents_.empty()) return;
  log::Warn("aborting communicators", {{"count", std::to_string(comms_.size() + parents_.size())}});
  AbortAll(comms_);
  comms_.clear();
  AbortAll(parents_);
  parents_.clear();
}

Status Communicators::Destroy(milliseconds timeout) {
  // The split communicators before the parents whose resources they share.
  Status status = FinalizeAndDestroy(comms_, timeout);
  if (status.ok()) status = FinalizeAndDestroy(parents_, timeout);
  if (!status.ok()) Abort();
  return status;
}

Result<Communicators> InitCommunicators(const JobEnv& env, const ncclUniqueId& id,
                                        const CommOptions& options, Deadline deadline) {
  auto blocking_mode = ResolveBlocking(options);
  if (!blocking_mode.ok()) return blocking_mode.status();
  const bool blocking = *blocking_mode;
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

  Communicators out;
  out.world_size_ = env.world_size;
  out.blocking_ = blocking;
  out.devices_ = devices;
  out.comms_.assign(local, nullptr);
  for (int g = 0; g < local; ++g) out.ranks_.push_back(env.first_rank() + g);

  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;  // so we can watch the deadline and abort instead of hanging in init
  if (blocking) config.splitShare = 1;  // the blocking split reuses this init's resources
  const auto init_start = Clock::now();
  int previous_device = 0;
  cudaGetDevice(&previous_device);
  ncclResult_t rc = ncclGroupStart();
  for (int g = 0; g < local && rc == ncclSuccess; ++g) {
    if (cudaSetDevice(devices[g]) != cudaSuccess) break;
    ncclResult_t init = ncclCommInitRankConfig(&out.comms_[g], env.world_size, id, out.ranks_[g], &config);
    if (init != ncclSuccess && init != ncclInProgress) rc = init;
  }
  ncclResult_t end = ncclGroupEnd();
  cudaSetDevice(previous_device);
  if (rc == ncclSuccess && end != ncclInProgress) rc = end;

  std::erase(out.comms_, nullptr);  // a failed init leaves no handle to poll or abort
  if (rc != ncclSuccess || static_cast<int>(out.comms_.size()) != local) {
    std::string message = NcclError("ncclCommInitRankConfig", rc == ncclSuccess ? ncclInternalError : rc,
                                    out.comms_.empty() ? nullptr : out.comms_.front());
    out.Abort();
    return Status(Code::kNccl, message);
  }

  Status ready = PollReady(out.comms_, deadline, "communicator init");
  out.timings_.init_ms = MillisSince(init_start);
  if (ready.ok() && blocking) {
    const auto split_start = Clock::now();
    auto children = SplitBlocking(out.comms_, out.ranks_, deadline);
    out.timings_.split_ms = MillisSince(split_start);
    if (children.ok()) {
      out.parents_ = std::move(out.comms_);
      out.comms_ = std::move(*children);
    } else {
      ready = children.status();
    }
  }
  if (!ready.ok()) {
    std::string ranks = std::to_string(out.ranks_.front()) +
                        (local > 1 ? ".." + std::to_string(out.ranks_.back()) : "");
    out.Abort();
    std::string hint = ready.code() == Code::kDeadlineExceeded
                           ? "; some of the " + std::to_string(env.world_size) +
                                 " ranks never joined (a pod that did not start, a wrong "
                                 "NCCL_SOCKET_IFNAME, or a firewall between pods)"
                           : "";
    return Status(ready.code(), "rank(s) " + ranks + ": " + ready.message() + hint +
                                    "; all communicators of this process were aborted");
  }
  char init_ms[32], split_ms[32];
  std::snprintf(init_ms, sizeof init_ms, "%.1f", out.timings_.init_ms);
  std::snprintf(split_ms, sizeof split_ms, "%.1f", out.timings_.split_ms);
  log::Info("communicators ready", {{"ranks", std::to_string(out.ranks_.front()) + ".." +
                                                  std::to_string(out.ranks_.back())},
                                    {"world_size", std::to_string(env.world_size)},
                                    {"blocking", blocking ? "true" : "false"},
                                    {"init_ms", init_ms},
                                    {"split_ms", split_ms}});
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
  auto id = ObtainUniqueId(*env, deadline);
  if (!id.ok()) return id.status();
  return InitCommunicators(*env, *id, resolved, deadline);
}

}  // namespace nccl_k8s

// Non-blocking communicator init with a deadline, several GPUs per process through one group.
#include <cuda_runtime_api.h>

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
  auto pause = std::chrono::microseconds(20);
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
    if (Clock::now() >= deadline) {
      return Status(Code::kDeadlineExceeded, what + " did not finish before the deadline");
    }
    // Short at first so a fast init is not slowed down, then backs off to 1 ms.
    std::this_thread::sleep_for(pause);
    pause = std::min<std::chrono::microseconds>(pause * 2, milliseconds(1));
  }
}

void AbortAll(std::vector<ncclComm_t>& comms) {
  for (ncclComm_t& comm : comms) {
    if (comm != nullptr) ncclCommAbort(comm);
    comm = nullptr;
  }
}

}  // namespace

Communicators::Communicators(Communicators&& other) noexcept { *this = std::move(other); }

Communicators& Communicators::operator=(Communicators&& other) noexcept {
  if (this != &other) {
    Destroy();
    comms_ = std::move(other.comms_);
    ranks_ = std::move(other.ranks_);
    devices_ = std::move(other.devices_);
    world_size_ = other.world_size_;
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
  comms_.clear();
}

Status Communicators::Destroy(milliseconds timeout) {
  if (comms_.empty()) return Status::Ok();
  // Finalize flushes outstanding operations; grouped so several local ranks finish together.
  ncclGroupStart();
  for (ncclComm_t comm : comms_) ncclCommFinalize(comm);
  ncclResult_t rc = ncclGroupEnd();
  Status status;
  if (rc != ncclSuccess && rc != ncclInProgress) {
    status = Status(Code::kNccl, NcclError("ncclCommFinalize", rc, comms_.front()));
  } else {
    status = PollReady(comms_, Clock::now() + timeout, "ncclCommFinalize");
  }
  if (!status.ok()) {
    Abort();
    return status;
  }
  for (ncclComm_t comm : comms_) ncclCommDestroy(comm);
  comms_.clear();
  return Status::Ok();
}

Result<Communicators> InitCommunicators(const JobEnv& env, const ncclUniqueId& id,
                                        const CommOptions& options, Deadline deadline) {
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
  out.devices_ = devices;
  out.comms_.assign(local, nullptr);
  for (int g = 0; g < local; ++g) out.ranks_.push_back(env.first_rank() + g);

  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;  // so we can watch the deadline and abort instead of hanging in init
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
  log::Info("communicators ready", {{"ranks", std::to_string(out.ranks_.front()) + ".." +
                                                  std::to_string(out.ranks_.back())},
                                    {"world_size", std::to_string(env.world_size)}});
  return out;
}

Result<Communicators> Init(const CommOptions& options) {
  auto env = ReadJobEnv();
  if (!env.ok()) return env.status();
  auto timeout = options.timeout.count() > 0 ? options.timeout
                                             : std::chrono::duration_cast<milliseconds>(env->init_timeout);
  Deadline deadline = Clock::now() + timeout;
  auto id = ObtainUniqueId(*env, deadline);
  if (!id.ok()) return id.status();
  return InitCommunicators(*env, *id, options, deadline);
}

}  // namespace nccl_k8s

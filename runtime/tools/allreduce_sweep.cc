#include "allreduce_sweep.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <thread>

namespace nccl_k8s {
namespace {

Status CudaError(const char* what, cudaError_t err) {
  return Status(Code::kCuda, std::string(what) + ": " + cudaGetErrorString(err));
}

#define RETURN_IF_CUDA(call)                                 \
  do {                                                       \
    cudaError_t err_ = (call);                               \
    if (err_ != cudaSuccess) return CudaError(#call, err_);  \
  } while (0)

// Value of element i on rank r: small integers, so sums over ranks are exact in float.
float Pattern(int rank, size_t i) { return static_cast<float>(rank + 1 + static_cast<int>(i % 7)); }
float Expected(int world, size_t i) {
  return static_cast<float>(world * (world + 1) / 2 + world * static_cast<int>(i % 7));
}

// Non-blocking communicators may answer ncclInProgress; wait for them before going on.
Status Settle(const LocalRanks& local, ncclResult_t rc, const char* what) {
  if (rc == ncclSuccess) return Status::Ok();
  if (rc != ncclInProgress) {
    return Status(Code::kNccl, std::string(what) + ": " + ncclGetErrorString(rc) + " (" +
                                   ncclGetLastError(local.comms.front()) + ")");
  }
  for (ncclComm_t comm : local.comms) {
    ncclResult_t state = ncclInProgress;
    while (state == ncclInProgress) {
      ncclResult_t q = ncclCommGetAsyncError(comm, &state);
      if (q != ncclSuccess) state = q;
      if (state == ncclInProgress) std::this_thread::yield();
    }
    if (state != ncclSuccess) {
      return Status(Code::kNccl, std::string(what) + ": " + ncclGetErrorString(state) + " (" +
                                     ncclGetLastError(comm) + ")");
    }
  }
  return Status::Ok();
}

Status LaunchOnce(const LocalRanks& local, SweepBuffers& b, size_t count) {
  ncclGroupStart();
  for (size_t g = 0; g < local.comms.size(); ++g) {
    ncclResult_t rc = ncclAllReduce(b.send[g], b.recv[g], count, ncclFloat, ncclSum, local.comms[g],
                                    static_cast<cudaStream_t>(b.streams[g]));
    if (rc != ncclSuccess && rc != ncclInProgress) {
      ncclGroupEnd();
      return Settle(local, rc, "ncclAllReduce");
    }
  }
  return Settle(local, ncclGroupEnd(), "ncclGroupEnd(ncclAllReduce)");
}

}  // namespace

SweepBuffers::SweepBuffers(SweepBuffers&& o) noexcept { *this = std::move(o); }
SweepBuffers& SweepBuffers::operator=(SweepBuffers&& o) noexcept {
  if (this != &o) {
    Free();
    send = std::move(o.send);
    recv = std::move(o.recv);
    streams = std::move(o.streams);
    devices = std::move(o.devices);
    o.send.clear(); o.recv.clear(); o.streams.clear(); o.devices.clear();
  }
  return *this;
}
SweepBuffers::~SweepBuffers() { Free(); }

void SweepBuffers::Free() {
  for (size_t g = 0; g < devices.size(); ++g) {
    cudaSetDevice(devices[g]);
    if (g < send.size()) cudaFree(send[g]);
    if (g < recv.size()) cudaFree(recv[g]);
    if (g < streams.size()) cudaStreamDestroy(static_cast<cudaStream_t>(streams[g]));
  }
  send.clear(); recv.clear(); streams.clear(); devices.clear();
}

Result<SweepBuffers> SweepBuffers::Allocate(const LocalRanks& local, size_t max_bytes) {
  SweepBuffers b;
  size_t count = max_bytes / sizeof(float);
  std::vector<float> host(count);
  for (size_t g = 0; g < local.devices.size(); ++g) {
    b.devices.push_back(local.devices[g]);
    RETURN_IF_CUDA(cudaSetDevice(local.devices[g]));
    float* send = nullptr;
    float* recv = nullptr;
    cudaStream_t stream = nullptr;
    RETURN_IF_CUDA(cudaMalloc(&send, max_bytes));
    b.send.push_back(send);
    RETURN_IF_CUDA(cudaMalloc(&recv, max_bytes));
    b.recv.push_back(recv);
    RETURN_IF_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    b.streams.push_back(stream);
    for (size_t i = 0; i < count; ++i) host[i] = Pattern(local.ranks[g], i);
    RETURN_IF_CUDA(cudaMemcpy(send, host.data(), max_bytes, cudaMemcpyHostToDevice));
  }
  return b;
}

Result<SweepRow> RunAllReduce(const LocalRanks& local, SweepBuffers& b, size_t bytes,
                              const SweepConfig& config) {
  size_t count = bytes / sizeof(float);
  const size_t n = local.comms.size();
  for (size_t g = 0; g < n; ++g) {  // poison: an element nobody wrote shows up as wrong
    RETURN_IF_CUDA(cudaSetDevice(b.devices[g]));
    RETURN_IF_CUDA(cudaMemset(b.recv[g], 0xff, bytes));
  }
  for (int i = 0; i < config.warmup_iters; ++i) {
    Status s = LaunchOnce(local, b, count);
    if (!s.ok()) return s;
  }
  std::vector<cudaEvent_t> start(n), stop(n);
  for (size_t g = 0; g < n; ++g) {
    RETURN_IF_CUDA(cudaSetDevice(b.devices[g]));
    RETURN_IF_CUDA(cudaStreamSynchronize(static_cast<cudaStream_t>(b.streams[g])));
    RETURN_IF_CUDA(cudaEventCreate(&start[g]));
    RETURN_IF_CUDA(cudaEventCreate(&stop[g]));
    RETURN_IF_CUDA(cudaEventRecord(start[g], static_cast<cudaStream_t>(b.streams[g])));
  }
  for (int i = 0; i < config.iters; ++i) {
    Status s = LaunchOnce(local, b, count);
    if (!s.ok()) return s;
  }
  float worst_ms = 0;
  for (size_t g = 0; g < n; ++g) {
    RETURN_IF_CUDA(cudaSetDevice(b.devices[g]));
    RETURN_IF_CUDA(cudaEventRecord(stop[g], static_cast<cudaStream_t>(b.streams[g])));
    RETURN_IF_CUDA(cudaEventSynchronize(stop[g]));
    float ms = 0;
    RETURN_IF_CUDA(cudaEventElapsedTime(&ms, start[g], stop[g]));
    worst_ms = std::max(worst_ms, ms);
    cudaEventDestroy(start[g]);
    cudaEventDestroy(stop[g]);
  }
  SweepRow row;
  row.bytes = bytes;
  row.time_us = 1000.0 * worst_ms / config.iters;
  row.algbw_gbs = static_cast<double>(bytes) / (row.time_us * 1e3);
  int w = local.world_size;
  row.busbw_gbs = row.algbw_gbs * 2.0 * (w - 1) / w;
  if (config.check) {
    row.wrong = 0;
    std::vector<float> host(count);
    for (size_t g = 0; g < n; ++g) {
      RETURN_IF_CUDA(cudaSetDevice(b.devices[g]));
      RETURN_IF_CUDA(cudaMemcpy(host.data(), b.recv[g], bytes, cudaMemcpyDeviceToHost));
      for (size_t i = 0; i < count; ++i) row.wrong += host[i] != Expected(w, i);
    }
  }
  return row;
}

std::vector<size_t> SweepSizes(const SweepConfig& config) {
  std::vector<size_t> sizes;
  for (size_t s = std::max<size_t>(config.min_bytes, sizeof(float)); s <= config.max_bytes; s *= 2) sizes.push_back(s);
  return sizes;
}

std::string TableHeader() {
  return "#       size         count    type   redop      time     algbw     busbw  #wrong\n"
         "#        (B)    (elements)                      (us)    (GB/s)    (GB/s)\n";
}

std::string TableRow(const SweepRow& row) {
  char line[160];
  std::snprintf(line, sizeof line, "%12zu  %12zu   float     sum  %8.1f  %8.2f  %8.2f  %6s\n", row.bytes,
                row.bytes / sizeof(float), row.time_us, row.algbw_gbs, row.busbw_gbs,
                row.wrong < 0 ? "n/a" : std::to_string(row.wrong).c_str());
  return line;
}

}  // namespace nccl_k8s

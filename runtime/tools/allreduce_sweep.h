// The all-reduce size sweep shared by the nccl-allreduce tool and bench/allreduce: fills buffers
// from the host (no device code, so no nvcc), times each size with CUDA events, checks every
// element of the result on the host, and prints a table in the shape of nccl-tests'
// all_reduce_perf (busbw = algbw * 2(n-1)/n).
#pragma once

#include <nccl.h>

#include <cstddef>
#include <string>
#include <vector>

#include "nccl_k8s/status.h"

namespace nccl_k8s {

struct LocalRanks {
  std::vector<ncclComm_t> comms;
  std::vector<int> devices;
  std::vector<int> ranks;
  int world_size = 0;
};

struct SweepConfig {
  size_t min_bytes = 1 << 20;
  size_t max_bytes = 1 << 30;
  int warmup_iters = 5;
  int iters = 20;
  bool check = true;
};

struct SweepRow {
  size_t bytes = 0;
  double time_us = 0;
  double algbw_gbs = 0;
  double busbw_gbs = 0;
  long long wrong = -1;  // -1: not checked
};

// Device buffers for max_bytes on every local device, filled once with rank-dependent values.
class SweepBuffers {
 public:
  static Result<SweepBuffers> Allocate(const LocalRanks& local, size_t max_bytes);
  SweepBuffers() = default;
  SweepBuffers(SweepBuffers&&) noexcept;
  SweepBuffers& operator=(SweepBuffers&&) noexcept;
  ~SweepBuffers();

  std::vector<float*> send, recv;
  std::vector<void*> streams;  // cudaStream_t
  std::vector<int> devices;
 private:
  void Free();
};

// One size: warm-up, timed iterations, optional check. Local ranks are driven from this thread
// inside one NCCL group.
Result<SweepRow> RunAllReduce(const LocalRanks& local, SweepBuffers& buffers, size_t bytes,
                              const SweepConfig& config);

std::vector<size_t> SweepSizes(const SweepConfig& config);  // powers of two, min..max
std::string TableHeader();
std::string TableRow(const SweepRow& row);

}  // namespace nccl_k8s

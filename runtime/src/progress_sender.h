// The datagram of a progress report (pure) and the socket that sends it (one per process, opened
// at the first report). docs/contracts.md, "Progress".
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "nccl_k8s/job_env.h"
#include "nccl_k8s/progress.h"

namespace nccl_k8s {

// {"rank","step","total"?,"metrics"?,"done"?} into `out` (at least contract::kProgressReportMaxBytes);
// returns its length. Metrics past contract::kProgressMaxMetrics, with a bad name or a value
// that is not finite are left out, and so are those that would make it longer than the limit.
size_t FormatProgressReport(char* out, int64_t rank, int64_t step, std::optional<int64_t> total,
                            std::span<const Metric> metrics, bool done);

// The rank a process reports: NCCLJOB_INDEX * ranks per pod + LOCAL_RANK when that is a local rank.
int64_t ReportingRank(const JobEnv& env, const EnvLookup& lookup);

class ProgressSender {
 public:
  // Reads the job env from `lookup`; without it (or without a socket) every call is a no-op.
  explicit ProgressSender(const EnvLookup& lookup);
  ~ProgressSender();
  ProgressSender(const ProgressSender&) = delete;
  ProgressSender& operator=(const ProgressSender&) = delete;

  bool enabled() const { return fd_ >= 0; }

  // Thread-safe, non-blocking; every error is dropped.
  void Report(int64_t step, std::optional<int64_t> total, std::span<const Metric> metrics) noexcept;
  void Done() noexcept;

 private:
  void Send(int64_t step, std::optional<int64_t> total, std::span<const Metric> metrics, bool done) noexcept;

  int fd_ = -1;  // UDP, connected to the sidecar
  int64_t rank_ = 0;
  std::atomic<int64_t> last_step_{0};
  std::atomic<int64_t> last_total_{-1};  // -1: unknown
};

}  // namespace nccl_k8s

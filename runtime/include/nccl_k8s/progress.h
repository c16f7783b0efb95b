// Training progress, reported to the pod's sidecar (docs/contracts.md, "Progress"):
//
//   for (int64_t step = 1; step <= steps; ++step) {
//     Train(step);
//     nccl_k8s::ReportProgress(step, steps, {{"loss", loss}, {"tokens_per_s", rate}});
//   }
//   nccl_k8s::ReportProgressDone();
//
// Each call sends one UDP datagram to the sidecar on 127.0.0.1 (the port of NCCLJOB_SIDECAR_URL)
// and returns: it never blocks, never throws, never fails. Without the NcclJob env, or with no
// sidecar listening, it does nothing. The sidecar shows each rank's last report (GET
// /v1/progress), pod 0's puts the newest on the NcclJob's status, and with
// failurePolicy.stallTimeoutSeconds a rank that reported and then goes silent that long ends the
// attempt as Stalled: report at least that often (the same step again counts), and call
// ReportProgressDone() when the rank stops stepping on purpose (evaluation, saving, the end).
//
// The rank reported is NCCLJOB_INDEX * max(NCCLJOB_GPUS_PER_POD, 1) + LOCAL_RANK (torchrun's; 0
// when unset): one report per process.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string_view>

namespace nccl_k8s {

struct Metric {
  std::string_view name;  // 1 to 32 bytes
  double value;           // not NaN or infinite
};

// `total`: the steps planned, when known. At most 8 metrics are sent (the rest, and any that
// break the rules above, are left out), and fewer when the datagram would pass 1024 bytes.
void ReportProgress(int64_t step, std::optional<int64_t> total = std::nullopt,
                    std::span<const Metric> metrics = {}) noexcept;
void ReportProgress(int64_t step, std::optional<int64_t> total, std::initializer_list<Metric> metrics) noexcept;

// The last step reported again, marked done: the sidecar no longer watches this rank for a stall.
void ReportProgressDone() noexcept;

}  // namespace nccl_k8s

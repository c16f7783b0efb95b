// Pod 0's sidecar (Kubernetes mode) puts the newest report of its ranks (ProgressBoard::Newest)
// on its own pod as contract::kAnnotationProgress, where the operator reads it into the job's
// status: at most once every contract::kProgressAnnotationSeconds and only when it changed, on
// its own thread, so a slow or failing API server never holds up the id API. A failed patch is
// logged once per streak of failures and tried again at the next interval.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "config.h"
#include "kube/client.h"
#include "progress_board.h"

namespace sidecar {

class ProgressAnnotator {
 public:
  ProgressAnnotator(std::shared_ptr<kube::Client> client, const Config& config, const ProgressBoard& board);
  ProgressAnnotator(const ProgressAnnotator&) = delete;
  ProgressAnnotator& operator=(const ProgressAnnotator&) = delete;

  void Start();
  void Stop();  // also when destroyed

  uint64_t patches() const { return patches_.load(std::memory_order_relaxed); }  // that the API server took

 private:
  void Run(std::stop_token stop);
  bool Patch(const std::string& value, bool* failing);

  std::shared_ptr<kube::Client> client_;
  const Config& config_;
  const ProgressBoard& board_;
  std::atomic<uint64_t> patches_{0};
  std::jthread thread_;
};

// The annotation's value: {"attempt", "step", "total"?, "metrics"?, "time"} (pure).
std::string ProgressAnnotationValue(const RankProgress& newest, int64_t attempt);

}  // namespace sidecar

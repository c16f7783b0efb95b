// --stall-timeout-seconds: looks at the board on its own thread (stall_check.h says how often),
// and at another source of reasons when given (pod 0: NCCL's health report, ras_poller.h), and
// hands the first stall's message to `on_stall`, which ends the process (main.cc: the
// termination message, then exit contract::kSidecarExitStalled). Runs only while the sidecar
// serves an attempt: main() starts it with the API and stops it first on SIGTERM.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <thread>

#include "progress_board.h"

namespace sidecar {

class StallWatch {
 public:
  using OnStall = std::function<void(const std::string& message)>;
  // A reason found elsewhere, asked at each look; must not block.
  using OtherReason = std::function<std::optional<std::string>(std::chrono::steady_clock::time_point now)>;

  StallWatch(const ProgressBoard& board, std::chrono::seconds timeout, OnStall on_stall, OtherReason other = {});
  StallWatch(const StallWatch&) = delete;
  StallWatch& operator=(const StallWatch&) = delete;

  void Start();
  void Stop();  // also when destroyed; once it returns, on_stall is not called

 private:
  void Run(std::stop_token stop);

  const ProgressBoard& board_;
  const std::chrono::seconds timeout_;
  OnStall on_stall_;
  OtherReason other_;
  std::jthread thread_;
};

// Writes `message` to the termination message file (--termination-log); "" or why not.
std::string WriteTerminationMessage(const std::string& path, const std::string& message);

}  // namespace sidecar

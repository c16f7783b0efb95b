// --stall-timeout-seconds: looks at the board on its own thread (stall_check.h says how often)
// and hands the first stall's message to `on_stall`, which ends the process (main.cc: the
// termination message, then exit contract::kSidecarExitStalled). Runs only while the sidecar
// serves an attempt: main() starts it with the API and stops it first on SIGTERM.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include "progress_board.h"

namespace sidecar {

class StallWatch {
 public:
  using OnStall = std::function<void(const std::string& message)>;

  StallWatch(const ProgressBoard& board, std::chrono::seconds timeout, OnStall on_stall);
  StallWatch(const StallWatch&) = delete;
  StallWatch& operator=(const StallWatch&) = delete;

  void Start();
  void Stop();  // also when destroyed; once it returns, on_stall is not called

 private:
  void Run(std::stop_token stop);

  const ProgressBoard& board_;
  const std::chrono::seconds timeout_;
  OnStall on_stall_;
  std::jthread thread_;
};

// Writes `message` to the termination message file (--termination-log); "" or why not.
std::string WriteTerminationMessage(const std::string& path, const std::string& message);

}  // namespace sidecar

#include "exit_watchdog.h"

#include <unistd.h>

namespace nccl_k8s {

ExitWatchdog::ExitWatchdog(Deadline deadline, std::string message, log::Fields fields)
    : message_(std::move(message)), fields_(std::move(fields)), thread_([this, deadline] { Watch(deadline); }) {}

void ExitWatchdog::Watch(Deadline deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  // wait_until on the steady clock: a wall-clock jump neither fires nor delays it.
  if (wake_.wait_until(lock, deadline, [this] { return disarmed_; })) return;
  const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - armed_);
  fields_.emplace_back("waited_ms", std::to_string(waited.count()));
  fields_.emplace_back("exit_code", std::to_string(kExitCode));
  log::LastWords(message_, fields_);  // even at NCCL_K8S_LOG_LEVEL=off: it says why the trainer ended
  _exit(kExitCode);
}

void ExitWatchdog::Disarm() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    disarmed_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace nccl_k8s

#include "stall_watch.h"

#include <cerrno>
#include <cstring>
#include <fstream>

#include "kube/backoff.h"
#include "stall_check.h"

namespace sidecar {

StallWatch::StallWatch(const ProgressBoard& board, std::chrono::seconds timeout, OnStall on_stall)
    : board_(board), timeout_(timeout), on_stall_(std::move(on_stall)) {}

void StallWatch::Start() {
  thread_ = std::jthread([this](std::stop_token stop) { Run(stop); });
}

void StallWatch::Stop() { thread_ = std::jthread(); }  // the old thread is asked to stop and joined

void StallWatch::Run(std::stop_token stop) {
  const std::chrono::milliseconds interval = StallCheckInterval(timeout_);
  while (kube::SleepFor(interval, stop)) {
    std::vector<Stall> stalls = FindStalls(board_.Ranks(), std::chrono::steady_clock::now(), timeout_);
    if (stalls.empty()) continue;
    on_stall_(StallMessage(stalls));
    return;
  }
}

std::string WriteTerminationMessage(const std::string& path, const std::string& message) {
  std::ofstream out(path, std::ios::trunc);
  if (out) out << message;
  if (out) out.flush();
  if (!out) return "cannot write " + path + ": " + std::strerror(errno);
  return "";
}

}  // namespace sidecar

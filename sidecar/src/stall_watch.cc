#include "stall_watch.h"

#include <cerrno>
#include <cstring>
#include <fstream>

#include "kube/backoff.h"
#include "stall_check.h"

namespace sidecar {

StallWatch::StallWatch(const ProgressBoard& board, std::chrono::seconds timeout, OnStall on_stall,
                       OtherReason other)
    : board_(board), timeout_(timeout), on_stall_(std::move(on_stall)), other_(std::move(other)) {}

void StallWatch::Start() {
  thread_ = std::jthread([this](std::stop_token stop) { Run(stop); });
}

void StallWatch::Stop() { thread_ = std::jthread(); }  // the old thread is asked to stop and joined

void StallWatch::Run(std::stop_token stop) {
  const std::chrono::milliseconds interval = StallCheckInterval(timeout_);
  while (kube::SleepFor(interval, stop)) {
    const auto now = std::chrono::steady_clock::now();
    const std::vector<RankProgress> ranks = board_.Ranks();
    std::vector<Stall> stalls = FindStalls(ranks, now, timeout_);
    std::optional<std::string> reason;
    if (!stalls.empty()) {
      reason = StallMessage(stalls);
    } else if (other_ && AnyRankWatched(ranks)) {
      reason = other_(now);
    }
    if (!reason) continue;
    on_stall_(*reason);
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

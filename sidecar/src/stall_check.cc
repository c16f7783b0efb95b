#include "stall_check.h"

#include <algorithm>

#include "logging/log.h"

namespace sidecar {

std::vector<Stall> FindStalls(const std::vector<RankProgress>& ranks, std::chrono::steady_clock::time_point now,
                              std::chrono::seconds timeout) {
  std::vector<Stall> stalls;
  for (const RankProgress& progress : ranks) {
    if (progress.report.done) continue;
    const auto silent = now - progress.received.steady;
    if (silent < timeout) continue;
    stalls.push_back({progress.report.rank, progress.report.step,
                      std::chrono::duration_cast<std::chrono::seconds>(silent), progress.received.wall});
  }
  return stalls;
}

bool AnyRankWatched(const std::vector<RankProgress>& ranks) {
  for (const RankProgress& progress : ranks) {
    if (!progress.report.done) return true;
  }
  return false;
}

std::string StallMessage(const std::vector<Stall>& stalls) {
  // Room kept for the count of what did not fit.
  constexpr size_t kTailRoom = 48;
  std::string message;
  size_t written = 0;
  for (const Stall& stall : stalls) {
    std::string part = "rank " + std::to_string(stall.rank) + " sent no progress report for " +
                       std::to_string(stall.silent.count()) + "s (last step " + std::to_string(stall.last_step) +
                       " at " + logging::FormatRfc3339(stall.last_report) + ")";
    const std::string separator = message.empty() ? "" : "; ";
    if (message.size() + separator.size() + part.size() + kTailRoom > kTerminationMessageMaxBytes) break;
    message += separator + part;
    ++written;
  }
  if (written < stalls.size()) message += "; and " + std::to_string(stalls.size() - written) + " more ranks";
  return message;
}

std::chrono::milliseconds StallCheckInterval(std::chrono::seconds timeout) {
  return std::min<std::chrono::milliseconds>(std::chrono::seconds(1),
                                             std::chrono::duration_cast<std::chrono::milliseconds>(timeout) / 4);
}

}  // namespace sidecar

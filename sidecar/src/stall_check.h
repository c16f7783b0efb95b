// Which ranks are stalled (--stall-timeout-seconds): a rank that reported at least once, has not
// said it is done, and has sent nothing for the timeout. Reports are heartbeats: the same step
// again counts as alive. Pure; stall_watch.h runs it on a timer.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "progress_board.h"

namespace sidecar {

// The kubelet keeps at most this much of a container's termination message.
inline constexpr size_t kTerminationMessageMaxBytes = 4096;

struct Stall {
  int64_t rank = 0;
  int64_t last_step = 0;
  std::chrono::seconds silent{0};  // since its last report, whole seconds
  std::chrono::system_clock::time_point last_report;
};

std::vector<Stall> FindStalls(const std::vector<RankProgress>& ranks, std::chrono::steady_clock::time_point now,
                              std::chrono::seconds timeout);

// Whether any rank is watched: it reported and has not said it is done. Another source's reason
// (NCCL's health report) counts only then, so a trainer that never reports is never stalled and
// one that finished is not called stalled by peers that exit after it.
bool AnyRankWatched(const std::vector<RankProgress>& ranks);

// "rank 3 sent no progress report for 62s (last step 1234 at 2026-12-04T20:00:00.000Z)", several
// joined by "; ", at most kTerminationMessageMaxBytes (ranks that do not fit are counted at the end).
std::string StallMessage(const std::vector<Stall>& stalls);

// How often the watch looks: every second, or a quarter of the timeout when that is shorter.
std::chrono::milliseconds StallCheckInterval(std::chrono::seconds timeout);

}  // namespace sidecar

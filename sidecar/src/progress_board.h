// The last progress report of each rank of this pod, as the sidecar received it: what
// GET /v1/progress shows, what the stall watch reads and what pod 0 puts on its pod. Pure (the
// caller passes the time of receipt) and thread-safe: the UDP listener writes, the API server,
// the stall watch and the annotator read.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "progress_report.h"

namespace sidecar {

struct ReceivedAt {
  std::chrono::steady_clock::time_point steady;  // for the stall watch
  std::chrono::system_clock::time_point wall;    // for people
};

struct RankProgress {
  ProgressReport report;
  ReceivedAt received;
};

class ProgressBoard {
 public:
  // Far more than a pod's ranks (one per GPU); keeps a sender of made-up ranks from growing it.
  static constexpr size_t kMaxRanks = 256;

  // Replaces the rank's last report; false (nothing kept) for a new rank past kMaxRanks.
  bool Record(ProgressReport report, ReceivedAt at);

  std::vector<RankProgress> Ranks() const;  // by rank
  // The report furthest along: the greatest step; of equal steps the last received.
  std::optional<RankProgress> Newest() const;

 private:
  mutable std::mutex mu_;
  std::map<int64_t, RankProgress> ranks_;  // guarded by mu_
};

// {"step", "total" (when known), "metrics" (when any), "time" (RFC 3339, when received)}: the
// part of a report GET /v1/progress and the pod's annotation both show.
nlohmann::json ProgressJson(const RankProgress& progress);

// GET /v1/progress's "ranks": [{"rank", "step", "total" (null: unknown), "metrics", "time", "done"}].
nlohmann::json RanksJson(const std::vector<RankProgress>& ranks);

}  // namespace sidecar

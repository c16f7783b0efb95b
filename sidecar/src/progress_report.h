// One rank's progress report as its trainer sends it: a UDP datagram of JSON (docs/contracts.md,
// "Progress"; contract/names.h). Parsing is pure; what does not fit the contract is refused whole,
// so the board only ever holds reports a trainer meant.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace sidecar {

struct ProgressReport {
  int64_t rank = 0;
  int64_t step = 0;
  std::optional<int64_t> total;                          // unknown when absent
  std::vector<std::pair<std::string, double>> metrics;  // at most contract::kProgressMaxMetrics
  bool done = false;  // the rank stopped stepping on purpose: no longer watched for a stall
};

struct ReportRefused {
  std::string reason;  // what was wrong, for the log
};

// `datagram` as received; a rank must be below `world_size` (the job's NCCL ranks).
std::variant<ProgressReport, ReportRefused> ParseProgressReport(std::string_view datagram, int world_size);

// {"name": value, ...}.
nlohmann::json MetricsJson(const std::vector<std::pair<std::string, double>>& metrics);

}  // namespace sidecar

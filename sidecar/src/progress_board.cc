#include "progress_board.h"

#include "contract/names.h"
#include "logging/log.h"

namespace sidecar {

bool ProgressBoard::Record(ProgressReport report, ReceivedAt at) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = ranks_.find(report.rank);
  if (it == ranks_.end()) {
    if (ranks_.size() >= kMaxRanks) return false;
    const int64_t rank = report.rank;
    ranks_.emplace(rank, RankProgress{std::move(report), at});
    return true;
  }
  it->second = RankProgress{std::move(report), at};
  return true;
}

std::vector<RankProgress> ProgressBoard::Ranks() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<RankProgress> ranks;
  ranks.reserve(ranks_.size());
  for (const auto& [rank, progress] : ranks_) ranks.push_back(progress);
  return ranks;
}

std::optional<RankProgress> ProgressBoard::Newest() const {
  std::lock_guard<std::mutex> lock(mu_);
  const RankProgress* newest = nullptr;
  for (const auto& [rank, progress] : ranks_) {
    if (!newest || progress.report.step > newest->report.step ||
        (progress.report.step == newest->report.step && progress.received.steady > newest->received.steady)) {
      newest = &progress;
    }
  }
  if (!newest) return std::nullopt;
  return *newest;
}

nlohmann::json ProgressJson(const RankProgress& progress) {
  nlohmann::json json = {{contract::kFieldStep, progress.report.step},
                         {contract::kFieldTime, logging::FormatRfc3339(progress.received.wall)}};
  if (progress.report.total) json[contract::kFieldTotal] = *progress.report.total;
  if (!progress.report.metrics.empty()) json[contract::kFieldMetrics] = MetricsJson(progress.report.metrics);
  return json;
}

nlohmann::json RanksJson(const std::vector<RankProgress>& ranks) {
  nlohmann::json list = nlohmann::json::array();
  for (const RankProgress& progress : ranks) {
    nlohmann::json entry = ProgressJson(progress);
    entry[contract::kFieldRank] = progress.report.rank;
    entry[contract::kFieldDone] = progress.report.done;
    if (!progress.report.total) entry[contract::kFieldTotal] = nullptr;
    if (progress.report.metrics.empty()) entry[contract::kFieldMetrics] = nlohmann::json::object();
    list.push_back(std::move(entry));
  }
  return list;
}

}  // namespace sidecar

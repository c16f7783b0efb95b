#include "progress_report.h"

#include "contract/names.h"

namespace sidecar {
namespace {

std::optional<int64_t> NonNegativeInteger(const nlohmann::json& value) {
  if (!value.is_number_integer()) return std::nullopt;
  if (value.is_number_unsigned()) {
    uint64_t v = value.get<uint64_t>();
    if (v > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
    return static_cast<int64_t>(v);
  }
  int64_t v = value.get<int64_t>();
  if (v < 0) return std::nullopt;
  return v;
}

}  // namespace

std::variant<ProgressReport, ReportRefused> ParseProgressReport(std::string_view datagram, int world_size) {
  if (datagram.size() > contract::kProgressReportMaxBytes) {
    return ReportRefused{"over " + std::to_string(contract::kProgressReportMaxBytes) + " bytes"};
  }
  nlohmann::json doc = nlohmann::json::parse(datagram, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object()) return ReportRefused{"not a JSON object"};
  ProgressReport report;
  auto rank = doc.find(contract::kFieldRank);
  std::optional<int64_t> rank_value = rank == doc.end() ? std::nullopt : NonNegativeInteger(*rank);
  if (!rank_value || *rank_value >= world_size) {
    return ReportRefused{"\"rank\" is not a rank of the job (0 to " + std::to_string(world_size - 1) + ")"};
  }
  report.rank = *rank_value;
  auto step = doc.find(contract::kFieldStep);
  std::optional<int64_t> step_value = step == doc.end() ? std::nullopt : NonNegativeInteger(*step);
  if (!step_value) return ReportRefused{"\"step\" is not a whole number >= 0"};
  report.step = *step_value;
  if (auto total = doc.find(contract::kFieldTotal); total != doc.end() && !total->is_null()) {
    report.total = NonNegativeInteger(*total);
    if (!report.total) return ReportRefused{"\"total\" is not a whole number >= 0"};
  }
  if (auto done = doc.find(contract::kFieldDone); done != doc.end()) {
    if (!done->is_boolean()) return ReportRefused{"\"done\" is not true or false"};
    report.done = done->get<bool>();
  }
  auto metrics = doc.find(contract::kFieldMetrics);
  if (metrics == doc.end() || metrics->is_null()) return report;
  if (!metrics->is_object() || metrics->size() > static_cast<size_t>(contract::kProgressMaxMetrics)) {
    return ReportRefused{"\"metrics\" is not an object of at most " + std::to_string(contract::kProgressMaxMetrics) +
                         " numbers"};
  }
  for (const auto& [name, value] : metrics->items()) {
    if (name.empty() || name.size() > contract::kProgressMetricNameMax || !value.is_number()) {
      return ReportRefused{"metric \"" + name.substr(0, contract::kProgressMetricNameMax) +
                           "\": a name of 1 to " + std::to_string(contract::kProgressMetricNameMax) +
                           " bytes must have a number"};
    }
    report.metrics.emplace_back(name, value.get<double>());
  }
  return report;
}

nlohmann::json MetricsJson(const std::vector<std::pair<std::string, double>>& metrics) {
  nlohmann::json object = nlohmann::json::object();
  for (const auto& [name, value] : metrics) object[name] = value;
  return object;
}

}  // namespace sidecar

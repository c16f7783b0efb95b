#include "observed/progress.h"

#include <cmath>
#include <cstdint>
#include <string>

#include "api/time.h"
#include "contract/names.h"

namespace ncclop::observed {
namespace {

using Json = nlohmann::json;

bool IsMetricName(std::string_view name) {
  if (name.empty() || name.size() > contract::kProgressMetricNameMax) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                    c == '.' || c == '-' || c == '/';
    if (!ok) return false;
  }
  return true;
}

std::optional<std::int64_t> IntegerAt(const Json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<std::int64_t>();
}

}  // namespace

std::optional<api::Progress> ParseProgressAnnotation(std::string_view annotation) {
  if (annotation.empty()) return std::nullopt;
  Json report = Json::parse(annotation, nullptr, /*allow_exceptions=*/false);
  if (!report.is_object()) return std::nullopt;
  auto step = IntegerAt(report, contract::kFieldStep);
  auto attempt = IntegerAt(report, contract::kFieldAttempt);
  auto time_field = report.find(contract::kFieldTime);
  if (!step || *step < 0 || !attempt || *attempt < 1 || *attempt > INT32_MAX) return std::nullopt;
  if (time_field == report.end() || !time_field->is_string()) return std::nullopt;
  std::optional<api::Time> time = api::ParseTime(time_field->get<std::string>());
  if (!time) return std::nullopt;
  api::Progress out;
  out.attempt = static_cast<int>(*attempt);
  out.step = *step;
  out.time = api::FormatTime(*time);
  if (auto total = IntegerAt(report, contract::kFieldTotal); total && *total > 0) out.total_steps = total;
  auto metrics = report.find(contract::kFieldMetrics);
  if (metrics != report.end() && metrics->is_object()) {
    for (auto it = metrics->begin(); it != metrics->end(); ++it) {
      if (static_cast<int>(out.metrics.size()) == contract::kProgressMaxMetrics) break;
      if (!IsMetricName(it.key()) || !it->is_number()) continue;
      if (it->is_number_float() && !std::isfinite(it->get<double>())) continue;
      out.metrics.emplace_back(it.key(), it->dump());
    }
  }
  return out;
}

bool IsNewerProgress(const api::Progress& report, const std::optional<api::Progress>& shown) {
  if (!shown) return true;
  if (report.attempt != shown->attempt) return report.attempt > shown->attempt;
  if (report == *shown) return false;
  auto at = api::ParseTime(report.time);
  auto before = api::ParseTime(shown->time);
  return !before || (at && *at >= *before);
}

}  // namespace ncclop::observed

#include "id_configmap.h"

#include <charconv>

#include "contract/names.h"
#include "contract/unique_id.h"
#include "id_request.h"

namespace sidecar {
namespace {

std::optional<std::string> StringField(const nlohmann::json& data, std::string_view key) {
  auto it = data.find(key);
  if (it == data.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

}  // namespace

std::optional<std::string> DecodeIdList(std::string_view text, std::string* problem) {
  std::string ids;
  size_t position = 0;
  for (size_t start = 0;; ++position) {
    size_t comma = text.find(contract::kIdListSeparator, start);
    std::string_view part = text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    std::string where = position == 0 && comma == std::string_view::npos ? "data.uniqueId"
                                                                          : "id " + std::to_string(position) + " of data.uniqueId";
    std::optional<std::string> raw = contract::Base64Decode(part);
    if (!raw) {
      if (problem) *problem = where + " is not valid base64";
      return std::nullopt;
    }
    if (raw->size() != kUniqueIdBytes) {
      if (problem) {
        *problem = where + " decodes to " + std::to_string(raw->size()) + " bytes, not " + std::to_string(kUniqueIdBytes);
      }
      return std::nullopt;
    }
    ids += *raw;
    if (comma == std::string_view::npos) return ids;
    start = comma + 1;
  }
}

std::vector<std::string> SplitIds(const std::string& ids) {
  std::vector<std::string> out;
  for (size_t at = 0; at + kUniqueIdBytes <= ids.size(); at += kUniqueIdBytes) out.push_back(ids.substr(at, kUniqueIdBytes));
  return out;
}

std::optional<IdConfigMapView> ReadIdConfigMap(const nlohmann::json& config_map,
                                               const std::string& expected_job_uid,
                                               std::string* ignored_because) {
  auto ignore = [&](std::string why) -> std::optional<IdConfigMapView> {
    if (ignored_because) *ignored_because = std::move(why);
    return std::nullopt;
  };
  if (!config_map.is_object()) return ignore("not an object");
  auto data = config_map.find("data");
  if (data == config_map.end() || !data->is_object()) return ignore("no data yet");

  IdConfigMapView view;
  view.job_uid = StringField(*data, contract::kDataJobUid).value_or("");
  if (!expected_job_uid.empty() && !view.job_uid.empty() && view.job_uid != expected_job_uid) {
    return ignore("data.jobUID belongs to another NcclJob of the same name");
  }
  std::optional<std::string> attempt_text = StringField(*data, contract::kDataAttempt);
  if (!attempt_text) return ignore("no data.attempt yet");
  const char* end = attempt_text->data() + attempt_text->size();
  auto [ptr, ec] = std::from_chars(attempt_text->data(), end, view.attempt);
  if (attempt_text->empty() || ec != std::errc() || ptr != end || view.attempt < 1) {
    return ignore("data.attempt is not a positive integer");
  }

  std::optional<std::string> encoded = StringField(*data, contract::kDataUniqueId);
  if (encoded && !encoded->empty()) {
    std::optional<std::string> ids = DecodeIdList(*encoded, &view.problem);
    if (ids) view.id = std::move(*ids);
  }
  return view;
}

}  // namespace sidecar

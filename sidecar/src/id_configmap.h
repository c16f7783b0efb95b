// Reading the job's ConfigMap `<job>-nccl` (written only by the operator): data.attempt,
// data.uniqueId (base64, absent until published) and data.jobUID. Pure, so the rules about
// what counts as a publication are unit-tested.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace sidecar {

struct IdConfigMapView {
  int64_t attempt = 0;
  // The raw ids back to back (128 bytes each, in root order), when published and well-formed.
  // data.uniqueId holds one base64 id per bootstrap root, comma-separated.
  std::optional<std::string> id;
  std::string job_uid;
  std::string problem;  // why a present uniqueId was not taken (for a warning); never the id
};

// The list form of ids ("<base64>,<base64>,..."; one id has no comma) as the raw ids back to back;
// nullopt, and *problem says which id, when any is not base64 of 128 bytes.
std::optional<std::string> DecodeIdList(std::string_view text, std::string* problem);

// The raw ids back to back, one string each.
std::vector<std::string> SplitIds(const std::string& ids);

// nullopt when the ConfigMap says nothing usable: no or malformed data.attempt, or a jobUID
// other than `expected_job_uid` (a ConfigMap left by an earlier job of the same name).
// An empty expected_job_uid accepts any.
std::optional<IdConfigMapView> ReadIdConfigMap(const nlohmann::json& config_map,
                                               const std::string& expected_job_uid,
                                               std::string* ignored_because = nullptr);

}  // namespace sidecar

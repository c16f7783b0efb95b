// Reading the job's ConfigMap `<job>-nccl` (written only by the operator): data.attempt,
// data.uniqueId (base64, absent until published) and data.jobUID. Pure, so the rules about
// what counts as a publication are unit-tested.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace sidecar {

struct IdConfigMapView {
  int64_t attempt = 0;
  std::optional<std::string> id;  // the raw 128 bytes, when published and well-formed
  std::string job_uid;
  std::string problem;  // why a present uniqueId was not taken (for a warning); never the id
};

// nullopt when the ConfigMap says nothing usable: no or malformed data.attempt, or a jobUID
// other than `expected_job_uid` (a ConfigMap left by an earlier job of the same name).
// An empty expected_job_uid accepts any.
std::optional<IdConfigMapView> ReadIdConfigMap(const nlohmann::json& config_map,
                                               const std::string& expected_job_uid,
                                               std::string* ignored_because = nullptr);

}  // namespace sidecar

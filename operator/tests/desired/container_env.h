// A container's environment variables as the pod tests read them.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace ncclop::testing {

// The variable's value in the container's env; "<from>" when it is set from elsewhere
// (valueFrom), "<absent>" when unset.
inline std::string EnvValue(const nlohmann::json& container, const std::string& name) {
  for (const nlohmann::json& v : container["env"]) {
    if (v["name"] == name) return v.contains("value") ? v["value"].get<std::string>() : "<from>";
  }
  return "<absent>";
}

// The value the container sees, as a kubelet resolves it: its env entry, else the last of its
// envFrom sources that is `configmap` (the only ConfigMap these tests give) and has the key.
inline std::string SeenEnvValue(const nlohmann::json& container, const nlohmann::json& configmap,
                                const std::string& name) {
  if (std::string v = EnvValue(container, name); v != "<absent>") return v;
  std::string seen = "<absent>";
  for (const nlohmann::json& source : container.value("envFrom", nlohmann::json::array())) {
    if (!source.contains("configMapRef") || source["configMapRef"]["name"] != configmap["metadata"]["name"]) continue;
    if (configmap["data"].contains(name)) seen = configmap["data"][name].get<std::string>();
  }
  return seen;
}

}  // namespace ncclop::testing

// A container's environment variables as the pod tests read them.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace ncclop::testing {

// The variable's value; "<from>" when it is set from elsewhere (valueFrom), "<absent>" when unset.
inline std::string EnvValue(const nlohmann::json& container, const std::string& name) {
  for (const nlohmann::json& v : container["env"]) {
    if (v["name"] == name) return v.contains("value") ? v["value"].get<std::string>() : "<from>";
  }
  return "<absent>";
}

}  // namespace ncclop::testing

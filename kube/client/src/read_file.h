// A whole file into a string (kubeconfig, token, CA). Internal to the client.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace kube::internal {

inline bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return true;
}

}  // namespace kube::internal

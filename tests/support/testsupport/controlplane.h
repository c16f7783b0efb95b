// Helpers for tests that run against the real local control plane (tests/harness/controlplane).
// Header-only so every test binary can use it without another library.
#pragma once

#include <sys/wait.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>

namespace testsupport {

inline std::string RequiredEnv(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') {
    throw std::runtime_error(std::string(name) +
                             " is unset: run this test through ctest, which starts the control plane fixture");
  }
  return v;
}

inline std::string Kubeconfig() { return RequiredEnv("NCCLOP_TEST_KUBECONFIG"); }
inline std::string ControlPlaneDir() { return RequiredEnv("NCCLOP_TEST_CONTROLPLANE_DIR"); }
inline std::string Kubectl() { return RequiredEnv("NCCLOP_TEST_KUBECTL"); }

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Runs a shell command and captures its output. For kubectl and the control-plane scripts.
inline CommandResult Run(const std::string& command) {
  CommandResult result;
  std::string full = command + " 2>&1";
  FILE* pipe = popen(full.c_str(), "r");
  if (pipe == nullptr) return result;
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) result.output.append(buf.data(), n);
  int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

inline CommandResult RunKubectl(const std::string& args) {
  return Run(Kubectl() + " --kubeconfig " + Kubeconfig() + " " + args);
}

// Polls `condition` until it holds or the deadline passes; never a fixed sleep.
inline bool WaitFor(const std::function<bool()>& condition, std::chrono::milliseconds timeout,
                    std::chrono::milliseconds poll = std::chrono::milliseconds(50)) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(poll);
  }
  return condition();
}

}  // namespace testsupport

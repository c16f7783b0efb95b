// The sidecar's settings: who this pod is (NCCLJOB_* env, injected by the operator) and how to
// run (command-line flags). Parsing is pure so every rule is unit-tested; main() turns an error
// into exit status 2 with the message.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "contract/names.h"
#include "logging/log.h"

namespace sidecar {

struct HostPort {
  std::string host;
  int port = 0;
};

struct Config {
  // From the environment.
  std::string job;
  std::string name_space;
  std::string job_uid;   // optional
  std::string pod_name;  // the root patches this pod
  int index = 0;
  int replicas = 0;
  int gpus_per_pod = 1;
  int world_size = 0;
  int64_t attempt = 0;

  // From flags.
  HostPort listen{"127.0.0.1", contract::kSidecarApiPort};
  HostPort probe_listen{"0.0.0.0", contract::kSidecarProbePort};
  std::string kubeconfig;  // empty: in-cluster
  bool standalone = false;
  std::string peer_url;    // standalone, non-root: the root sidecar to ask
  logging::Format log_format = logging::Format::kText;
  logging::Level log_level = logging::Level::kInfo;

  bool root() const { return index == 0; }
  std::string ConfigMapName() const { return contract::ConfigMapName(job); }
};

struct ShowHelp {};
struct ConfigError {
  std::string message;  // names the flag or variable and what it should be
};

using EnvLookup = std::function<std::optional<std::string>(std::string_view name)>;

std::variant<Config, ShowHelp, ConfigError> ParseConfig(const std::vector<std::string>& args,
                                                        const EnvLookup& env);

std::optional<HostPort> ParseHostPort(std::string_view text);

std::string HelpText();

}  // namespace sidecar

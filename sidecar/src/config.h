// The sidecar's settings: who this pod is (NCCLJOB_* env, injected by the operator) and how to
// run (command-line flags). Parsing is pure so every rule is unit-tested; main() turns an error
// into exit status 2 with the message.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "cli/program.h"
#include "contract/bootstrap_roots.h"
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
  std::string name_space;  // empty until UseClientNamespace when NCCLJOB_NAMESPACE is unset
  std::string job_uid;   // optional
  std::string pod_name;  // the root patches this pod
  int index = 0;
  int replicas = 0;
  int gpus_per_pod = 1;
  int world_size = 0;
  int64_t attempt = 0;
  int bootstrap_roots = 1;  // NCCLJOB_BOOTSTRAP_ROOTS (absent: 1): pods that each make an id

  // From flags.
  HostPort listen{"127.0.0.1", contract::kSidecarApiPort};
  HostPort probe_listen{"0.0.0.0", contract::kSidecarProbePort};
  std::string kubeconfig;  // empty: in-cluster
  bool standalone = false;
  std::string peer_url;    // standalone, non-root: the root sidecar to ask
  // Standalone with several bootstrap roots: every root sidecar's id API, in root order.
  std::vector<std::string> root_urls;
  // Kubernetes mode, a pod restarted in place: the directory (an emptyDir) that keeps the last
  // attempt this pod served (served_attempt.h). Empty: the pod serves NCCLJOB_ATTEMPT.
  std::string in_place_state;
  // --stall-timeout-seconds (the operator sets it from failurePolicy.stallTimeoutSeconds): a rank
  // silent this long ends the attempt (stall_watch.h). 0: no stall watch.
  int stall_timeout_seconds = 0;
  // Where a stall's reason goes: the kubelet's default terminationMessagePath.
  std::string termination_log = "/dev/termination-log";
  logging::Format log_format = logging::Format::kText;
  logging::Level log_level = logging::Level::kInfo;

  // Which id of the job's list this pod's trainer makes (contract/bootstrap_roots.h), or -1.
  int root_slot() const {
    return contract::BootstrapRootSlot(index, bootstrap_roots, replicas, std::max(gpus_per_pod, 1));
  }
  bool root() const { return root_slot() >= 0; }
  std::string ConfigMapName() const { return contract::ConfigMapName(job); }
};

struct ShowHelp {};
struct ShowVersion {};
struct ConfigError {
  std::string message;  // names the flag or variable and what it should be
};

using EnvLookup = std::function<std::optional<std::string>(std::string_view name)>;

std::variant<Config, ShowHelp, ShowVersion, ConfigError> ParseConfig(const std::vector<std::string>& args,
                                                                     const EnvLookup& env);

std::optional<HostPort> ParseHostPort(std::string_view text);

// Kubernetes mode: without NCCLJOB_NAMESPACE (the operator no longer injects it) the namespace
// is the API client's, which in-cluster is the pod's service account's, i.e. the pod's own.
// An error when neither names one.
std::optional<ConfigError> UseClientNamespace(Config* config, std::string_view client_namespace);

// The flag table (one row per flag; the defaults are Config's initialisers); its rows write into
// *config. --help and sidecar/README.md's table are made from it.
cli::Program CommandLine(Config* config);

std::string HelpText();
std::string VersionText();

}  // namespace sidecar

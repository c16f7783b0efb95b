#include "config.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <span>

#include "cli/log_flags.h"
#include "cli/program.h"
#include "contract/env.h"

namespace sidecar {
namespace {

namespace env = contract::env;

template <class Int>
std::optional<Int> ParseInt(std::string_view text) {
  Int value{};
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

// Reads one integer variable; an error names the variable and what it should hold.
template <class Int>
std::optional<ConfigError> ReadInt(const EnvLookup& env, std::string_view name, Int min_value,
                                   bool required, Int* out) {
  std::optional<std::string> text = env(name);
  if (!text || text->empty()) {
    if (!required) return std::nullopt;
    return ConfigError{std::string(name) + " is not set; the operator injects it (see docs/contracts.md)"};
  }
  std::optional<Int> value = ParseInt<Int>(*text);
  if (!value || *value < min_value) {
    return ConfigError{std::string(name) + "=\"" + *text + "\" is not an integer >= " +
                       std::to_string(min_value)};
  }
  *out = *value;
  return std::nullopt;
}

std::optional<ConfigError> ReadEnv(const EnvLookup& env, Config* config) {
  auto job = env(env::kJobName);
  if (!job || job->empty()) return ConfigError{std::string(env::kJobName) + " is not set; the operator injects it"};
  config->job = *job;
  config->name_space = env(env::kNamespace).value_or("");
  config->job_uid = env(env::kJobUid).value_or("");

  if (auto e = ReadInt<int>(env, env::kIndex, 0, true, &config->index)) return e;
  if (auto e = ReadInt<int>(env, env::kReplicas, 1, true, &config->replicas)) return e;
  if (auto e = ReadInt<int>(env, env::kGpusPerPod, 0, false, &config->gpus_per_pod)) return e;
  if (auto e = ReadInt<int64_t>(env, env::kAttempt, 1, true, &config->attempt)) return e;
  if (config->index >= config->replicas) {
    return ConfigError{"NCCLJOB_INDEX=" + std::to_string(config->index) + " must be below NCCLJOB_REPLICAS=" +
                       std::to_string(config->replicas)};
  }
  int expected_world = config->replicas * std::max(config->gpus_per_pod, 1);
  config->world_size = expected_world;
  if (auto e = ReadInt<int>(env, env::kWorldSize, 1, false, &config->world_size)) return e;
  if (config->world_size != expected_world) {
    return ConfigError{"NCCLJOB_WORLD_SIZE=" + std::to_string(config->world_size) +
                       " disagrees with NCCLJOB_REPLICAS * max(NCCLJOB_GPUS_PER_POD, 1) = " +
                       std::to_string(expected_world)};
  }
  if (auto e = ReadInt<int>(env, env::kBootstrapRoots, 1, false, &config->bootstrap_roots)) return e;
  if (config->bootstrap_roots > config->replicas) {
    return ConfigError{"NCCLJOB_BOOTSTRAP_ROOTS=" + std::to_string(config->bootstrap_roots) +
                       " is more than NCCLJOB_REPLICAS=" + std::to_string(config->replicas) +
                       " (each root is a pod)"};
  }
  config->pod_name = env(env::kPodName).value_or("");
  if (config->pod_name.empty()) config->pod_name = contract::PodName(config->job, config->index);
  return std::nullopt;
}

std::optional<ConfigError> CheckMode(const Config& config) {
  if (!config.in_place_state.empty() && config.standalone) {
    return ConfigError{std::string(contract::kSidecarStateFlag) +
                       " is for Kubernetes mode, where the ConfigMap names each attempt; --standalone has none"};
  }
  if (!config.root_urls.empty() && !config.standalone) return ConfigError{"--root-urls only applies with --standalone"};
  if (config.standalone && config.bootstrap_roots > 1) {
    if (static_cast<int>(config.root_urls.size()) != config.bootstrap_roots || !config.peer_url.empty()) {
      return ConfigError{"--standalone with NCCLJOB_BOOTSTRAP_ROOTS=" + std::to_string(config.bootstrap_roots) +
                         " needs --root-urls with every root sidecar's http://HOST:PORT in root order (" +
                         std::to_string(config.bootstrap_roots) + " of them, this one's too), not --peer-url"};
    }
    for (const std::string& url : config.root_urls) {
      if (!url.starts_with("http://")) return ConfigError{"--root-urls: '" + url + "' does not start with http://"};
    }
    return std::nullopt;
  }
  if (!config.root_urls.empty()) return ConfigError{"--root-urls is for NCCLJOB_BOOTSTRAP_ROOTS > 1; one root: --peer-url"};
  if (!config.peer_url.empty() && !config.standalone) {
    return ConfigError{"--peer-url only applies with --standalone"};
  }
  if (!config.peer_url.empty() && config.root()) {
    return ConfigError{"--peer-url is for non-root sidecars; the root (NCCLJOB_INDEX=0) serves its own id"};
  }
  if (config.standalone && !config.root() && config.peer_url.empty()) {
    return ConfigError{"a non-root sidecar in --standalone mode needs --peer-url http://HOST:PORT of the root sidecar"};
  }
  if (!config.peer_url.starts_with("http://") && !config.peer_url.empty()) {
    return ConfigError{"--peer-url must start with http://"};
  }
  return std::nullopt;
}

constexpr int kMaxStallTimeoutSeconds = 7 * 24 * 3600;
constexpr char kHostPortTakes[] = "HOST:PORT with a port from 0 to 65535";

std::string ShowHostPort(const HostPort& hp) { return hp.host + ":" + std::to_string(hp.port); }

std::optional<std::vector<std::string>> SplitCommas(const std::string& value) {
  std::vector<std::string> parts;
  for (size_t start = 0;;) {
    size_t comma = value.find(',', start);
    parts.push_back(value.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) return parts;
    start = comma + 1;
  }
}

std::string JoinCommas(const std::vector<std::string>& parts) {
  std::string joined;
  for (const std::string& part : parts) joined += (joined.empty() ? "" : ",") + part;
  return joined;
}

// "A, B and C".
std::string ListNames(std::span<const char* const> names) {
  std::string list;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) list += i + 1 == names.size() ? " and " : ", ";
    list += names[i];
  }
  return list;
}

// What each variable holds is docs/contracts.md's to say; --help names them from the contract.
std::string EnvironmentParagraph() {
  return cli::Wrap("Environment: the operator gives the sidecar " + ListNames(env::kSidecarEnv) +
                       "; it also reads " + ListNames(env::kSidecarEnvOfEarlierPods) +
                       " when set (pods of an earlier operator). What each holds, which are required and their "
                       "defaults: docs/contracts.md, \"Env injected into every container of the pod\". A "
                       "missing or malformed one is named, exit status 2.",
                   100) +
         "\n";
}

constexpr char kApiParagraphs[] = R"(HTTP API (on --listen):
  POST /v1/id               root pods only: the 128 raw bytes, or JSON {"id":"<base64>","attempt":N}
                            with Content-Type: application/json. 200 {"attempt":N} once the id
                            is on this pod (standalone: at once); 503 not there within 10 s,
                            POST the same id again; 400 wrong size/bad JSON; 403 not a root;
                            409 another id for this attempt or another attempt; 413 over 4 KiB
  GET  /v1/id?timeout=S     long-poll (default 30 s, at most 300): 200 {"ids":[...],"id",
                            "attempt","job","jobUID"} once this attempt's ids are published
                            ("id" only with one root); 204 timeout, ask again;
                            410 a later attempt exists, this pod is stale; 503 shutting down
  GET  /v1/info             {"job","namespace","index","replicas","worldSize","gpusPerPod",
                            "attempt","root","bootstrapRoots"}
  GET  /v1/root-id?timeout=S  standalone root pod of a job of several roots only: its own
                            trainer's id, {"id","attempt"} (long-poll; 204 not yet)
  GET  /v1/progress         the last progress report of each rank of this pod: {"ranks":[{"rank",
                            "step","total","metrics","time","done"}],"received","dropped"}
Progress reports (UDP, on --listen's address and port): one JSON datagram per report,
{"rank","step","total"?,"metrics"?,"done"?}; a bad one is dropped and counted. Pod 0 (Kubernetes
mode) puts the newest report on its pod as annotation nccl.dev/progress.
Probes (on --probe-listen): GET /healthz (alive), GET /readyz (the id source is reachable: the
ConfigMap was listed, or standalone: the root is up / the peer answered; in place: not before
the attempt to serve is known).
Both ports: an idle connection is closed after 5 s; a request must arrive within 5 s of its
first byte (408); over 512 connections (probes: 64) a new one gets 503 unless an idle one can go.
)";

// The exit codes the operator's restart rule reads come from the contract.
std::string InPlaceAndExitParagraphs() {
  const std::string flag(contract::kSidecarStateFlag);
  const std::string over = std::to_string(contract::kSidecarExitAttemptOver);
  const std::string stalled = std::to_string(contract::kSidecarExitStalled);
  return "\nIn place (" + flag + "=DIR): the probes start at once; the id API is bound only once the\n"
         "ConfigMap names an attempt after the one in DIR/attempt (absent: NCCLJOB_ATTEMPT - 1), which is\n"
         "then served and written to DIR/attempt. When the ConfigMap names a later attempt still, waiting\n"
         "polls get 410 and the sidecar exits " + over + "; the pod's restart rule restarts its containers.\n"
         "\nExit status: 0 after SIGTERM/SIGINT, 1 a port cannot be bound or DIR/attempt cannot be written,\n"
         "2 bad flags or environment (or DIR is not a directory), " + over + " in place: this pod's attempt is over,\n" +
         stalled + " a rank stalled (" + std::string(contract::kSidecarStallTimeoutFlag) + "; the reason is in --termination-log).\n"
         "The id itself is never logged.\n";
}

}  // namespace

std::optional<ConfigError> UseClientNamespace(Config* config, std::string_view client_namespace) {
  if (config->name_space.empty()) config->name_space = std::string(client_namespace);
  if (config->name_space.empty()) {
    return ConfigError{"no namespace: NCCLJOB_NAMESPACE is not set and the client has none (in-cluster: the "
                       "service account's namespace file; --kubeconfig: the context's namespace)"};
  }
  return std::nullopt;
}

std::optional<HostPort> ParseHostPort(std::string_view text) {
  size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  std::optional<int> port = ParseInt<int>(text.substr(colon + 1));
  if (!port || *port < 0 || *port > 65535) return std::nullopt;
  return HostPort{std::string(text.substr(0, colon)), *port};
}

cli::Program CommandLine(Config* c) {
  return {
      .name = "nccl-sidecar",
      .summary = "nccl-sidecar: hands the NCCL unique id from the root trainer to every trainer of one\n"
                 "attempt of an NcclJob. Runs in every pod as the native sidecar container \"nccl-sidecar\".",
      .flags =
          {
              cli::Parsed<HostPort>("listen", &c->listen, "HOST:PORT", kHostPortTakes, ParseHostPort, ShowHostPort,
                                    "the id API for the trainer; keep it on loopback"),
              cli::Parsed<HostPort>("probe-listen", &c->probe_listen, "HOST:PORT", kHostPortTakes, ParseHostPort,
                                    ShowHostPort, "/healthz and /readyz for the kubelet"),
              cli::Text("kubeconfig", &c->kubeconfig, "PATH", "talk to the API server with this kubeconfig, for tests")
                  .DefaultIs("in-cluster: the pod's service-account token, re-read as it rotates"),
              cli::Switch("standalone", &c->standalone,
                          "no API server: the root sidecar serves the id its trainer POSTs; a non-root sidecar "
                          "long-polls the root sidecar given by --peer-url"),
              cli::Text("peer-url", &c->peer_url, "URL",
                        "standalone non-root only: the root sidecar's id API, e.g. http://127.0.0.1:8471"),
              cli::Parsed<std::vector<std::string>>(
                  "root-urls", &c->root_urls, "URL,URL,...", "URLs separated by commas", SplitCommas, JoinCommas,
                  "standalone with NCCLJOB_BOOTSTRAP_ROOTS > 1 (every pod): each root sidecar's id API in root "
                  "order, this one's included; each is asked for its own trainer's id (GET /v1/root-id) until "
                  "the list is whole"),
              cli::Text(std::string(contract::kSidecarStateFlag.substr(2)), &c->in_place_state, "DIR",
                        "Kubernetes mode, a pod restarted in place (the operator sets it): keep the last attempt "
                        "served in DIR/attempt, serve the first attempt the ConfigMap names after it, exit " +
                            std::to_string(contract::kSidecarExitAttemptOver) + " when the ConfigMap names a later one"),
              cli::IntInRange(std::string(contract::kSidecarStallTimeoutFlag.substr(2)), &c->stall_timeout_seconds, 0,
                              kMaxStallTimeoutSeconds,
                              "a rank that reported progress and then sent nothing for N seconds (not done, while "
                              "an attempt is served) is stalled: its reason goes to --termination-log and the "
                              "sidecar exits " + std::to_string(contract::kSidecarExitStalled) + "; 0: no stall watch"),
              cli::Text("termination-log", &c->termination_log, "PATH",
                        "where a stall's reason is written (the kubelet's default terminationMessagePath)"),
              cli::LogFormatFlag(&c->log_format),
              cli::LogLevelFlag(&c->log_level),
          },
      .epilogue = EnvironmentParagraph() + "\n" + kApiParagraphs + InPlaceAndExitParagraphs(),
  };
}

std::variant<Config, ShowHelp, ShowVersion, ConfigError> ParseConfig(const std::vector<std::string>& args,
                                                                     const EnvLookup& env) {
  Config config;
  cli::ParseOutcome outcome = cli::Parse(CommandLine(&config), args);
  if (outcome.help) return ShowHelp{};
  if (outcome.version) return ShowVersion{};
  if (!outcome.ok()) return ConfigError{outcome.error};
  if (auto error = ReadEnv(env, &config)) return *error;
  if (auto error = CheckMode(config)) return *error;
  return config;
}

std::string HelpText() {
  Config defaults;
  return cli::HelpText(CommandLine(&defaults));
}

std::string VersionText() {
  Config defaults;
  return cli::VersionText(CommandLine(&defaults));
}

}  // namespace sidecar

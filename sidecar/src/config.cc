#include "config.h"

#include <algorithm>
#include <charconv>
#include <limits>

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

std::variant<Config, ShowHelp, ConfigError> ParseConfig(const std::vector<std::string>& args,
                                                        const EnvLookup& env) {
  Config config;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string flag = args[i];
    std::optional<std::string> inline_value;
    if (size_t eq = flag.find('='); flag.starts_with("--") && eq != std::string::npos) {
      inline_value = flag.substr(eq + 1);
      flag.resize(eq);
    }
    if (flag == "--help" || flag == "-h") return ShowHelp{};
    if (flag == "--standalone") {
      config.standalone = true;
      continue;
    }
    std::string value;
    if (inline_value) {
      value = *inline_value;
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      return ConfigError{flag + " needs a value (see --help)"};
    }
    if (flag == "--listen" || flag == "--probe-listen") {
      std::optional<HostPort> hp = ParseHostPort(value);
      if (!hp) return ConfigError{flag + "=" + value + " is not HOST:PORT"};
      (flag == "--listen" ? config.listen : config.probe_listen) = *hp;
    } else if (flag == "--kubeconfig") {
      config.kubeconfig = value;
    } else if (flag == "--peer-url") {
      config.peer_url = value;
    } else if (flag == "--root-urls") {
      config.root_urls.clear();
      for (size_t start = 0;;) {
        size_t comma = value.find(',', start);
        config.root_urls.push_back(value.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
    } else if (flag == "--log-format") {
      if (!logging::ParseFormat(value, &config.log_format)) return ConfigError{"--log-format must be text or json"};
    } else if (flag == "--log-level") {
      if (!logging::ParseLevel(value, &config.log_level)) {
        return ConfigError{"--log-level must be debug, info, warn or error"};
      }
    } else {
      return ConfigError{"unknown flag " + flag + " (see --help)"};
    }
  }
  if (auto error = ReadEnv(env, &config)) return *error;
  if (auto error = CheckMode(config)) return *error;
  return config;
}

std::string HelpText() {
  return R"(nccl-sidecar: hands the NCCL unique id from the root trainer to every trainer of one
attempt of an NcclJob. Runs in every pod as the native sidecar container "nccl-sidecar".

Usage: nccl-sidecar [flags]

Flags:
  --listen HOST:PORT        id API for the trainer (default 127.0.0.1:8471; keep it on loopback)
  --probe-listen HOST:PORT  /healthz and /readyz for the kubelet (default 0.0.0.0:8472)
  --kubeconfig PATH         talk to the API server with this kubeconfig (tests); default is
                            in-cluster: the pod's service-account token (re-read as it rotates)
  --standalone              no API server: the root sidecar serves the id its trainer POSTs;
                            a non-root sidecar long-polls the root sidecar given by --peer-url
  --peer-url URL            standalone non-root only: the root sidecar's id API,
                            e.g. http://127.0.0.1:8471
  --root-urls URL,URL,...   standalone with NCCLJOB_BOOTSTRAP_ROOTS > 1 (every pod): each root
                            sidecar's id API in root order, this one's included; each is asked
                            for its own trainer's id (GET /v1/root-id) until the list is whole
  --log-format text|json    (default text)
  --log-level LEVEL         debug, info, warn or error (default info)
  --help                    this text

Environment (injected by the operator; see docs/contracts.md):
  NCCLJOB_NAME              NcclJob name (required); the ConfigMap watched is <name>-nccl
  NCCLJOB_NAMESPACE         namespace (default: the client's: in-cluster the service account's,
                            i.e. the pod's; with --kubeconfig its context's namespace)
  NCCLJOB_INDEX             pod index, 0 is the root (required)
  NCCLJOB_REPLICAS          pods in the job (required)
  NCCLJOB_ATTEMPT           this pod's attempt, from 1 (required)
  NCCLJOB_GPUS_PER_POD      ranks per pod, 0 = one CPU-only rank (default 1)
  NCCLJOB_WORLD_SIZE        ranks in all; checked against REPLICAS * max(GPUS_PER_POD, 1) (optional)
  NCCLJOB_UID               NcclJob UID; a ConfigMap of another UID is ignored (optional)
  NCCLJOB_POD_NAME          this pod's name, the root patches it (default <name>-<index>)
  NCCLJOB_BOOTSTRAP_ROOTS   pods that each make an id (default 1, at most NCCLJOB_REPLICAS; the
                            roots are the pods of NCCL's first rank of each id's block); every
                            root accepts its trainer's POST, the list is served once published

HTTP API (on --listen):
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
Probes (on --probe-listen): GET /healthz (alive), GET /readyz (the id source is reachable: the
ConfigMap was listed, or standalone: the root is up / the peer answered).
Both ports: an idle connection is closed after 5 s; a request must arrive within 5 s of its
first byte (408); over 512 connections (probes: 64) a new one gets 503 unless an idle one can go.

Exit status: 0 after SIGTERM/SIGINT, 1 a port cannot be bound, 2 bad flags or environment.
The id itself is never logged.
)";
}

}  // namespace sidecar

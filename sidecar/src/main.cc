// nccl-sidecar: wires the id API, the probes and the id source (the job's ConfigMap, or in
// standalone mode the root sidecar) together, and stops them all on SIGTERM.
#include <malloc.h>
#include <pthread.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "api_server.h"
#include "config.h"
#include "configmap_watch.h"
#include "id_board.h"
#include "kube/client.h"
#include "kube/config.h"
#include "logging/log.h"
#include "peer_poller.h"
#include "probe_server.h"
#include "root_reporter.h"

namespace {

constexpr char kComponent[] = "sidecar";
constexpr int kExitBindFailed = 1;
constexpr int kExitBadConfig = 2;
// How long a stopping root sidecar keeps trying to put a posted id on its pod.
constexpr std::chrono::seconds kReportGrace{20};

// The id source in one mode or the other; owns the threads that feed the board.
struct IdSource {
  std::shared_ptr<kube::Client> client;
  std::unique_ptr<sidecar::ConfigMapWatch> watch;
  std::unique_ptr<sidecar::RootReporter> reporter;
  std::unique_ptr<sidecar::PeerPoller> peer;
  sidecar::RootIdKeeper keeper;
  std::function<bool()> ready;
  sidecar::ApiServer* api = nullptr;  // set before Start(): the reporter wakes the POSTs waiting for it

  void Start() {
    if (reporter) reporter->Start();
    if (watch) watch->Start();
    if (peer) peer->Start();
  }
  void Stop() {
    if (peer) peer->Stop();
    if (watch) watch->Stop();
    if (reporter) reporter->Stop();
  }
};

// Empty string on success, else why the API server cannot be reached.
// In Kubernetes mode it completes `config` with the client's namespace when the env named none.
std::string MakeIdSource(sidecar::Config& config, sidecar::IdBoard& board, IdSource* source) {
  if (config.standalone) {
    if (config.bootstrap_roots > 1) {
      // Every sidecar, roots too, gathers the list from the root sidecars (--root-urls); a root's
      // own id waits in its API server for the others to ask.
      source->peer = std::make_unique<sidecar::PeerPoller>(config, board);
      source->ready = [peer = source->peer.get()] { return peer->ready(); };
      source->keeper.keep = [](int64_t, const std::string&) {};  // served from the API's slot
    } else if (config.root()) {
      source->keeper.keep = [&board, &config](int64_t attempt, const std::string& id) {
        board.Observe(attempt, id, config.job_uid);
      };
      source->ready = [] { return true; };
    } else {
      source->peer = std::make_unique<sidecar::PeerPoller>(config, board);
      source->ready = [peer = source->peer.get()] { return peer->ready(); };
      source->keeper.keep = [](int64_t, const std::string&) {};
    }
    return {};
  }
  kube::Result<kube::Config> kube_config =
      config.kubeconfig.empty() ? kube::LoadInCluster() : kube::LoadKubeconfigFile(config.kubeconfig);
  if (!kube_config.ok()) return kube_config.status().ToString();
  if (auto error = sidecar::UseClientNamespace(&config, kube_config->default_namespace)) return error->message;
  source->client = std::make_shared<kube::Client>(*kube_config, kube::ClientOptions{.user_agent = "nccl-sidecar/0.1"});
  source->watch = std::make_unique<sidecar::ConfigMapWatch>(source->client, config, board);
  source->ready = [watch = source->watch.get()] { return watch->ready(); };
  if (config.root()) {
    source->reporter = std::make_unique<sidecar::RootReporter>(source->client, config, [source] {
      if (source->api) source->api->Wake();
    });
    source->keeper.keep = [reporter = source->reporter.get()](int64_t attempt, const std::string& id) {
      reporter->Report(attempt, id);
    };
    source->keeper.kept = [reporter = source->reporter.get()](int64_t attempt, const std::string& id) {
      return reporter->Reported(attempt, id);
    };
    source->keeper.recall = [reporter = source->reporter.get()](int64_t attempt) { return reporter->Recall(attempt); };
  } else {
    source->keeper.keep = [](int64_t, const std::string&) {};
  }
  return {};
}

std::optional<std::string> GetEnv(std::string_view name) {
  const char* value = std::getenv(std::string(name).c_str());
  if (!value) return std::nullopt;
  return std::string(value);
}

}  // namespace

int main(int argc, char** argv) {
  // glibc gives each thread that allocates an arena of its own (up to 8 per core); a dozen
  // mostly idle threads then hold a dozen partly touched heaps. One arena is plenty for a
  // process that serves a handful of requests per attempt.
  mallopt(M_ARENA_MAX, 1);
  std::vector<std::string> args(argv + 1, argv + argc);
  auto parsed = sidecar::ParseConfig(args, GetEnv);
  if (std::holds_alternative<sidecar::ShowHelp>(parsed)) {
    std::fputs(sidecar::HelpText().c_str(), stdout);
    return 0;
  }
  if (auto* error = std::get_if<sidecar::ConfigError>(&parsed)) {
    std::fprintf(stderr, "nccl-sidecar: %s\n", error->message.c_str());
    return kExitBadConfig;
  }
  sidecar::Config config = std::get<sidecar::Config>(std::move(parsed));
  logging::Configure(config.log_format, config.log_level);

  // Blocked before any thread starts, so only sigwait below sees them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  sidecar::IdBoard board;
  IdSource source;
  if (std::string error = MakeIdSource(config, board, &source); !error.empty()) {
    std::fprintf(stderr, "nccl-sidecar: cannot configure the Kubernetes client: %s\n", error.c_str());
    return kExitBadConfig;
  }

  sidecar::ApiServer api(config, board, source.keeper);
  source.api = &api;
  sidecar::ProbeServer probe(source.ready);
  int api_port = api.Bind(config.listen);
  int probe_port = probe.Bind(config.probe_listen);
  if (api_port < 0 || probe_port < 0) {
    logging::Error(kComponent, "cannot listen; is another sidecar running?",
                   {{"listen", config.listen.host + ":" + std::to_string(config.listen.port)},
                    {"probe_listen", config.probe_listen.host + ":" + std::to_string(config.probe_listen.port)}});
    return kExitBindFailed;
  }
  logging::Info(kComponent, "started",
                {{"job", config.job}, {"index", std::to_string(config.index)},
                 {"attempt", std::to_string(config.attempt)}, {"root", config.root() ? "true" : "false"},
                 {"mode", config.standalone ? "standalone" : "kubernetes"},
                 {"listen", config.listen.host + ":" + std::to_string(api_port)},
                 {"probe_listen", config.probe_listen.host + ":" + std::to_string(probe_port)}});

  api.Start();
  probe.Start();
  source.Start();

  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  logging::Info(kComponent, "stopping", {{"signal", signal_number == SIGTERM ? "SIGTERM" : "SIGINT"}});
  // The kubelet stops a native sidecar when the pod's trainer has ended. Our trainers wait for
  // the POST's answer, which comes once the id is on the pod; a trainer that gave up waiting
  // (or a client that does not wait) would otherwise take the attempt's id with it while the
  // API server was away. Keep reporting within the pod's grace period (default 30 s).
  if (source.reporter && !source.reporter->WaitReported(std::chrono::milliseconds(0))) {
    logging::Info(kComponent, "the id is not on the pod yet; still reporting it before stopping",
                  {{"up_to_seconds", std::to_string(kReportGrace.count())}});
    if (!source.reporter->WaitReported(kReportGrace)) {
      logging::Warn(kComponent, "stopping with the id not on the pod; the attempt cannot start");
    }
  }

  board.Close();  // answers every waiting long-poll (503) so the servers can stop at once
  source.Stop();
  api.Stop();
  probe.Stop();
  logging::Info(kComponent, "stopped");
  return 0;
}

// nccl-sidecar: wires the id API, the probes and the id source of its mode (id_source.h)
// together, and ends at once on SIGTERM (EndOnSignal). In place (--in-place-state) it first waits
// for the attempt this pod serves (served_attempt.h), and exits when a later attempt starts.
#include <malloc.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "api_server.h"
#include "config.h"
#include "contract/names.h"
#include "id_board.h"
#include "id_source.h"
#include "logging/log.h"
#include "make_id_source.h"
#include "probe_server.h"
#include "process_events.h"
#include "progress_annotator.h"
#include "progress_board.h"
#include "progress_listener.h"
#include "ras_poller.h"
#include "served_attempt.h"
#include "stall_watch.h"

namespace {

constexpr char kComponent[] = "sidecar";
constexpr int kExitBindFailed = 1;
constexpr int kExitStateNotWritten = 1;
constexpr int kExitBadConfig = 2;

std::optional<std::string> GetEnv(std::string_view name) {
  const char* value = std::getenv(std::string(name).c_str());
  if (!value) return std::nullopt;
  return std::string(value);
}

std::string Address(const std::string& host, int port) { return host + ":" + std::to_string(port); }

// In place: waits until the ConfigMap names an attempt after the last one this pod served and
// returns it; nullopt when a stop signal came first (*stopped_by says which). The API port is
// not bound meanwhile, so a trainer's request is refused (its client retries) and no id of an
// earlier attempt is served.
std::optional<int64_t> AwaitAttemptToServe(const sidecar::Config& config, const sidecar::ServedAttemptFile& state,
                                           sidecar::IdBoard& board, sidecar::IdSource& source,
                                           sidecar::ProcessEvents& events, int probe_port,
                                           sidecar::ProcessEvents::Event* stopped_by) {
  if (!state.problem.empty()) logging::Warn(kComponent, "ignored the in-place state file", {{"problem", state.problem}});
  logging::Info(kComponent, "waiting for the ConfigMap to name an attempt after the last one this pod served",
                {{"job", config.job}, {"index", std::to_string(config.index)},
                 {"last_served", std::to_string(sidecar::LastServedAttempt(state.attempt, config.attempt))},
                 {"from", state.attempt ? config.in_place_state + "/" + sidecar::kServedAttemptFile
                                        : "NCCLJOB_ATTEMPT - 1 (first start)"},
                 {"probe_listen", Address(config.probe_listen.host, probe_port)}});
  board.SetOnNewAttempt([&events] { events.Wake(); });  // also tells the serving loop below
  source.WatchAttempts();
  for (;;) {
    sidecar::ServedAttemptDecision decision =
        sidecar::DecideServedAttempt(state.attempt, config.attempt, board.LatestAttempt());
    if (decision.serve) return decision.attempt;
    if (decision.restart) {
      // Restarted, it finds the record and takes up the ConfigMap's attempt.
      if (std::string error = sidecar::WriteServedAttempt(config.in_place_state, decision.attempt); !error.empty()) {
        logging::Error(kComponent, "cannot keep the attempt the pod was made for", {{"error", error}});
        std::fflush(nullptr);
        std::_Exit(kExitStateNotWritten);
      }
      logging::Info(kComponent, "the job is past the attempt this pod was made for: restarting the pod",
                    {{"pod_created_for", std::to_string(config.attempt)},
                     {"configmap_attempt", std::to_string(board.LatestAttempt())},
                     {"exit_code", std::to_string(contract::kSidecarExitAttemptOver)}});
      std::fflush(nullptr);
      std::_Exit(contract::kSidecarExitAttemptOver);
    }
    *stopped_by = events.Wait();
    if (*stopped_by != sidecar::ProcessEvents::Event::kWoken) return std::nullopt;
  }
}

// In place, the ConfigMap names a later attempt: waiting polls get 410, then the process ends
// with the exit status the pod's restart rule restarts every container on. The watch and the
// reporter are not stopped: the watch would take up to a second to notice, and nothing is left
// to hand over once the attempt is over.
[[noreturn]] void EndAttempt(int64_t served, int64_t latest, sidecar::ApiServer& api, sidecar::ProbeServer& probe) {
  logging::Info(kComponent, "attempt over",
                {{"attempt", std::to_string(served)}, {"configmap_attempt", std::to_string(latest)},
                 {"exit_code", std::to_string(contract::kSidecarExitAttemptOver)}});
  api.Stop();  // answers every waiting poll from the board, which holds the later attempt: 410
  probe.Stop();
  std::fflush(nullptr);
  std::_Exit(contract::kSidecarExitAttemptOver);
}

// A rank stalled (--stall-timeout-seconds): the reason goes where the kubelet takes the
// container's termination message from, and the exit status tells the operator to end the
// attempt as Stalled.
[[noreturn]] void EndStalled(const sidecar::Config& config, const std::string& reason) {
  logging::Error(kComponent, "a rank stalled; ending the attempt",
                 {{"reason", reason}, {"exit_code", std::to_string(contract::kSidecarExitStalled)}});
  if (std::string error = sidecar::WriteTerminationMessage(config.termination_log, reason); !error.empty()) {
    logging::Warn(kComponent, "the stall's reason is only in the log", {{"error", error}});
  }
  std::fflush(nullptr);
  std::_Exit(contract::kSidecarExitStalled);
}

// The trainers' progress reports (docs/contracts.md, "Progress"): received on the API's port,
// shown on GET /v1/progress, watched for stalls when asked (on pod 0 with NCCL's health report
// too), and put on pod 0 by its sidecar.
struct Progress {
  Progress(const sidecar::Config& config, std::shared_ptr<kube::Client> client)
      : listener(board, config.world_size) {
    if (config.stall_timeout_seconds > 0) {
      const std::chrono::seconds timeout(config.stall_timeout_seconds);
      sidecar::StallWatch::OtherReason nccl;
      // NCCL's health report speaks for the whole job, so pod 0 alone asks (README, "NCCL's health report").
      if (config.index == 0) {
        ras = std::make_unique<sidecar::RasPoller>(sidecar::RasPollerOptions{.timeout = timeout});
        nccl = [poller = ras.get()](std::chrono::steady_clock::time_point now) { return poller->Poll(now); };
      }
      watch = std::make_unique<sidecar::StallWatch>(
          board, timeout, [&config](const std::string& reason) { EndStalled(config, reason); }, std::move(nccl));
    }
    if (client && config.index == 0) annotator = std::make_unique<sidecar::ProgressAnnotator>(client, config, board);
  }
  void Start() {
    listener.Start();
    if (ras) ras->Start();
    if (watch) watch->Start();
    if (annotator) annotator->Start();
  }
  // What must not act after a stop signal: the stall watch (a silence from now on is the stop's,
  // not a stall), NCCL's report poller and the listener. The annotator is left to the process's
  // end: its next write may wait on the API server.
  void Disarm() {
    if (watch) watch->Stop();
    if (ras) ras->Stop();
    listener.Stop();
  }

  sidecar::ProgressBoard board;
  sidecar::ProgressListener listener;
  std::unique_ptr<sidecar::RasPoller> ras;  // pod 0 with the stall watch
  std::unique_ptr<sidecar::StallWatch> watch;
  std::unique_ptr<sidecar::ProgressAnnotator> annotator;
};

void StopAll(sidecar::IdSource& source, sidecar::IdBoard& board, sidecar::ApiServer& api, sidecar::ProbeServer& probe) {
  source.Drain();  // a root whose posted id is not on its pod yet keeps reporting it a while
  board.Close();   // answers every waiting long-poll (503) so the servers can stop at once
  source.Stop();
  api.Stop();
  probe.Stop();
}

// A stop signal. The kubelet sends one when the pod ends and when it restarts the pod in place
// (its trainer failed), and the pod's next start waits for this process to end. What must outlive
// the trainer is done first: a root's posted id onto its pod (Drain), the waiting polls answered.
// Then the process ends without joining the threads that talk to the API server: a ConfigMap
// watch notices a stop only at libcurl's next progress call, up to a second later (0.15 to 1.0 s
// measured), and none of them holds anything left to hand over.
[[noreturn]] void EndOnSignal(sidecar::IdSource& source, sidecar::IdBoard& board, sidecar::ApiServer* api,
                              sidecar::ProbeServer& probe) {
  source.Drain();
  board.Close();
  if (api) api->Stop();
  probe.Stop();
  logging::Info(kComponent, "stopped");
  std::fflush(nullptr);
  std::_Exit(0);
}

const char* SignalName(sidecar::ProcessEvents::Event event) {
  return event == sidecar::ProcessEvents::Event::kSigint ? "SIGINT" : "SIGTERM";
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
  if (std::holds_alternative<sidecar::ShowVersion>(parsed)) {
    std::fputs(sidecar::VersionText().c_str(), stdout);
    return 0;
  }
  if (auto* error = std::get_if<sidecar::ConfigError>(&parsed)) {
    std::fprintf(stderr, "nccl-sidecar: %s\n", error->message.c_str());
    return kExitBadConfig;
  }
  sidecar::Config config = std::get<sidecar::Config>(std::move(parsed));
  logging::Configure(config.log_format, config.log_level);
  const bool in_place = !config.in_place_state.empty();
  sidecar::ServedAttemptFile state;
  if (in_place) {
    state = sidecar::ReadServedAttempt(config.in_place_state);
    if (!state.error.empty()) {
      std::fprintf(stderr, "nccl-sidecar: %s=%s: %s (the operator mounts an emptyDir there)\n",
                   std::string(contract::kSidecarStateFlag).c_str(), config.in_place_state.c_str(), state.error.c_str());
      return kExitBadConfig;
    }
    // For the next start only: this one still decides on what it read (served_attempt.h).
    if (auto entered = sidecar::AttemptEnteredAtStart(state.attempt, config.attempt)) {
      if (std::string error = sidecar::WriteServedAttempt(config.in_place_state, *entered); !error.empty()) {
        std::fprintf(stderr, "nccl-sidecar: cannot record the attempt the pod entered: %s\n", error.c_str());
        return kExitStateNotWritten;
      }
    }
  }

  sidecar::ProcessEvents events;  // blocks SIGTERM/SIGINT before any thread starts

  sidecar::IdBoard board;
  std::shared_ptr<kube::Client> client;  // Kubernetes mode
  auto made = sidecar::MakeIdSource(config, board, &client);
  if (auto* error = std::get_if<sidecar::ConfigError>(&made)) {
    std::fprintf(stderr, "nccl-sidecar: cannot configure the Kubernetes client: %s\n", error->message.c_str());
    return kExitBadConfig;
  }
  sidecar::IdSource& source = *std::get<std::unique_ptr<sidecar::IdSource>>(made);

  sidecar::ProbeServer probe(source);
  int probe_port = probe.Bind(config.probe_listen);
  if (probe_port >= 0) probe.Start();
  if (in_place && probe_port >= 0) {
    sidecar::ProcessEvents::Event stopped_by{};
    std::optional<int64_t> attempt = AwaitAttemptToServe(config, state, board, source, events, probe_port, &stopped_by);
    if (!attempt) {
      logging::Info(kComponent, "stopping", {{"signal", SignalName(stopped_by)}, {"serving", "none yet"}});
      EndOnSignal(source, board, nullptr, probe);
    }
    if (std::string error = sidecar::WriteServedAttempt(config.in_place_state, *attempt); !error.empty()) {
      // Serving without the record would let a restart of this pod serve the same attempt again.
      logging::Error(kComponent, "cannot keep the attempt served; not serving it", {{"error", error}});
      source.Stop();
      probe.Stop();
      return kExitStateNotWritten;
    }
    logging::Info(kComponent, "serving attempt",
                  {{"attempt", std::to_string(*attempt)}, {"pod_created_for", std::to_string(config.attempt)},
                   {"state_file", config.in_place_state + "/" + sidecar::kServedAttemptFile}});
    config.attempt = *attempt;  // no thread reads it yet: the API server and the reporter start below
  }
  Progress progress(config, client);
  sidecar::ApiServer api(config, board, source);
  int api_port = probe_port >= 0 ? api.Bind(config.listen) : -1;
  if (api_port < 0 || probe_port < 0) {
    logging::Error(kComponent, "cannot listen; is another sidecar running?",
                   {{"listen", Address(config.listen.host, config.listen.port)},
                    {"probe_listen", Address(config.probe_listen.host, config.probe_listen.port)}});
    StopAll(source, board, api, probe);
    return kExitBindFailed;
  }
  // Progress is an extra: without its UDP port the ids are still served.
  if (std::string error; progress.listener.Bind({config.listen.host, api_port}, &error) < 0) {
    logging::Warn(kComponent, "cannot receive progress reports", {{"listen", Address(config.listen.host, api_port)},
                                                                   {"error", error}});
  }
  api.ServeProgress(progress.board, progress.listener);
  logging::Info(kComponent, "started",
                {{"job", config.job}, {"index", std::to_string(config.index)},
                 {"attempt", std::to_string(config.attempt)}, {"root", config.root() ? "true" : "false"},
                 {"mode", config.standalone ? "standalone" : "kubernetes"},
                 {"listen", Address(config.listen.host, api_port)},
                 {"probe_listen", Address(config.probe_listen.host, probe_port)},
                 {"stall_timeout_seconds", std::to_string(config.stall_timeout_seconds)}});

  api.Start();
  source.Start();
  progress.Start();

  sidecar::ProcessEvents::Event event;
  while ((event = events.Wait()) == sidecar::ProcessEvents::Event::kWoken) {
    const int64_t latest = board.LatestAttempt();
    if (in_place && sidecar::AttemptOver(config.attempt, latest)) EndAttempt(config.attempt, latest, api, probe);
  }
  logging::Info(kComponent, "stopping", {{"signal", SignalName(event)}});
  progress.Disarm();
  EndOnSignal(source, board, &api, probe);
}

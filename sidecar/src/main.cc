// nccl-sidecar: wires the id API, the probes and the id source of its mode (id_source.h)
// together, and stops them all on SIGTERM.
#include <malloc.h>
#include <pthread.h>
#include <signal.h>

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
#include "id_board.h"
#include "id_source.h"
#include "logging/log.h"
#include "make_id_source.h"
#include "probe_server.h"

namespace {

constexpr char kComponent[] = "sidecar";
constexpr int kExitBindFailed = 1;
constexpr int kExitBadConfig = 2;

std::optional<std::string> GetEnv(std::string_view name) {
  const char* value = std::getenv(std::string(name).c_str());
  if (!value) return std::nullopt;
  return std::string(value);
}

std::string Address(const std::string& host, int port) { return host + ":" + std::to_string(port); }

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
  auto made = sidecar::MakeIdSource(config, board);
  if (auto* error = std::get_if<sidecar::ConfigError>(&made)) {
    std::fprintf(stderr, "nccl-sidecar: cannot configure the Kubernetes client: %s\n", error->message.c_str());
    return kExitBadConfig;
  }
  sidecar::IdSource& source = *std::get<std::unique_ptr<sidecar::IdSource>>(made);

  sidecar::ApiServer api(config, board, source);
  sidecar::ProbeServer probe(source);
  int api_port = api.Bind(config.listen);
  int probe_port = probe.Bind(config.probe_listen);
  if (api_port < 0 || probe_port < 0) {
    logging::Error(kComponent, "cannot listen; is another sidecar running?",
                   {{"listen", Address(config.listen.host, config.listen.port)},
                    {"probe_listen", Address(config.probe_listen.host, config.probe_listen.port)}});
    return kExitBindFailed;
  }
  logging::Info(kComponent, "started",
                {{"job", config.job}, {"index", std::to_string(config.index)},
                 {"attempt", std::to_string(config.attempt)}, {"root", config.root() ? "true" : "false"},
                 {"mode", config.standalone ? "standalone" : "kubernetes"},
                 {"listen", Address(config.listen.host, api_port)},
                 {"probe_listen", Address(config.probe_listen.host, probe_port)}});

  api.Start();
  probe.Start();
  source.Start();

  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  logging::Info(kComponent, "stopping", {{"signal", signal_number == SIGTERM ? "SIGTERM" : "SIGINT"}});
  source.Drain();  // a root whose posted id is not on its pod yet keeps reporting it a while
  board.Close();   // answers every waiting long-poll (503) so the servers can stop at once
  source.Stop();
  api.Stop();
  probe.Stop();
  logging::Info(kComponent, "stopped");
  return 0;
}

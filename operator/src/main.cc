// nccl-operator: flags, signals, leader election, and the HTTP endpoints around the
// controller. Exits 0 on SIGTERM/SIGINT, 1 on bad flags or a lost lease (so the Deployment
// restarts it as a follower instead of acting twice).
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <random>
#include <thread>

#include "controller/controller.h"
#include "flags.h"
#include "http/server.h"
#include "kube/config.h"
#include "kube/leader_election.h"
#include "logging/log.h"
#include "metrics/metrics.h"

namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

std::string Identity() {
  std::string base = Env("POD_NAME");
  if (base.empty()) {
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    base = host;
  }
  std::random_device rd;
  return base + "_" + std::to_string(getpid()) + "_" + std::to_string(rd() % 1000000);
}

// Starts /metrics or /healthz+/readyz unless the address is "0".
std::unique_ptr<ncclop::http::Server> Serve(const std::string& address, const char* what,
                                            std::vector<std::pair<std::string, ncclop::http::Handler>> routes) {
  if (address == "0" || address.empty()) return nullptr;
  auto bind = ncclop::http::ParseBindAddress(address);
  if (!bind.ok()) {
    std::cerr << "nccl-operator: " << bind.status().message() << "\n";
    std::exit(1);
  }
  auto server = std::make_unique<ncclop::http::Server>();
  for (auto& [path, handler] : routes) server->Handle(path, std::move(handler));
  if (auto s = server->Start(*bind); !s.ok()) {
    logging::Error("operator", s.message());
    std::exit(1);
  }
  logging::Info("operator", std::string("serving ") + what,
                {{"address", bind->host + ":" + std::to_string(server->port())}});
  return server;
}

}  // namespace

int main(int argc, char** argv) {
  // glibc gives each busy thread its own malloc arena (up to 8 per core); freed JSON of one
  // reconcile then sits in that thread's arena instead of serving the next. Two arenas keep
  // the peak RSS ~1 MiB lower at 100 jobs x 8 pods; reconciles wait on the API, not on malloc.
  // MALLOC_ARENA_MAX in the environment still wins.
  if (std::getenv("MALLOC_ARENA_MAX") == nullptr) mallopt(M_ARENA_MAX, 2);
  auto flags = ncclop::ParseFlags(std::vector<std::string>(argv + 1, argv + argc));
  if (!flags.ok()) {
    std::cerr << "nccl-operator: " << flags.status().message() << "\n";
    return 2;
  }
  if (flags->help) {
    std::cout << ncclop::HelpText();
    return 0;
  }
  logging::Configure(flags->log_format, flags->log_level);

  // Signals are taken by one thread with sigwait; every other thread inherits the block.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto config = kube::Load(flags->kubeconfig);
  if (!config.ok()) {
    logging::Error("operator", "cannot find the Kubernetes API", {{"error", config.status().ToString()}});
    return 1;
  }
  ncclop::metrics::Metrics metrics;
  kube::ClientOptions client_options{.user_agent = "nccl-operator/0.1"};
  client_options.on_response = [&metrics](std::string_view method, int code, double seconds) {
    metrics.ApiResponse(method, code, seconds);
  };
  auto client = std::make_shared<kube::Client>(*config, client_options);
  logging::Info("operator", "starting", {{"api", config->server}, {"config", config->source},
                                         {"sidecarImage", flags->pod.sidecar_image}});

  ncclop::controller::Controller controller(
      client, {flags->namespace_, flags->concurrency, flags->pod}, &metrics);
  std::atomic<bool> leading{!flags->leader_elect};

  auto metrics_server = Serve(flags->metrics_bind_address, "metrics",
                              {{"/metrics", [&] {
                                  return ncclop::http::Reply{200, "text/plain; version=0.0.4; charset=utf-8",
                                                             metrics.Render(controller.JobsByState(), leading.load(),
                                                                            controller.QueueDepth())};
                                }}});
  auto health_server = Serve(
      flags->health_probe_bind_address, "health probes",
      {{"/healthz", [] { return ncclop::http::Reply{200, "text/plain", "ok\n"}; }},
       {"/readyz", [&] {
          // A follower is ready (it is waiting, as it should); a leader once its caches are full.
          bool ready = !leading.load() || controller.Synced();
          return ncclop::http::Reply{ready ? 200 : 503, "text/plain", ready ? "ok\n" : "caches not synced\n"};
        }}});

  std::mutex mu;
  std::condition_variable cv;
  bool shutdown = false;
  int exit_code = 0;
  auto finish = [&](int code) {
    std::lock_guard<std::mutex> lock(mu);
    if (!shutdown) exit_code = code;
    shutdown = true;
    cv.notify_all();
  };
  std::thread signal_thread([&] {
    int sig = 0;
    sigwait(&signals, &sig);
    logging::Info("operator", "signal received; shutting down", {{"signal", std::to_string(sig)}});
    finish(0);
  });
  signal_thread.detach();

  std::jthread elector_thread;
  if (flags->leader_elect) {
    kube::LeaderElectionConfig le;
    le.lease_name = flags->leader_election_id;
    le.lease_namespace = !flags->leader_election_namespace.empty() ? flags->leader_election_namespace
                         : !Env("POD_NAMESPACE").empty()          ? Env("POD_NAMESPACE")
                         : !flags->namespace_.empty()             ? flags->namespace_
                                                                  : config->default_namespace;
    le.identity = Identity();
    le.on_started_leading = [&] {
      logging::Info("operator", "became leader; starting the controller");
      leading = true;
      controller.Start();
    };
    le.on_stopped_leading = [&] {
      if (leading.exchange(false)) {
        logging::Warn("operator", "leadership ended");
        finish(1);  // a clean shutdown got here first and keeps its 0
      }
    };
    le.on_new_leader = [](const std::string& id) { logging::Info("operator", "leader observed", {{"leader", id}}); };
    logging::Info("operator", "waiting for the leader lease",
                  {{"lease", le.lease_namespace + "/" + le.lease_name}, {"identity", le.identity}});
    auto elector = std::make_shared<kube::LeaderElector>(client, le);
    elector_thread = std::jthread([elector, &finish](std::stop_token stop) {
      kube::Status s = elector->Run(stop);
      if (!s.ok()) logging::Warn("operator", "leader election ended", {{"error", s.ToString()}});
      finish(stop.stop_requested() ? 0 : 1);
    });
  } else {
    controller.Start();
  }

  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return shutdown; });
  }
  // Order: stop acting first, then give up the lease so a successor can start at once.
  controller.Stop();
  if (elector_thread.joinable()) {
    elector_thread.request_stop();
    elector_thread.join();
  }
  if (metrics_server) metrics_server->Stop();
  if (health_server) health_server->Stop();
  logging::Info("operator", "stopped", {{"exitCode", std::to_string(exit_code)}});
  return exit_code;
}

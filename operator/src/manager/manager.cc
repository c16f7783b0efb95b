#include "manager/manager.h"

#include <unistd.h>

#include <cstdlib>
#include <random>
#include <vector>

#include "kube/leader_election.h"
#include "logging/log.h"

namespace ncclop::manager {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// This process's name in the Lease: the pod's name, pid and a random suffix.
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

bool Disabled(const std::string& address) { return address == "0" || address.empty(); }

std::shared_ptr<kube::Client> MakeClient(const kube::Config& config, metrics::Metrics* metrics) {
  kube::ClientOptions options;
  options.user_agent = "nccl-operator/0.1";
  options.on_response = [metrics](std::string_view method, int code, double seconds) {
    metrics->ApiResponse(method, code, seconds);
  };
  return std::make_shared<kube::Client>(config, options);
}

using Routes = std::vector<std::pair<std::string, http::Handler>>;

// Starts a server for `routes` unless the address is "0" or empty (then *out stays null).
kube::Status Serve(const std::string& address, const char* what, Routes routes, std::unique_ptr<http::Server>* out) {
  if (Disabled(address)) return kube::Status::Ok();
  auto bind = http::ParseBindAddress(address);
  if (!bind.ok()) return bind.status();
  auto server = std::make_unique<http::Server>();
  for (auto& [path, handler] : routes) server->Handle(path, std::move(handler));
  if (auto s = server->Start(*bind); !s.ok()) return s;
  logging::Info("operator", std::string("serving ") + what,
                {{"address", bind->host + ":" + std::to_string(server->port())}});
  *out = std::move(server);
  return kube::Status::Ok();
}

}  // namespace

Manager::Manager(const Flags& flags, const kube::Config& config)
    : flags_(flags),
      config_(config),
      client_(MakeClient(config, &metrics_)),
      controller_(client_,
                  {.namespace_ = flags.namespace_,
                   .concurrency = flags.concurrency,
                   .pod_options = flags.pod,
                   .gang_api_recheck = std::chrono::seconds(flags.gang_api_recheck_seconds),
                   .on_gang_api_changed = [this] { Shutdown(1); }},
                  &metrics_),
      leading_(!flags.leader_elect) {}

Manager::~Manager() {
  Shutdown(0);
  controller_.Stop();
  if (elector_thread_.joinable()) {
    elector_thread_.request_stop();
    elector_thread_.join();
  }
}

kube::Status Manager::CheckEndpoints(const Flags& flags) {
  for (const std::string* address : {&flags.metrics_bind_address, &flags.health_probe_bind_address}) {
    if (Disabled(*address)) continue;
    if (auto bind = http::ParseBindAddress(*address); !bind.ok()) return bind.status();
  }
  return kube::Status::Ok();
}

kube::Status Manager::Start() {
  if (auto s = ServeEndpoints(); !s.ok()) return s;
  if (flags_.leader_elect) {
    StartLeaderElection();
  } else {
    controller_.Start();
  }
  return kube::Status::Ok();
}

kube::Status Manager::ServeEndpoints() {
  Routes metrics_routes = {{"/metrics", [this] {
                              return http::Reply{200, "text/plain; version=0.0.4; charset=utf-8",
                                                 metrics_.Render(controller_.JobsByState(), leading_.load(),
                                                                 controller_.QueueDepth())};
                            }}};
  if (auto s = Serve(flags_.metrics_bind_address, "metrics", std::move(metrics_routes), &metrics_server_); !s.ok()) {
    return s;
  }
  Routes health_routes = {
      {"/healthz", [] { return http::Reply{200, "text/plain", "ok\n"}; }},
      {"/readyz", [this] {
         // A follower is ready (it is waiting, as it should); a leader once its caches are full.
         const bool ready = !leading_.load() || controller_.Synced();
         return http::Reply{ready ? 200 : 503, "text/plain", ready ? "ok\n" : "caches not synced\n"};
       }}};
  return Serve(flags_.health_probe_bind_address, "health probes", std::move(health_routes), &health_server_);
}

std::string Manager::LeaseNamespace() const {
  if (!flags_.leader_election_namespace.empty()) return flags_.leader_election_namespace;
  if (std::string pod_namespace = Env("POD_NAMESPACE"); !pod_namespace.empty()) return pod_namespace;
  if (!flags_.namespace_.empty()) return flags_.namespace_;
  return config_.default_namespace;
}

void Manager::StartLeaderElection() {
  kube::LeaderElectionConfig le;
  le.lease_name = flags_.leader_election_id;
  le.lease_namespace = LeaseNamespace();
  le.identity = Identity();
  le.on_started_leading = [this] {
    logging::Info("operator", "became leader; starting the controller");
    leading_ = true;
    controller_.Start();
  };
  le.on_stopped_leading = [this] {
    if (leading_.exchange(false)) {
      logging::Warn("operator", "leadership ended");
      Shutdown(1);  // a clean shutdown got here first and keeps its 0
    }
  };
  le.on_new_leader = [](const std::string& id) { logging::Info("operator", "leader observed", {{"leader", id}}); };
  logging::Info("operator", "waiting for the leader lease",
                {{"lease", le.lease_namespace + "/" + le.lease_name}, {"identity", le.identity}});
  auto elector = std::make_shared<kube::LeaderElector>(client_, le);
  elector_thread_ = std::jthread([this, elector](std::stop_token stop) {
    kube::Status s = elector->Run(stop);
    if (!s.ok()) logging::Warn("operator", "leader election ended", {{"error", s.ToString()}});
    Shutdown(stop.stop_requested() ? 0 : 1);
  });
}

void Manager::Shutdown(int exit_code) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!shutdown_) exit_code_ = exit_code;
  shutdown_ = true;
  cv_.notify_all();
}

int Manager::Wait() {
  {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return shutdown_; });
  }
  // Order: stop acting first, then give up the lease so a successor can start at once.
  controller_.Stop();
  if (elector_thread_.joinable()) {
    elector_thread_.request_stop();
    elector_thread_.join();
  }
  if (metrics_server_) metrics_server_->Stop();
  if (health_server_) health_server_->Stop();
  std::lock_guard<std::mutex> lock(mu_);
  return exit_code_;
}

}  // namespace ncclop::manager

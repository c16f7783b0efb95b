#include "manager/manager.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <random>
#include <vector>

#include "http/self_signed.h"
#include "kube/leader_election.h"
#include "logging/log.h"
#include "manager/metrics_access.h"

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

// The host:port of the API server's URL (rest_client_requests_total's host, as client-go
// takes it from its base URL).
std::string ServerHost(const std::string& server) {
  std::string host = server;
  if (auto scheme = host.find("://"); scheme != std::string::npos) host = host.substr(scheme + 3);
  return host.substr(0, host.find('/'));
}

std::shared_ptr<kube::Client> MakeClient(const kube::Config& config, metrics::Metrics* metrics) {
  kube::ClientOptions options;
  options.user_agent = "nccl-operator/0.1";
  options.on_response = [metrics, host = ServerHost(config.server)](std::string_view method, int code,
                                                                      double seconds) {
    metrics->ApiResponse(method, code, seconds, host);
  };
  return std::make_shared<kube::Client>(config, options);
}

using Routes = std::vector<std::pair<std::string, http::Handler>>;

// How a server is secured: TLS (a certificate and key in PEM) and a gate; none for plain HTTP.
struct Secured {
  std::optional<http::CertificateAndKey> tls;
  http::Gate gate;
};

// The certificate for --metrics-secure: tls.crt and tls.key of --metrics-cert-dir, else a
// self-signed one made now.
kube::Result<http::CertificateAndKey> MetricsCertificate(const std::string& dir) {
  if (dir.empty()) return http::SelfSignedCertificate("nccl-operator-metrics");
  auto read = [](const std::string& path) -> std::optional<std::string> {
    std::ifstream in(path);
    if (!in) return std::nullopt;
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  };
  auto cert = read(dir + "/tls.crt");
  auto key = read(dir + "/tls.key");
  if (!cert || !key) {
    return kube::Status::Local("InvalidFlag", "--metrics-cert-dir=" + dir + ": cannot read tls.crt and tls.key there");
  }
  return http::CertificateAndKey{*cert, *key};
}

// Starts a server for `routes` unless the address is "0" or empty (then *out stays null).
kube::Status Serve(const std::string& address, const char* what, Routes routes, std::unique_ptr<http::Server>* out,
                   Secured secured = {}) {
  if (Disabled(address)) return kube::Status::Ok();
  auto bind = http::ParseBindAddress(address);
  if (!bind.ok()) return bind.status();
  auto server = std::make_unique<http::Server>();
  for (auto& [path, handler] : routes) server->Handle(path, std::move(handler));
  if (secured.tls) {
    if (auto s = server->UseTls(secured.tls->cert_pem, secured.tls->key_pem); !s.ok()) return s;
  }
  if (secured.gate) server->SetGate(std::move(secured.gate));
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
                   .status_counts_interval = std::chrono::seconds(flags.status_counts_interval_seconds),
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
                                                 metrics_.Render(Scrape())};
                            }}};
  Secured secured;
  if (flags_.metrics_secure && !Disabled(flags_.metrics_bind_address)) {
    auto certificate = MetricsCertificate(flags_.metrics_cert_dir);
    if (!certificate.ok()) return certificate.status();
    secured.tls = *certificate;
    auto access = std::make_shared<MetricsAccess>(client_);
    secured.gate = [access](const std::string& authorization) { return access->Check(authorization); };
  }
  if (auto s = Serve(flags_.metrics_bind_address, flags_.metrics_secure ? "metrics over HTTPS" : "metrics",
                     std::move(metrics_routes), &metrics_server_, std::move(secured));
      !s.ok()) {
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

metrics::Scrape Manager::Scrape() const {
  metrics::Scrape now;
  now.jobs_by_state = controller_.JobsByState();
  now.jobs = controller_.JobSamples();
  now.leader = leading_.load();
  now.queue_ready = controller_.QueueDepth();
  const kube::WorkQueueLoad load = controller_.QueueLoad();
  now.queue_waiting = load.waiting;
  now.unfinished_seconds = load.unfinished_seconds;
  now.longest_running_seconds = load.longest_seconds;
  now.max_concurrent_reconciles = controller_.Concurrency();
  if (flags_.leader_elect) now.lease_name = flags_.leader_election_id;
  return now;
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

// The running operator around the controller: the API client (its responses counted in the
// metrics), leader election (the controller starts when this process leads, and the process
// ends when it stops leading, so the Deployment restarts it as a follower instead of two
// acting at once), and the /metrics and /healthz, /readyz endpoints. main() parses flags and
// signals and hands over to Start() and Wait().
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "controller/controller.h"
#include "flags.h"
#include "http/server.h"
#include "kube/client.h"
#include "kube/config.h"
#include "metrics/metrics.h"

namespace ncclop::manager {

class Manager {
 public:
  Manager(const Flags& flags, const kube::Config& config);
  ~Manager();

  // An error when --metrics-bind-address or --health-probe-bind-address is not an address.
  static kube::Status CheckEndpoints(const Flags& flags);

  // Serves the endpoints and starts leading (or waiting for the lease); an error when an
  // endpoint cannot be served.
  kube::Status Start();
  // Blocks until Shutdown or a lost lease; stops acting first, then gives up the lease so a
  // successor can start at once. Returns the exit code: 0 after Shutdown(0), 1 after the
  // lease was lost.
  int Wait();
  // From any thread (the signal thread): the first call's code wins.
  void Shutdown(int exit_code);

 private:
  kube::Status ServeEndpoints();
  void StartLeaderElection();
  std::string LeaseNamespace() const;
  metrics::Scrape Scrape() const;  // what /metrics reads from the running operator

  Flags flags_;
  kube::Config config_;
  metrics::Metrics metrics_;  // before the client, which reports every response to it
  std::shared_ptr<kube::Client> client_;
  controller::Controller controller_;
  std::atomic<bool> leading_;
  std::unique_ptr<http::Server> metrics_server_;
  std::unique_ptr<http::Server> health_server_;
  std::jthread elector_thread_;

  std::mutex mu_;
  std::condition_variable cv_;
  bool shutdown_ = false;  // guarded by mu_
  int exit_code_ = 0;      // guarded by mu_
};

}  // namespace ncclop::manager

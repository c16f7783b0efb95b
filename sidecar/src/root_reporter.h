// The root sidecar's report to the API server: patches its own pod with the id annotations
// (the operator copies them into the ConfigMap). Retries with backoff until the patch sticks
// or the sidecar stops, on its own thread so the trainer's POST is answered at once. A sidecar
// told to stop while an id is not on the pod yet waits for the report first (WaitReported), so
// a root trainer that ends early (a CPU job) does not take its attempt's id with it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>

#include "config.h"
#include "kube/client.h"

namespace sidecar {

class RootReporter {
 public:
  RootReporter(std::shared_ptr<kube::Client> client, const Config& config);
  ~RootReporter();  // stops and joins

  void Start();
  void Report(int64_t attempt, const std::string& raw_id);
  void Stop();
  bool reported() const;  // the annotation is on the pod
  // True once no id waits to be reported (at once when none was posted); false after timeout.
  bool WaitReported(std::chrono::milliseconds timeout);

 private:
  struct Pending {
    int64_t attempt = 0;
    std::string raw_id;
  };
  void Run(std::stop_token stop);
  bool PatchOnce(const Pending& pending);

  std::shared_ptr<kube::Client> client_;
  const Config& config_;
  mutable std::mutex mu_;
  std::condition_variable_any wake_;
  std::optional<Pending> pending_;  // guarded by mu_
  bool reported_ = false;           // guarded by mu_
  std::jthread thread_;
};

}  // namespace sidecar

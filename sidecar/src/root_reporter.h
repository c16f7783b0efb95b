// The root sidecar's report to the API server: patches its own pod with the id annotations
// (the operator copies them into the ConfigMap). Retries with backoff until the patch sticks
// or the sidecar stops, on its own thread; the trainer's POST waits for Reported() (id_source.h,
// IdSource::Kept), so an id is never only in the memory of a sidecar that answered for it. A
// sidecar told to stop while an id is not on the pod yet keeps reporting it first
// (WaitReported), for a trainer that ended without waiting for its answer. First of all it reads
// back the id its pod already carries for the attempt (a restarted sidecar: Recall), retrying
// until the API server answers.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>

#include "config.h"
#include "id_source.h"
#include "kube/client.h"

namespace sidecar {

class RootReporter {
 public:
  // `on_reported` (may be empty) runs on the reporter's thread after each id put on the pod.
  RootReporter(std::shared_ptr<kube::Client> client, const Config& config, std::function<void()> on_reported = {});
  ~RootReporter();  // stops and joins

  void Start();
  void Report(int64_t attempt, const std::string& raw_id);
  void Stop();
  bool Reported(int64_t attempt, const std::string& raw_id) const;  // this id is on the pod
  // The id the pod carried for `attempt` when the reporter started (IdSource::Recall).
  RecalledId Recall(int64_t attempt) const;
  // True once no id waits to be reported (at once when none was posted); false after timeout.
  bool WaitReported(std::chrono::milliseconds timeout);

 private:
  struct Pending {
    int64_t attempt = 0;
    std::string raw_id;
  };
  void Run(std::stop_token stop);
  bool PatchOnce(const Pending& pending);
  // Reads the pod's id annotations once; false to try again later.
  bool ReadBackOnce();

  std::shared_ptr<kube::Client> client_;
  const Config& config_;
  mutable std::mutex mu_;
  std::condition_variable_any wake_;
  std::optional<Pending> pending_;  // guarded by mu_
  std::optional<Pending> reported_;  // guarded by mu_: the last id put on the pod
  bool read_back_ = false;           // guarded by mu_: the pod's annotations were read at start
  std::function<void()> on_reported_;
  std::jthread thread_;
};

}  // namespace sidecar

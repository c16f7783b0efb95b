// An IdSource whose answers the test sets, for what consumes the interface (the API server's
// POST path, the probes' /readyz). By default it is ready and keeps an id as soon as it is
// handed over, with nothing recalled from an earlier run.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "id_source.h"

namespace sidecar {

class FakeIdSource : public IdSource {
 public:
  void Start() override {}
  void Stop() override {}
  bool Ready() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return ready_;
  }
  void Keep(int64_t attempt, const std::string& id) override {
    std::lock_guard<std::mutex> lock(mu_);
    handed_.emplace_back(attempt, id);
  }
  bool Kept(int64_t attempt, const std::string& id) const override {
    std::lock_guard<std::mutex> lock(mu_);
    return keep_at_once_ || kept_ == std::pair(attempt, id);
  }
  RecalledId Recall(int64_t /*attempt*/) const override {
    std::lock_guard<std::mutex> lock(mu_);
    return recalled_;
  }
  void SetOnKept(std::function<void()> on_kept) override {
    std::lock_guard<std::mutex> lock(on_kept_mu_);
    on_kept_ = std::move(on_kept);
  }

  void SetReady(bool ready) {
    std::lock_guard<std::mutex> lock(mu_);
    ready_ = ready;
  }
  // false: an id is kept only once MarkKept names it (as the reporter once it is on the pod).
  void KeepAtOnce(bool at_once) {
    std::lock_guard<std::mutex> lock(mu_);
    keep_at_once_ = at_once;
  }
  // What Recall answers from now on (as the reporter once it read the pod).
  void SetRecalled(RecalledId recalled) {
    std::lock_guard<std::mutex> lock(mu_);
    recalled_ = std::move(recalled);
  }
  // `id` of `attempt` is kept; tells the consumer, as a real source does on its own thread.
  void MarkKept(int64_t attempt, const std::string& id) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      kept_ = {attempt, id};
    }
    std::lock_guard<std::mutex> lock(on_kept_mu_);
    if (on_kept_) on_kept_();
  }
  // Every id handed to Keep, in order.
  std::vector<std::pair<int64_t, std::string>> handed() const {
    std::lock_guard<std::mutex> lock(mu_);
    return handed_;
  }

 private:
  mutable std::mutex mu_;
  bool ready_ = true;                                    // guarded by mu_
  bool keep_at_once_ = true;                             // guarded by mu_
  std::pair<int64_t, std::string> kept_;                 // guarded by mu_
  RecalledId recalled_{.read = true, .id = std::nullopt};  // guarded by mu_
  std::vector<std::pair<int64_t, std::string>> handed_;  // guarded by mu_
  std::mutex on_kept_mu_;                                // held while on_kept_ runs
  std::function<void()> on_kept_;                        // guarded by on_kept_mu_
};

}  // namespace sidecar

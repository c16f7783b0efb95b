// Capped exponential backoff with jitter, used for request retries, watch reconnects and
// leader-election retries. The delay arithmetic is a pure function so it is unit tested.
#pragma once

#include <chrono>
#include <random>
#include <stop_token>

namespace kube {

struct BackoffPolicy {
  std::chrono::milliseconds initial{200};
  std::chrono::milliseconds max{30000};
  double factor = 2.0;
  // The delay is drawn uniformly from [base * (1 - jitter), base]; 0 disables jitter.
  double jitter = 0.5;
};

// Delay before retry number `attempt` (0-based); `random01` is a uniform draw in [0, 1).
// Never above policy.max, never below policy.initial * (1 - jitter) (and never negative).
std::chrono::milliseconds BackoffDelay(const BackoffPolicy& policy, int attempt, double random01);

// Stateful helper: Next() grows the delay, Reset() after a success. Not thread-safe.
class Backoff {
 public:
  explicit Backoff(BackoffPolicy policy = {});
  std::chrono::milliseconds Next();
  void Reset() { attempt_ = 0; }
  int attempts() const { return attempt_; }

 private:
  BackoffPolicy policy_;
  int attempt_ = 0;
  std::mt19937_64 rng_;
};

// Sleeps for `d` unless `stop` is requested first. Returns false when stopped.
bool SleepFor(std::chrono::milliseconds d, std::stop_token stop);

}  // namespace kube

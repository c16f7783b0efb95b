#include "kube/backoff.h"

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <mutex>

namespace kube {

std::chrono::milliseconds BackoffDelay(const BackoffPolicy& policy, int attempt, double random01) {
  const double initial = static_cast<double>(std::max<std::int64_t>(0, policy.initial.count()));
  const double cap = static_cast<double>(std::max<std::int64_t>(0, policy.max.count()));
  const double factor = std::max(1.0, policy.factor);
  // Growing in floating point and capping before converting keeps large attempt numbers
  // from overflowing.
  double base = initial * std::pow(factor, std::max(0, attempt));
  if (!std::isfinite(base) || base > cap) base = cap;
  const double jitter = std::clamp(policy.jitter, 0.0, 1.0);
  const double r = std::clamp(random01, 0.0, 1.0);
  const double delay = base * (1.0 - jitter + jitter * r);
  return std::chrono::milliseconds(static_cast<std::int64_t>(std::min(delay, cap)));
}

Backoff::Backoff(BackoffPolicy policy) : policy_(policy), rng_(std::random_device{}()) {}

std::chrono::milliseconds Backoff::Next() {
  std::uniform_real_distribution<double> dist(0.0, 1.0);
  auto d = BackoffDelay(policy_, attempt_, dist(rng_));
  if (attempt_ < 64) ++attempt_;
  return d;
}

bool SleepFor(std::chrono::milliseconds d, std::stop_token stop) {
  std::mutex mu;
  std::condition_variable_any cv;
  std::unique_lock lock(mu);
  return !cv.wait_for(lock, stop, d, [] { return false; }) && !stop.stop_requested();
}

}  // namespace kube

// The attempt-aware store between whoever publishes the id (the ConfigMap watch, or the root
// sidecar in standalone mode) and the trainers' long-polls. It only ever moves forward: once a
// later attempt is seen, an earlier one is over and its pods are told so (stale), which is how an
// old id never reaches a new worker and a new id never reaches an old one.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

namespace sidecar {

struct PublishedId {
  int64_t attempt = 0;
  std::string id;       // the raw 128 bytes
  std::string job_uid;  // empty when the publisher did not say
};

enum class WaitOutcome {
  kReady,    // the id of the asked attempt is there
  kTimeout,  // the deadline passed first; ask again
  kStale,    // a later attempt exists: the asker's pod is over
  kClosed,   // the sidecar is shutting down
};

struct WaitResult {
  WaitOutcome outcome = WaitOutcome::kTimeout;
  PublishedId published;       // set for kReady
  int64_t latest_attempt = 0;  // the newest attempt seen (for kStale messages)
};

class IdBoard {
 public:
  // What the publisher holds now: its attempt and, once published, the id. Earlier attempts than
  // one already seen are ignored (a delayed event must not move the board back).
  void Observe(int64_t attempt, std::optional<std::string> id, std::string job_uid = {});

  WaitResult WaitFor(int64_t attempt, std::chrono::steady_clock::time_point deadline);

  // Wakes every waiter with kClosed, now and for all later calls.
  void Close();

  int64_t LatestAttempt() const;
  int Waiting() const;  // callers blocked in WaitFor (tests wait on it instead of sleeping)

 private:
  WaitResult CheckLocked(int64_t attempt) const;

  mutable std::mutex mu_;
  std::condition_variable changed_;
  int64_t latest_attempt_ = 0;           // guarded by mu_
  std::optional<std::string> id_;        // guarded by mu_; id of latest_attempt_
  std::string job_uid_;                  // guarded by mu_
  bool closed_ = false;                  // guarded by mu_
  int waiting_ = 0;                      // guarded by mu_
};

}  // namespace sidecar

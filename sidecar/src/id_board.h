// The attempt-aware store between whoever publishes the id (the ConfigMap watch, or the root
// sidecar in standalone mode) and the trainers' long-polls
// (the API server re-checks its waiting polls when told of a change). It only ever moves forward: once a
// later attempt is seen, an earlier one is over and its pods are told so (stale), which is how an
// old id never reaches a new worker and a new id never reaches an old one.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

namespace sidecar {

struct PublishedId {
  int64_t attempt = 0;
  std::string id;       // the raw ids back to back, 128 bytes each, in root order (one with one root)
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

  // What a poll for `attempt` gets now (kTimeout: nothing yet, ask again after a change).
  WaitResult Check(int64_t attempt) const;

  // Called, on the publishing thread, after every Observe() and Close(); it must not block.
  // Pass nullptr to stop (returns once a call in progress has finished).
  void SetOnChange(std::function<void()> on_change);

  // Called, on the publishing thread, after an Observe() that moved the board to a later attempt
  // (after on_change); it must not block. nullptr stops it, as for SetOnChange. In place, main()
  // learns from it which attempt to serve and when that one is over (served_attempt.h).
  void SetOnNewAttempt(std::function<void()> on_new_attempt);

  // Answers every poll with kClosed, now and for all later checks.
  void Close();

  int64_t LatestAttempt() const;

 private:
  WaitResult CheckLocked(int64_t attempt) const;

  void Changed(bool new_attempt);

  mutable std::mutex mu_;
  int64_t latest_attempt_ = 0;           // guarded by mu_
  std::optional<std::string> id_;        // guarded by mu_; id of latest_attempt_
  std::string job_uid_;                  // guarded by mu_
  bool closed_ = false;                  // guarded by mu_
  std::mutex on_change_mu_;               // held while on_change_ runs
  std::function<void()> on_change_;      // guarded by on_change_mu_
  std::function<void()> on_new_attempt_;  // guarded by on_change_mu_
};

}  // namespace sidecar

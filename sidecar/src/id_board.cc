#include "id_board.h"

#include <utility>

namespace sidecar {

void IdBoard::Observe(int64_t attempt, std::optional<std::string> id, std::string job_uid) {
  bool new_attempt = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (attempt < latest_attempt_) return;
    if (attempt > latest_attempt_) {
      new_attempt = true;
      latest_attempt_ = attempt;
      id_.reset();
      job_uid_.clear();
    }
    // A publisher may show the attempt before its id; never forget an id we already have for it.
    if (id) id_ = std::move(id);
    if (!job_uid.empty()) job_uid_ = std::move(job_uid);
  }
  Changed(new_attempt);
}

WaitResult IdBoard::CheckLocked(int64_t attempt) const {
  WaitResult result;
  result.latest_attempt = latest_attempt_;
  if (closed_) {
    result.outcome = WaitOutcome::kClosed;
  } else if (latest_attempt_ > attempt) {
    result.outcome = WaitOutcome::kStale;
  } else if (latest_attempt_ == attempt && id_) {
    result.outcome = WaitOutcome::kReady;
    result.published = PublishedId{latest_attempt_, *id_, job_uid_};
  } else {
    result.outcome = WaitOutcome::kTimeout;
  }
  return result;
}

WaitResult IdBoard::Check(int64_t attempt) const {
  std::lock_guard<std::mutex> lock(mu_);
  return CheckLocked(attempt);
}

void IdBoard::SetOnChange(std::function<void()> on_change) {
  std::lock_guard<std::mutex> lock(on_change_mu_);
  on_change_ = std::move(on_change);
}

void IdBoard::SetOnNewAttempt(std::function<void()> on_new_attempt) {
  std::lock_guard<std::mutex> lock(on_change_mu_);
  on_new_attempt_ = std::move(on_new_attempt);
}

void IdBoard::Changed(bool new_attempt) {
  std::lock_guard<std::mutex> lock(on_change_mu_);
  if (on_change_) on_change_();
  if (new_attempt && on_new_attempt_) on_new_attempt_();
}

void IdBoard::Close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
  }
  Changed(/*new_attempt=*/false);
}

int64_t IdBoard::LatestAttempt() const {
  std::lock_guard<std::mutex> lock(mu_);
  return latest_attempt_;
}

}  // namespace sidecar

#include "kube/workqueue.h"

#include <algorithm>
#include <cmath>

namespace kube {

TokenBucket::TokenBucket(double qps, int burst, Clock::time_point now)
    : qps_(qps > 0 ? qps : 1e-9), burst_(std::max(1, burst)), tokens_(burst_), last_(now) {}

TokenBucket::Clock::duration TokenBucket::Reserve(Clock::time_point now) {
  if (now > last_) {
    const double elapsed = std::chrono::duration<double>(now - last_).count();
    tokens_ = std::min(burst_, tokens_ + elapsed * qps_);
    last_ = now;
  }
  tokens_ -= 1.0;
  if (tokens_ >= 0) return Clock::duration::zero();
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(-tokens_ / qps_));
}

WorkQueue::WorkQueue(WorkQueueOptions options)
    : options_(options), bucket_(options.qps, options.burst, Clock::now()) {}

WorkQueue::~WorkQueue() { ShutDown(); }

void WorkQueue::AddLocked(const std::string& key) {
  if (shutting_down_) return;
  if (options_.on_add) options_.on_add();
  if (!dirty_.insert(key).second) return;    // already waiting: merge
  if (options_.on_queued) options_.on_queued();
  added_at_[key] = Clock::now();
  if (processing_.count(key)) return;        // Done() will queue it again
  PushLocked(key);
}

void WorkQueue::PushLocked(const std::string& key) {
  queue_.push_back(key);
  if (options_.on_wait) ready_since_[key] = Clock::now();
  cv_.notify_one();
}

void WorkQueue::Add(const std::string& key) {
  std::lock_guard lock(mu_);
  AddLocked(key);
}

void WorkQueue::AddAfter(const std::string& key, Clock::duration delay) {
  if (delay <= Clock::duration::zero()) {
    Add(key);
    return;
  }
  std::lock_guard lock(mu_);
  if (shutting_down_) return;
  const auto when = Clock::now() + delay;
  auto it = delayed_when_.find(key);
  if (it != delayed_when_.end() && it->second <= when) return;  // an earlier add stands
  delayed_when_[key] = when;
  delayed_.push(Delayed{when, seq_++, key});
  cv_.notify_all();  // a waiter may need to wake earlier than it planned
}

void WorkQueue::AddRateLimited(const std::string& key) {
  Clock::duration delay;
  {
    std::lock_guard lock(mu_);
    const int failures = failures_[key]++;
    const double base = static_cast<double>(options_.base_delay.count()) *
                        std::pow(2.0, std::min(failures, 62));
    const double capped = std::min(base, static_cast<double>(options_.max_delay.count()));
    Clock::duration per_key = std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double, std::milli>(capped));
    delay = std::max(per_key, bucket_.Reserve(Clock::now()));
    if (options_.on_retry) options_.on_retry();
  }
  AddAfter(key, delay);
}

void WorkQueue::Forget(const std::string& key) {
  std::lock_guard lock(mu_);
  failures_.erase(key);
}

int WorkQueue::NumRequeues(const std::string& key) const {
  std::lock_guard lock(mu_);
  auto it = failures_.find(key);
  return it == failures_.end() ? 0 : it->second;
}

void WorkQueue::PromoteDueLocked(Clock::time_point now) {
  while (!delayed_.empty() && delayed_.top().when <= now) {
    Delayed d = delayed_.top();
    delayed_.pop();
    auto it = delayed_when_.find(d.key);
    if (it == delayed_when_.end() || it->second != d.when) continue;  // superseded entry
    delayed_when_.erase(it);
    AddLocked(d.key);
  }
}

std::optional<std::string> WorkQueue::Get() {
  std::unique_lock lock(mu_);
  for (;;) {
    PromoteDueLocked(Clock::now());
    if (!queue_.empty()) {
      std::string key = std::move(queue_.front());
      queue_.pop_front();
      const auto now = Clock::now();
      processing_[key] = now;
      dirty_.erase(key);
      if (auto added = added_at_.find(key); added != added_at_.end()) {
        if (options_.on_taken) options_.on_taken(std::chrono::duration<double>(now - added->second).count());
        added_at_.erase(added);
      }
      if (auto it = ready_since_.find(key); it != ready_since_.end()) {
        options_.on_wait(std::chrono::duration<double>(now - it->second).count());
        ready_since_.erase(it);
      }
      return key;
    }
    if (shutting_down_) return std::nullopt;
    if (delayed_.empty()) {
      cv_.wait(lock);
    } else {
      cv_.wait_until(lock, delayed_.top().when);
    }
  }
}

void WorkQueue::Done(const std::string& key) {
  std::lock_guard lock(mu_);
  if (auto it = processing_.find(key); it != processing_.end()) {
    if (options_.on_done) options_.on_done(std::chrono::duration<double>(Clock::now() - it->second).count());
    processing_.erase(it);
  }
  if (dirty_.count(key)) PushLocked(key);
}

void WorkQueue::ShutDown() {
  std::lock_guard lock(mu_);
  shutting_down_ = true;
  cv_.notify_all();
}

bool WorkQueue::ShuttingDown() const {
  std::lock_guard lock(mu_);
  return shutting_down_;
}

std::size_t WorkQueue::Len() const {
  std::lock_guard lock(mu_);
  return queue_.size();
}

WorkQueueLoad WorkQueue::Load() const {
  std::lock_guard lock(mu_);
  WorkQueueLoad load;
  load.waiting = added_at_.size();
  const auto now = Clock::now();
  for (const auto& [key, since] : processing_) {
    const double seconds = std::chrono::duration<double>(now - since).count();
    load.unfinished_seconds += seconds;
    load.longest_seconds = std::max(load.longest_seconds, seconds);
  }
  return load;
}

}  // namespace kube

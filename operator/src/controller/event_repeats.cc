#include "controller/event_repeats.h"

namespace ncclop::controller {

std::optional<EventRepeats::Written> EventRepeats::Find(const Key& key, Clock::time_point now) {
  DropExpired(now);
  auto it = index_.find(key);
  if (it == index_.end()) return std::nullopt;
  return it->second.written;
}

void EventRepeats::Put(const Key& key, Written written, Clock::time_point now) {
  auto [it, inserted] = index_.try_emplace(key);
  if (!inserted) by_seen_.erase(it->second.place);
  by_seen_.push_front(&it->first);
  it->second = Entry{std::move(written), now, by_seen_.begin()};
  DropExpired(now);
  while (index_.size() > capacity_) DropOldest();
}

void EventRepeats::Erase(const Key& key) {
  if (auto it = index_.find(key); it != index_.end()) {
    by_seen_.erase(it->second.place);
    index_.erase(it);
  }
}

void EventRepeats::DropOldest() {
  auto oldest = index_.find(*by_seen_.back());  // by iterator: the key lives in the node erased
  by_seen_.pop_back();
  index_.erase(oldest);
}

void EventRepeats::DropExpired(Clock::time_point now) {
  while (!by_seen_.empty() && now - index_.find(*by_seen_.back())->second.seen > window_) DropOldest();
}

}  // namespace ncclop::controller

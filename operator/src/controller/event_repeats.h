// What the event recorder remembers of the Events it wrote, so that the same event again bumps
// the count of the one written instead of adding another. Keyed as client-go's event
// correlator keys its event log (the involved object's UID, type, reason, message: our source
// and object kind are always the same), and bounded twice, so its memory levels off however
// many jobs come and go:
//   - by time: an entry not seen for `window` is forgotten (a repeat after that is written as a
//     new Event anyway), so at a steady rate of events it holds what `window` of them hold;
//   - by count: at `capacity` the least recently seen entry goes (client-go's LRU holds 4096).
// Entries are kept in the order they were last seen, so both bounds drop from one end in
// constant time. Pure; not thread-safe (the recorder locks).
#pragma once

#include <chrono>
#include <cstddef>
#include <list>
#include <map>
#include <optional>
#include <string>
#include <tuple>

namespace ncclop::controller {

class EventRepeats {
 public:
  using Clock = std::chrono::steady_clock;
  using Key = std::tuple<std::string, std::string, std::string, std::string>;  // uid, type, reason, message
  struct Written {
    std::string name;  // the Event object's name
    int count = 1;
  };

  EventRepeats(Clock::duration window, std::size_t capacity) : window_(window), capacity_(capacity) {}

  // The Event written for `key` if it was seen within the window before `now`.
  std::optional<Written> Find(const Key& key, Clock::time_point now);
  // Remembers `written` for `key` as seen at `now` (the most recent), then applies both bounds.
  void Put(const Key& key, Written written, Clock::time_point now);
  void Erase(const Key& key);
  std::size_t size() const { return index_.size(); }

 private:
  using Order = std::list<const Key*>;  // keys of index_ (map nodes never move), most recently seen first
  struct Entry {
    Written written;
    Clock::time_point seen;
    Order::iterator place;
  };
  void DropOldest();
  void DropExpired(Clock::time_point now);

  const Clock::duration window_;
  const std::size_t capacity_;
  std::map<Key, Entry> index_;
  Order by_seen_;
};

}  // namespace ncclop::controller

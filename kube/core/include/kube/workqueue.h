// A work queue of keys ("namespace/name") in the shape of client-go's: a key added many
// times is queued once; a key being processed is never handed to a second worker (if it is
// added meanwhile it is queued again when Done() is called); failed keys come back after a
// per-key exponential delay, with an overall token-bucket limit on such retries.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <queue>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace kube {

struct WorkQueueOptions {
  std::chrono::milliseconds base_delay{5};     // first AddRateLimited delay per key
  std::chrono::milliseconds max_delay{300000};  // cap per key
  double qps = 10.0;                             // overall token bucket for AddRateLimited
  int burst = 100;
  // Metrics hooks (client-go's workqueue metrics), called with the queue's lock held: keep
  // them short and never call back into the queue. on_add: every Add (merged or not, delayed
  // ones when they come due); on_wait: seconds a key sat ready in the queue before a Get.
  std::function<void()> on_add;
  std::function<void(double seconds)> on_wait;
  // client-go's own workqueue metrics (controller-runtime exports them as workqueue_*), same
  // rules. on_queued: an Add of a key not already waiting (a merged add is not one), delayed
  // ones when they come due; on_taken: at Get, seconds since that add; on_done: at Done,
  // seconds since the Get; on_retry: every AddRateLimited.
  std::function<void()> on_queued;
  std::function<void(double seconds)> on_taken;
  std::function<void(double seconds)> on_done;
  std::function<void()> on_retry;
};

// What the queue holds now, in client-go's terms (read at scrape time).
struct WorkQueueLoad {
  std::size_t waiting = 0;        // keys added and not yet taken by a Get (client-go's depth)
  double unfinished_seconds = 0;  // the keys being processed: seconds since their Get, added up
  double longest_seconds = 0;     // the same for the one taken longest ago
};

// Pure rate-limit arithmetic, clock passed in (unit tested without sleeping).
class TokenBucket {
 public:
  using Clock = std::chrono::steady_clock;
  TokenBucket(double qps, int burst, Clock::time_point now);
  // Reserves one token; returns how long the caller must wait for it (0 when one is free).
  Clock::duration Reserve(Clock::time_point now);

 private:
  double qps_;
  double burst_;
  double tokens_;
  Clock::time_point last_;
};

class WorkQueue {
 public:
  using Clock = std::chrono::steady_clock;
  explicit WorkQueue(WorkQueueOptions options = {});
  ~WorkQueue();

  void Add(const std::string& key);
  void AddAfter(const std::string& key, Clock::duration delay);
  // Adds after max(per-key backoff, token-bucket wait); the per-key backoff doubles each time.
  void AddRateLimited(const std::string& key);
  // Clears the key's backoff (call after it was processed successfully).
  void Forget(const std::string& key);
  int NumRequeues(const std::string& key) const;

  // Blocks until a key is ready or the queue is shut down (then nullopt). Every key returned
  // must be passed to Done().
  std::optional<std::string> Get();
  void Done(const std::string& key);

  void ShutDown();  // wakes every Get(); later adds are ignored
  bool ShuttingDown() const;
  std::size_t Len() const;  // keys ready to be handed out
  WorkQueueLoad Load() const;

 private:
  void AddLocked(const std::string& key);
  void PushLocked(const std::string& key);  // into queue_, ready for Get()
  void PromoteDueLocked(Clock::time_point now);

  struct Delayed {
    Clock::time_point when;
    std::uint64_t seq;
    std::string key;
    bool operator>(const Delayed& o) const { return when != o.when ? when > o.when : seq > o.seq; }
  };

  WorkQueueOptions options_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> queue_;
  std::unordered_set<std::string> dirty_;
  std::unordered_map<std::string, Clock::time_point> processing_;  // since its Get
  std::unordered_map<std::string, Clock::time_point> added_at_;     // dirty keys: their add
  std::priority_queue<Delayed, std::vector<Delayed>, std::greater<Delayed>> delayed_;
  std::unordered_map<std::string, Clock::time_point> delayed_when_;  // earliest per key
  std::unordered_map<std::string, int> failures_;
  std::unordered_map<std::string, Clock::time_point> ready_since_;  // keys in queue_
  TokenBucket bucket_;
  std::uint64_t seq_ = 0;
  bool shutting_down_ = false;
};

}  // namespace kube

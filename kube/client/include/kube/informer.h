// List-then-watch with a cache (client-go's Informer: its Reflector, the list/watch loop, is
// Run/ListOnce here; kube/cache_updater.h applies what they read): lists, watches from the
// list's resourceVersion with bookmarks, rewatches when the server ends a watch, relists on
// 410 Gone, reconnects with backoff when the API server is away, and never spins. Handlers
// run on the informer's thread, in order; keep them short (enqueue a key).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "kube/backoff.h"
#include "kube/cache_updater.h"
#include "kube/client.h"
#include "kube/resource.h"
#include "kube/store.h"
#include "kube/watch.h"

namespace kube {

struct InformerOptions {
  std::string namespace_;  // "" = all namespaces (or a cluster-scoped resource)
  std::string label_selector;
  std::string field_selector;
  BackoffPolicy backoff{std::chrono::milliseconds(500), std::chrono::milliseconds(30000), 2.0, 0.5};
  // Each watch asks the server to end it after a random time in [min, 2*min) seconds.
  int watch_timeout_seconds = 300;
  // Periodically re-deliver every cached object as an update (0 = never).
  std::chrono::seconds resync_period{0};
  std::string name;  // for logs; defaults to the resource plural
  // Applied to every listed and watched object (after the managedFields strip below).
  ObjectTransform transform;
  bool strip_managed_fields = true;  // also skipped unparsed in watch events (kube/json_skim.h)
  // Members of each watched object never parsed, as dotted paths ("spec"): for fields the
  // transform would drop anyway, the decoder skips their bytes instead (kube/json_skim.h).
  // Listed objects are parsed whole and transformed.
  std::vector<std::string> drop_at_decode;
  // Items per list page. Each page is transformed before the next is fetched, so a smaller
  // page lowers the peak memory of a (re)list of large objects.
  std::int64_t list_page_size = 500;
};

class Informer {
 public:
  Informer(std::shared_ptr<Client> client, Resource resource, InformerOptions options = {});
  ~Informer();  // stops and joins
  Informer(const Informer&) = delete;
  Informer& operator=(const Informer&) = delete;

  // Before Start().
  void AddIndex(const std::string& name, IndexFunc func) { store_.AddIndex(name, std::move(func)); }
  void AddEventHandlers(EventHandlers handlers);

  void Start();  // runs on its own thread until Stop()
  void Stop();
  bool HasSynced() const { return synced_.load(); }
  // Waits until the first list is in the cache; false on timeout or Stop().
  bool WaitForSync(std::chrono::milliseconds timeout) const;

  const Store& store() const { return store_; }
  // Counters (for metrics and tests).
  int relists() const { return relists_.load(); }
  int watch_restarts() const { return watch_restarts_.load(); }
  std::string last_resource_version() const;

 private:
  void Run(std::stop_token stop);
  bool ListOnce(std::stop_token stop, Backoff* backoff);
  void Resync(std::stop_token stop);
  void SetLastResourceVersion(const std::string& rv);

  std::shared_ptr<Client> client_;
  Resource resource_;
  InformerOptions options_;
  Store store_;
  std::vector<EventHandlers> handlers_;
  CacheUpdater cache_updater_;
  std::atomic<bool> synced_{false};
  std::atomic<int> relists_{0};
  std::atomic<int> watch_restarts_{0};
  mutable std::mutex mu_;
  mutable std::condition_variable_any sync_cv_;
  std::string last_rv_;  // guarded by mu_
  bool stopped_ = false;  // guarded by mu_
  std::mutex dispatch_mu_;  // serialises store updates and handler calls (watch vs resync)
  std::jthread resync_thread_;
  std::jthread thread_;
};

}  // namespace kube

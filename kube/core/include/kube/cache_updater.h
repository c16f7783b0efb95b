// The cache side of an informer: what a list or a watch event does to the Store and which
// handlers it calls. Pure (no I/O), so it is tested and benchmarked without an API server.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kube/store.h"
#include "kube/watch.h"

namespace kube {

struct EventHandlers {
  std::function<void(const ObjectPtr& object)> on_add;
  std::function<void(const ObjectPtr& old_object, const ObjectPtr& new_object)> on_update;
  // For a delete seen only through a relist, `object` is the last state the cache held.
  std::function<void(const ObjectPtr& object)> on_delete;
  // The same object, called before it leaves the cache (on_delete comes after): what this
  // records is there for any reader that no longer finds the object in the cache.
  std::function<void(const ObjectPtr& object)> before_delete;
};

// Rewrites an object in place before it is cached and before handlers see it (e.g. drops
// the fields a controller never reads, to bound the cache's memory). Must leave
// metadata.namespace/name (the cache key) and metadata.resourceVersion intact.
using ObjectTransform = std::function<void(nlohmann::json& object)>;

// Removes metadata.managedFields (often the largest part of metadata). A PUT of an object
// without managedFields keeps the server's record, so cached objects stay writable.
void StripManagedFields(nlohmann::json& object);

// Applies list results and watch events to a Store and calls the handlers, in order. Pure
// (no I/O): the Informer's list/watch loop feeds it, and tests and benchmarks feed it directly.
class CacheUpdater {
 public:
  CacheUpdater(Store* store, std::vector<EventHandlers>* handlers, ObjectTransform prepare = {})
      : store_(store), handlers_(handlers), prepare_(std::move(prepare)) {}
  void ApplyList(std::vector<nlohmann::json>&& items, const std::string& resource_version);
  // ApplyList for items that already went through prepare() (the Informer transforms each
  // list page as it arrives).
  void ApplyPreparedList(std::vector<nlohmann::json>&& items, const std::string& resource_version);
  // Returns false for an ERROR event (the caller decides: relist on IsGone()).
  bool ApplyEvent(WatchEvent&& event);
  const std::string& resource_version() const { return resource_version_; }

 private:
  // A relist's removals (what the cache holds and `fresh` lacks), told to before_delete.
  void BeforeRelistRemoves(const std::vector<ObjectPtr>& fresh);

  Store* store_;
  std::vector<EventHandlers>* handlers_;
  ObjectTransform prepare_;
  std::string resource_version_;
};

}  // namespace kube

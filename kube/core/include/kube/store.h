// The informer's cache: objects by key ("namespace/name", or "name" for cluster-scoped
// objects) plus named secondary indexes (e.g. pods by job label). Thread-safe; readers get
// shared pointers to immutable objects, so a read never copies a pod and never blocks a
// writer for long.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

namespace kube {

using ObjectPtr = std::shared_ptr<const nlohmann::json>;

// "ns/name", or "name" when metadata.namespace is empty.
std::string ObjectKey(const nlohmann::json& object);
// Splits "ns/name" (or "name") into {namespace, name}.
std::pair<std::string, std::string> SplitKey(std::string_view key);

// Maps an object to the index values it is filed under (none, one or several).
using IndexFunc = std::function<std::vector<std::string>(const nlohmann::json& object)>;
// Files objects under the value of one label (objects without the label are not indexed).
IndexFunc IndexByLabel(std::string label_key);
IndexFunc IndexByNamespace();

class Store {
 public:
  // Indexes must be added before the first object.
  void AddIndex(const std::string& name, IndexFunc func);

  // Inserts or replaces; returns the previous object (null when new).
  ObjectPtr Upsert(ObjectPtr object);
  // Removes by key; returns the removed object (null when absent).
  ObjectPtr Remove(const std::string& key);
  // Replaces the whole content (after a list); fills `removed` with objects no longer present.
  void Replace(std::vector<ObjectPtr> objects, std::vector<ObjectPtr>* removed);

  ObjectPtr Get(const std::string& key) const;
  ObjectPtr Get(std::string_view ns, std::string_view name) const;
  std::vector<ObjectPtr> List() const;
  std::vector<std::string> Keys() const;
  std::vector<ObjectPtr> ByIndex(const std::string& index_name, const std::string& value) const;
  std::size_t size() const;

 private:
  void IndexLocked(const std::string& key, const nlohmann::json& object);
  void UnindexLocked(const std::string& key, const nlohmann::json& object);

  mutable std::shared_mutex mu_;
  std::unordered_map<std::string, ObjectPtr> items_;
  std::map<std::string, IndexFunc> index_funcs_;
  // index name -> value -> keys
  std::unordered_map<std::string, std::unordered_map<std::string, std::unordered_set<std::string>>>
      indexes_;
};

}  // namespace kube

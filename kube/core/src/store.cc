#include "kube/store.h"

namespace kube {
namespace {

const nlohmann::json* Metadata(const nlohmann::json& object) {
  if (!object.is_object()) return nullptr;
  auto md = object.find("metadata");
  return md != object.end() && md->is_object() ? &*md : nullptr;
}

std::string MetaString(const nlohmann::json& object, const char* key) {
  const auto* md = Metadata(object);
  if (md == nullptr) return {};
  auto it = md->find(key);
  return it != md->end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

std::string ObjectKey(const nlohmann::json& object) {
  std::string ns = MetaString(object, "namespace");
  std::string name = MetaString(object, "name");
  return ns.empty() ? name : ns + "/" + name;
}

std::pair<std::string, std::string> SplitKey(std::string_view key) {
  auto slash = key.find('/');
  if (slash == std::string_view::npos) return {std::string(), std::string(key)};
  return {std::string(key.substr(0, slash)), std::string(key.substr(slash + 1))};
}

IndexFunc IndexByLabel(std::string label_key) {
  return [label_key = std::move(label_key)](const nlohmann::json& object) {
    std::vector<std::string> out;
    const auto* md = Metadata(object);
    if (md == nullptr) return out;
    auto labels = md->find("labels");
    if (labels == md->end() || !labels->is_object()) return out;
    auto v = labels->find(label_key);
    if (v != labels->end() && v->is_string()) out.push_back(v->get<std::string>());
    return out;
  };
}

IndexFunc IndexByNamespace() {
  return [](const nlohmann::json& object) {
    std::vector<std::string> out;
    std::string ns = MetaString(object, "namespace");
    if (!ns.empty()) out.push_back(std::move(ns));
    return out;
  };
}

void Store::AddIndex(const std::string& name, IndexFunc func) {
  std::unique_lock lock(mu_);
  index_funcs_[name] = std::move(func);
  auto& index = indexes_[name];
  index.clear();
  for (const auto& [key, object] : items_) {
    for (auto& v : index_funcs_[name](*object)) index[v].insert(key);
  }
}

void Store::IndexLocked(const std::string& key, const nlohmann::json& object) {
  for (const auto& [name, func] : index_funcs_) {
    auto& index = indexes_[name];
    for (auto& v : func(object)) index[v].insert(key);
  }
}

void Store::UnindexLocked(const std::string& key, const nlohmann::json& object) {
  for (const auto& [name, func] : index_funcs_) {
    auto& index = indexes_[name];
    for (auto& v : func(object)) {
      auto it = index.find(v);
      if (it == index.end()) continue;
      it->second.erase(key);
      if (it->second.empty()) index.erase(it);
    }
  }
}

ObjectPtr Store::Upsert(ObjectPtr object) {
  std::string key = ObjectKey(*object);
  std::unique_lock lock(mu_);
  auto [it, inserted] = items_.try_emplace(key, object);
  ObjectPtr old;
  if (!inserted) {
    old = std::move(it->second);
    it->second = object;
    if (!index_funcs_.empty()) UnindexLocked(key, *old);
  }
  if (!index_funcs_.empty()) IndexLocked(key, *object);
  return old;
}

ObjectPtr Store::Remove(const std::string& key) {
  std::unique_lock lock(mu_);
  auto it = items_.find(key);
  if (it == items_.end()) return nullptr;
  ObjectPtr old = std::move(it->second);
  items_.erase(it);
  UnindexLocked(key, *old);
  return old;
}

void Store::Replace(std::vector<ObjectPtr> objects, std::vector<ObjectPtr>* removed) {
  std::unordered_map<std::string, ObjectPtr> fresh;
  fresh.reserve(objects.size());
  for (auto& o : objects) fresh[ObjectKey(*o)] = std::move(o);
  std::unique_lock lock(mu_);
  if (removed != nullptr) {
    for (const auto& [key, object] : items_) {
      if (!fresh.count(key)) removed->push_back(object);
    }
  }
  items_ = std::move(fresh);
  for (auto& [name, index] : indexes_) index.clear();
  if (!index_funcs_.empty()) {
    for (const auto& [key, object] : items_) IndexLocked(key, *object);
  }
}

ObjectPtr Store::Get(const std::string& key) const {
  std::shared_lock lock(mu_);
  auto it = items_.find(key);
  return it == items_.end() ? nullptr : it->second;
}

ObjectPtr Store::Get(std::string_view ns, std::string_view name) const {
  return Get(ns.empty() ? std::string(name) : std::string(ns) + "/" + std::string(name));
}

std::vector<ObjectPtr> Store::List() const {
  std::shared_lock lock(mu_);
  std::vector<ObjectPtr> out;
  out.reserve(items_.size());
  for (const auto& [key, object] : items_) out.push_back(object);
  return out;
}

std::vector<std::string> Store::Keys() const {
  std::shared_lock lock(mu_);
  std::vector<std::string> out;
  out.reserve(items_.size());
  for (const auto& [key, object] : items_) out.push_back(key);
  return out;
}

std::vector<ObjectPtr> Store::ByIndex(const std::string& index_name, const std::string& value) const {
  std::shared_lock lock(mu_);
  std::vector<ObjectPtr> out;
  auto idx = indexes_.find(index_name);
  if (idx == indexes_.end()) return out;
  auto keys = idx->second.find(value);
  if (keys == idx->second.end()) return out;
  for (const auto& key : keys->second) {
    auto it = items_.find(key);
    if (it != items_.end()) out.push_back(it->second);
  }
  return out;
}

std::size_t Store::size() const {
  std::shared_lock lock(mu_);
  return items_.size();
}

}  // namespace kube

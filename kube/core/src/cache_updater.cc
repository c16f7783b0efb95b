#include "kube/cache_updater.h"

#include <unordered_set>

namespace kube {

void StripManagedFields(nlohmann::json& object) {
  if (!object.is_object()) return;
  auto md = object.find("metadata");
  if (md != object.end() && md->is_object()) md->erase("managedFields");
}

void CacheUpdater::ApplyList(std::vector<nlohmann::json>&& items, const std::string& resource_version) {
  if (prepare_) {
    for (auto& item : items) prepare_(item);
  }
  ApplyPreparedList(std::move(items), resource_version);
}

void CacheUpdater::ApplyPreparedList(std::vector<nlohmann::json>&& items, const std::string& resource_version) {
  std::vector<ObjectPtr> fresh;
  std::vector<ObjectPtr> previous;
  fresh.reserve(items.size());
  previous.reserve(items.size());
  for (auto& item : items) {
    auto object = std::make_shared<const nlohmann::json>(std::move(item));
    previous.push_back(store_->Get(ObjectKey(*object)));
    fresh.push_back(std::move(object));
  }
  BeforeRelistRemoves(fresh);
  std::vector<ObjectPtr> removed;
  store_->Replace(fresh, &removed);
  resource_version_ = resource_version;
  for (const auto& h : *handlers_) {
    for (std::size_t i = 0; i < fresh.size(); ++i) {
      if (previous[i] == nullptr) {
        if (h.on_add) h.on_add(fresh[i]);
      } else if (h.on_update) {
        h.on_update(previous[i], fresh[i]);
      }
    }
    for (const auto& gone : removed) {
      if (h.on_delete) h.on_delete(gone);
    }
  }
}

void CacheUpdater::BeforeRelistRemoves(const std::vector<ObjectPtr>& fresh) {
  bool wanted = false;
  for (const auto& h : *handlers_) wanted = wanted || static_cast<bool>(h.before_delete);
  if (!wanted) return;
  std::unordered_set<std::string> kept;
  kept.reserve(fresh.size());
  for (const auto& object : fresh) kept.insert(ObjectKey(*object));
  for (const std::string& key : store_->Keys()) {
    if (kept.contains(key)) continue;
    ObjectPtr last = store_->Get(key);
    if (last == nullptr) continue;
    for (const auto& h : *handlers_) {
      if (h.before_delete) h.before_delete(last);
    }
  }
}

bool CacheUpdater::ApplyEvent(WatchEvent&& event) {
  if (event.type == EventType::kError) return false;
  std::string rv = event.ResourceVersion();
  if (!rv.empty()) resource_version_ = std::move(rv);
  switch (event.type) {
    case EventType::kAdded:
    case EventType::kModified: {
      if (prepare_) prepare_(event.object);
      auto object = std::make_shared<const nlohmann::json>(std::move(event.object));
      ObjectPtr old = store_->Upsert(object);
      for (const auto& h : *handlers_) {
        if (old == nullptr) {
          if (h.on_add) h.on_add(object);
        } else if (h.on_update) {
          h.on_update(old, object);
        }
      }
      break;
    }
    case EventType::kDeleted: {
      if (prepare_) prepare_(event.object);
      ObjectPtr last = std::make_shared<const nlohmann::json>(std::move(event.object));
      for (const auto& h : *handlers_) {
        if (h.before_delete) h.before_delete(last);
      }
      store_->Remove(ObjectKey(*last));
      for (const auto& h : *handlers_) {
        if (h.on_delete) h.on_delete(last);
      }
      break;
    }
    case EventType::kBookmark:
    case EventType::kError:
      break;
  }
  return true;
}

}  // namespace kube

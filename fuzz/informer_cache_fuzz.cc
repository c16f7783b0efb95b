// List and watch decoding into the informer cache, as the operator caches pods (managedFields
// stripped, TrimPod). The first line is a list ({"metadata":{"resourceVersion"},"items":[...]}),
// each further line a watch event. Property: the cache holds exactly the keys a plain map model
// holds after the same list and events (so the transform never moves an object to another key),
// every object filed under a label index is in the cache, and the resourceVersion is the last one
// seen.
#include <algorithm>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "cache/trim.h"
#include "kube/cache_updater.h"
#include "kube/store.h"
#include "kube/watch.h"

namespace {

std::string ListResourceVersion(const nlohmann::json& list) {
  auto md = list.find("metadata");
  if (md == list.end() || !md->is_object()) return {};
  auto rv = md->find("resourceVersion");
  return rv != md->end() && rv->is_string() ? rv->get<std::string>() : std::string();
}

const nlohmann::json* LabelsOf(const nlohmann::json& object) {
  auto md = object.find("metadata");
  if (md == object.end() || !md->is_object()) return nullptr;
  auto labels = md->find("labels");
  return labels != md->end() && labels->is_object() ? &*labels : nullptr;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::size_t first_nl = text.find('\n');
  std::string_view list_line = text.substr(0, first_nl);
  std::string_view events = first_nl == std::string_view::npos ? std::string_view() : text.substr(first_nl + 1);

  kube::Store store;
  store.AddIndex("job", kube::IndexByLabel("nccl.dev/job"));
  store.AddIndex("namespace", kube::IndexByNamespace());
  std::vector<kube::EventHandlers> handlers(1);
  kube::CacheUpdater updater(&store, &handlers, [](nlohmann::json& object) {
    kube::StripManagedFields(object);
    ncclop::cache::TrimPod(object);
  });
  std::map<std::string, int> model;  // key -> times written
  std::string model_rv;

  auto list = nlohmann::json::parse(list_line, nullptr, false);
  if (list.is_object()) {
    std::vector<nlohmann::json> items;
    if (auto it = list.find("items"); it != list.end() && it->is_array()) {
      for (auto& item : *it) {
        if (!item.is_object()) continue;  // the client refuses a list whose items are not objects
        model[kube::ObjectKey(item)]++;
        items.push_back(item);
      }
    }
    model_rv = ListResourceVersion(list);
    updater.ApplyList(std::move(items), model_rv);
  }

  kube::WatchDecoder decoder;
  decoder.Feed(events, [&](kube::Result<kube::WatchEvent>&& r) {
    if (!r.ok()) return;
    kube::WatchEvent event = std::move(*r);
    const std::string key = kube::ObjectKey(event.object);
    const kube::EventType type = event.type;
    const std::string rv = event.ResourceVersion();
    const bool applied = updater.ApplyEvent(std::move(event));
    if (applied != (type != kube::EventType::kError)) std::abort();
    if (type == kube::EventType::kError) return;
    if (!rv.empty()) model_rv = rv;
    if (type == kube::EventType::kAdded || type == kube::EventType::kModified) model[key]++;
    if (type == kube::EventType::kDeleted) model.erase(key);
  });

  std::vector<std::string> keys = store.Keys();
  std::sort(keys.begin(), keys.end());
  std::vector<std::string> expected;
  for (const auto& [key, n] : model) expected.push_back(key);
  if (keys != expected) std::abort();
  if (store.size() != model.size()) std::abort();
  if (updater.resource_version() != model_rv) std::abort();
  for (const auto& object : store.List()) {
    const std::string key = kube::ObjectKey(*object);
    if (store.Get(key) != object) std::abort();
    const auto ns_members = store.ByIndex("namespace", kube::SplitKey(key).first);
    (void)ns_members;
    const nlohmann::json* labels = LabelsOf(*object);
    if (labels != nullptr) {
      auto job = labels->find("nccl.dev/job");
      if (job != labels->end() && job->is_string()) {
        auto members = store.ByIndex("job", job->get<std::string>());
        if (std::find(members.begin(), members.end(), object) == members.end()) std::abort();
      }
    }
  }
  return 0;
}

#include "kube/informer.h"

#include <random>

#include "logging/log.h"

namespace kube {

namespace {

ObjectTransform CombinedTransform(const InformerOptions& options) {
  if (!options.strip_managed_fields) return options.transform;
  return [user = options.transform](nlohmann::json& object) {
    StripManagedFields(object);
    if (user) user(object);
  };
}

}  // namespace

Informer::Informer(std::shared_ptr<Client> client, Resource resource, InformerOptions options)
    : client_(std::move(client)),
      resource_(std::move(resource)),
      options_(std::move(options)),
      cache_updater_(&store_, &handlers_, CombinedTransform(options_)) {
  if (options_.name.empty()) options_.name = resource_.plural;
}

Informer::~Informer() { Stop(); }

void Informer::AddEventHandlers(EventHandlers handlers) {
  std::lock_guard lock(dispatch_mu_);
  handlers_.push_back(std::move(handlers));
}

void Informer::Start() {
  if (thread_.joinable()) return;
  thread_ = std::jthread([this](std::stop_token stop) { Run(stop); });
  if (options_.resync_period.count() > 0) {
    resync_thread_ = std::jthread([this](std::stop_token stop) { Resync(stop); });
  }
}

void Informer::Stop() {
  if (thread_.joinable()) {
    thread_.request_stop();
    thread_.join();
  }
  if (resync_thread_.joinable()) {
    resync_thread_.request_stop();
    resync_thread_.join();
  }
  {
    std::lock_guard lock(mu_);
    stopped_ = true;
  }
  sync_cv_.notify_all();
}

bool Informer::WaitForSync(std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mu_);
  sync_cv_.wait_for(lock, timeout, [this] { return synced_.load() || stopped_; });
  return synced_.load();
}

std::string Informer::last_resource_version() const {
  std::lock_guard lock(mu_);
  return last_rv_;
}

void Informer::SetLastResourceVersion(const std::string& rv) {
  std::lock_guard lock(mu_);
  last_rv_ = rv;
}

bool Informer::ListOnce(std::stop_token stop, Backoff* backoff) {
  ListOptions lo;
  lo.label_selector = options_.label_selector;
  lo.field_selector = options_.field_selector;
  lo.page_size = options_.list_page_size;
  lo.item_transform = CombinedTransform(options_);
  auto list = client_->List(resource_, options_.namespace_, lo);
  if (!list.ok()) {
    auto delay = backoff->Next();
    logging::Warn("kube", "list failed; retrying",
                  {{"informer", options_.name},
                   {"error", list.status().ToString()},
                   {"attempt", std::to_string(backoff->attempts())},
                   {"retry_in_ms", std::to_string(delay.count())}});
    SleepFor(delay, stop);
    return false;
  }
  {
    std::lock_guard lock(dispatch_mu_);
    cache_updater_.ApplyPreparedList(std::move(list->items), list->resource_version);
  }
  SetLastResourceVersion(list->resource_version);
  if (!synced_.exchange(true)) {
    { std::lock_guard lock(mu_); }
    sync_cv_.notify_all();
  }
  return true;
}

void Informer::Run(std::stop_token stop) {
  Backoff backoff(options_.backoff);
  std::mt19937 rng(std::random_device{}());
  bool need_list = true;
  while (!stop.stop_requested()) {
    if (need_list) {
      if (!ListOnce(stop, &backoff)) continue;
      need_list = false;
    }
    WatchOptions wo;
    wo.label_selector = options_.label_selector;
    wo.field_selector = options_.field_selector;
    wo.resource_version = cache_updater_.resource_version();
    wo.allow_bookmarks = true;
    wo.drop_fields = options_.drop_at_decode;
    if (options_.strip_managed_fields) wo.drop_fields.push_back("metadata.managedFields");
    // Spread watch ends so many informers do not reconnect at the same moment.
    const int base = std::max(1, options_.watch_timeout_seconds);
    wo.timeout_seconds = base + static_cast<int>(rng() % static_cast<unsigned>(base));

    bool bad_event = false;
    int events = 0;
    const auto started = std::chrono::steady_clock::now();
    Status s = client_->Watch(
        resource_, options_.namespace_, wo,
        [&](WatchEvent&& event) {
          if (bad_event) return false;  // a skipped event may hide a delete: relist
          ++events;
          std::lock_guard lock(dispatch_mu_);
          cache_updater_.ApplyEvent(std::move(event));
          SetLastResourceVersion(cache_updater_.resource_version());
          return true;
        },
        stop,
        [&](const Status& error) {
          bad_event = true;
          logging::Warn("kube", "skipping a watch event that cannot be decoded; will relist",
                        {{"informer", options_.name}, {"error", error.ToString()}});
        });
    if (stop.stop_requested()) break;
    watch_restarts_.fetch_add(1);
    if (bad_event || s.IsGone()) {
      if (s.IsGone()) {
        logging::Info("kube", "watch resourceVersion expired; relisting",
                      {{"informer", options_.name}, {"resource_version", wo.resource_version}});
      }
      relists_.fetch_add(1);
      need_list = true;
      continue;
    }
    const bool short_lived = std::chrono::steady_clock::now() - started < std::chrono::seconds(1);
    if (s.ok() && events > 0) backoff.Reset();
    if (s.ok() && !short_lived) continue;  // the server ended the watch on time: rewatch
    // Broken connection, API server away, RBAC error, or a watch that ends at once: wait.
    auto delay = backoff.Next();
    logging::Warn("kube", "watch ended; reconnecting",
                  {{"informer", options_.name},
                   {"error", s.ok() ? "stream closed at once" : s.ToString()},
                   {"attempt", std::to_string(backoff.attempts())},
                   {"retry_in_ms", std::to_string(delay.count())}});
    SleepFor(delay, stop);
  }
}

void Informer::Resync(std::stop_token stop) {
  while (SleepFor(std::chrono::duration_cast<std::chrono::milliseconds>(options_.resync_period), stop)) {
    if (!synced_.load()) continue;
    std::lock_guard lock(dispatch_mu_);
    for (const auto& object : store_.List()) {
      for (const auto& h : handlers_) {
        if (h.on_update) h.on_update(object, object);
      }
    }
  }
}

}  // namespace kube

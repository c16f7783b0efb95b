#include "controller/controller.h"

#include <condition_variable>
#include <mutex>

#include "api/time.h"
#include "contract/names.h"
#include "controller/gang_api.h"
#include "logging/log.h"
#include "observed/ownership.h"
#include "observed/pod.h"
#include "policy/fast_publish.h"

namespace ncclop::controller {
namespace {

// Whether the API server serves the row's optional API and lets us list it (ours only: the
// informer lists them again at once), logged either way. Asked once, at start.
bool Serves(kube::Client& client, const std::string& ns, const Watch& watch) {
  kube::ListOptions options;
  options.label_selector = std::string(contract::kLabelJobName);  // "has the label"
  auto listed = client.List(watch.resource, ns, options);
  if (listed.ok()) {
    logging::Info("controller", watch.served);
    return true;
  }
  logging::Info("controller", watch.not_served, {{"error", listed.status().ToString()}});
  return false;
}

// The index kPodsByJob: the key of the job that owns the object.
std::vector<std::string> OwningJob(const nlohmann::json& object) {
  std::string job = observed::OwningJobKey(object);
  if (job.empty()) return {};
  return {std::move(job)};
}

// The reconcile queue reports adds and waits (ncclop_workqueue_*), and client-go's queue
// metrics (workqueue_*).
kube::WorkQueueOptions MeasuredQueue(metrics::Metrics* metrics) {
  kube::WorkQueueOptions options;
  if (metrics == nullptr) return options;
  options.on_add = [metrics] { metrics->WorkQueueAdded(); };
  options.on_wait = [metrics](double seconds) { metrics->WorkQueueWaited(seconds); };
  options.on_queued = [metrics] { metrics->QueueQueued(); };
  options.on_taken = [metrics](double seconds) { metrics->QueueTaken(seconds); };
  options.on_done = [metrics](double seconds) { metrics->QueueDone(seconds); };
  options.on_retry = [metrics] { metrics->QueueRetried(); };
  return options;
}

}  // namespace

Controller::Controller(std::shared_ptr<kube::Client> client, ControllerOptions options, metrics::Metrics* metrics)
    : options_(std::move(options)), metrics_(metrics), client_(client), queue_(MeasuredQueue(metrics)) {
  GangApiAnswer gang = FindGangApi(*client, options_.namespace_);
  if (gang.api == desired::GangApi::kNone) {
    logging::Info("controller", DescribeGangApi(gang.api), {{"error", gang.why_not}});
  } else {
    logging::Info("controller", DescribeGangApi(gang.api));
  }
  caches_.gang_api = gang.api;
  for (const Watch& watch : Watches(gang.api)) {
    if (watch.served != nullptr && !Serves(*client, options_.namespace_, watch)) continue;
    auto informer =
        std::make_unique<kube::Informer>(client, watch.resource, InformerOptionsFor(watch, options_.namespace_));
    if (watch.index_by_job) informer->AddIndex(kPodsByJob, OwningJob);
    for (kube::EventHandlers& handlers : HandlersFor(watch)) informer->AddEventHandlers(std::move(handlers));
    caches_.*watch.cache = &informer->store();
    informers_.push_back(std::move(informer));
  }
  caches_.pod_memo = &pod_memo_;
  reconciler_ =
      std::make_unique<Reconciler>(client, caches_, options_.pod_options, metrics_, options_.status_counts_interval);
  publisher_ = std::make_unique<Publisher>(client, caches_, metrics_, &reconciler_->memory());
}

std::vector<kube::EventHandlers> Controller::HandlersFor(const Watch& watch) {
  using kube::ObjectPtr;
  std::vector<kube::EventHandlers> out;
  if (watch.remember_gone_disrupted) {
    out.push_back({.on_add = [this](const ObjectPtr& o) { PodAdded(o); },
                   .before_delete = [this](const ObjectPtr& o) { PodDeleted(o); }});
  }
  if (watch.queue_job && watch.of == Watch::Of::kJobs) {
    out.push_back({[this](const ObjectPtr& o) { EnqueueJob(o); },
                   [this](const ObjectPtr&, const ObjectPtr& o) { EnqueueJob(o); },
                   [this](const ObjectPtr& o) { EnqueueJob(o); }});
  }
  if (watch.queue_job && watch.of == Watch::Of::kChildren) {
    out.push_back({[this](const ObjectPtr& o) { EnqueueOwner(o); },
                   [this](const ObjectPtr&, const ObjectPtr& o) { EnqueueOwner(o); },
                   [this](const ObjectPtr& o) { EnqueueOwner(o); }});
  }
  if (watch.publish_root_id) {
    out.push_back({[this](const ObjectPtr& o) { EnqueuePublish(nullptr, o); },
                   [this](const ObjectPtr& before, const ObjectPtr& o) { EnqueuePublish(before, o); }, nullptr});
  }
  if (watch.remake_when_gone) {
    // Its job makes sure of its children again (Reconciler::ChildChanged).
    out.push_back({nullptr, [this](const ObjectPtr&, const ObjectPtr& o) { ChildChanged(o); },
                   [this](const ObjectPtr& o) { ChildChanged(o); }});
  }
  return out;
}

Controller::~Controller() { Stop(); }

void Controller::EnqueueJob(const kube::ObjectPtr& object) { queue_.Add(kube::ObjectKey(*object)); }

void Controller::EnqueueOwner(const kube::ObjectPtr& object) {
  if (std::string job = observed::OwningJobKey(*object); !job.empty()) queue_.Add(job);
}

void Controller::PodAdded(const kube::ObjectPtr& pod) {
  observed::PodPlace place = observed::PlaceOf(*pod);
  if (!place.job_key.empty()) reconciler_->memory().PodAt(place.job_key, place.attempt, place.index);
}

void Controller::PodDeleted(const kube::ObjectPtr& pod) {
  if (auto gone = observed::GoneDisruptedOf(*pod)) reconciler_->memory().PodGoneDisrupted(*gone);
}

void Controller::ChildChanged(const kube::ObjectPtr& object) {
  std::string job = observed::OwningJobKey(*object);
  if (job.empty()) return;
  reconciler_->ChildChanged(job);
  queue_.Add(job);
}

void Controller::EnqueuePublish(const kube::ObjectPtr& before, const kube::ObjectPtr& now) {
  if (!policy::RootIdAnnounced(before.get(), *now)) return;
  if (std::string job = observed::OwningJobKey(*now); !job.empty()) publish_queue_.Add(job);
}

void Controller::Start() {
  for (const auto& informer : informers_) informer->Start();
  // Workers start only on full caches: a reconcile on a half-listed cache would create pods
  // that already exist or miss a published id.
  starter_ = std::jthread([this](std::stop_token stop) {
    for (const auto& informer : informers_) {
      while (!stop.stop_requested() && !informer->WaitForSync(std::chrono::milliseconds(500))) {
      }
    }
    if (stop.stop_requested()) return;
    synced_ = true;
    logging::Info("controller", "caches synced; starting workers",
                  {{"workers", std::to_string(options_.concurrency)},
                   {"namespace", options_.namespace_.empty() ? "(all)" : options_.namespace_}});
    for (int i = 0; i < options_.concurrency; ++i) workers_.emplace_back([this] { Work(); });
    workers_.emplace_back([this] { PublishWork(); });
  });
  if (options_.gang_api_recheck.count() > 0 && options_.on_gang_api_changed) {
    gang_rechecker_ = std::jthread([this](std::stop_token stop) { RecheckGangApi(stop); });
  }
}

void Controller::RecheckGangApi(std::stop_token stop) {
  std::mutex mu;
  std::condition_variable_any cv;  // never notified: wakes on the interval or on stop
  while (true) {
    {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait_for(lock, stop, options_.gang_api_recheck, [&] { return stop.stop_requested(); });
    }
    if (stop.stop_requested()) return;
    const GangApiAnswer now = FindGangApi(*client_, options_.namespace_);
    // An API server that is restarting or overloaded says nothing about what it serves.
    if (now.api == caches_.gang_api || !now.certain) continue;
    // The informers, the caches and every job's pods were made for the version found at start:
    // the owner (the manager) restarts the operator, which asks afresh.
    logging::Warn("controller", "the gang scheduling API the API server serves changed",
                  {{"was", DescribeGangApi(caches_.gang_api)}, {"now", DescribeGangApi(now.api)}});
    options_.on_gang_api_changed();
    return;
  }
}

void Controller::Work() {
  while (auto key = queue_.Get()) {
    auto started = std::chrono::steady_clock::now();
    metrics_->ReconcileStarted();
    const ReconcileResult result = reconciler_->Reconcile(*key);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    // controller-runtime's words for each outcome (controller_runtime_reconcile_total's result).
    metrics::ReconcileEnd end = metrics::ReconcileEnd::kSuccess;
    switch (result.outcome()) {
      case ReconcileResult::Outcome::kDone:
        queue_.Forget(*key);
        break;
      case ReconcileResult::Outcome::kRequeueAfter:
        end = metrics::ReconcileEnd::kRequeueAfter;
        queue_.Forget(*key);
        queue_.AddAfter(*key, result.requeue_after());
        break;
      case ReconcileResult::Outcome::kStaleCache:
        // Not a failure: the cache is behind our own writes; look again shortly.
        end = metrics::ReconcileEnd::kRequeue;
        queue_.AddAfter(*key, std::chrono::milliseconds(200));
        break;
      case ReconcileResult::Outcome::kWaitingForLeftover:
      case ReconcileResult::Outcome::kError:
        end = metrics::ReconcileEnd::kError;
        logging::Warn("controller", "reconcile failed; will retry", {{"job", *key}, {"error", result.status().ToString()}});
        queue_.AddRateLimited(*key);
        break;
    }
    metrics_->ReconcileDone(seconds, end);
    queue_.Done(*key);
  }
}

void Controller::PublishWork() {
  while (auto key = publish_queue_.Get()) {
    auto published = publisher_->Publish(*key);
    if (!published.ok()) {
      // No retry here: the pod event that triggered this also queued the full reconcile,
      // which publishes by itself.
      publish_queue_.Forget(*key);
      logging::Warn("controller", "fast id publish failed; the reconcile will publish",
                    {{"job", *key}, {"error", published.status().ToString()}});
    } else if (*published == Publisher::Outcome::kRetrySoon) {
      // Pods are still being created: look again after a doubling delay (5 ms, 10 ms, ...),
      // which also bounds the polling of a job whose pods cannot be created.
      publish_queue_.AddRateLimited(*key);
    } else {
      publish_queue_.Forget(*key);
      if (*published == Publisher::Outcome::kPublished) queue_.Add(*key);  // status and the IdPublished event
    }
    publish_queue_.Done(*key);
  }
}

void Controller::Stop() {
  if (stopping_.exchange(true)) return;
  starter_.request_stop();
  if (starter_.joinable()) starter_.join();
  gang_rechecker_.request_stop();
  if (gang_rechecker_.joinable()) gang_rechecker_.join();
  queue_.ShutDown();
  publish_queue_.ShutDown();
  workers_.clear();  // joins; a reconcile in flight finishes its current API call sequence
  for (const auto& informer : informers_) informer->Stop();
}

std::size_t Controller::QueueDepth() const { return queue_.Len(); }

kube::WorkQueueLoad Controller::QueueLoad() const { return queue_.Load(); }

std::vector<metrics::JobSample> Controller::JobSamples() const {
  std::vector<metrics::JobSample> out;
  const api::Time now = api::Clock::now();
  for (const kube::ObjectPtr& job : caches_.jobs->List()) {
    if (auto sample = metrics::SampleJob(*job, now)) out.push_back(std::move(*sample));
  }
  return out;
}

std::map<std::string, int> Controller::JobsByState() const {
  std::map<std::string, int> out;
  for (const kube::ObjectPtr& job : caches_.jobs->List()) {
    std::string state;
    if (auto st = job->find("status"); st != job->end() && st->is_object()) state = st->value("state", "");
    ++out[state];
  }
  return out;
}

}  // namespace ncclop::controller

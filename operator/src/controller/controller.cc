#include "controller/controller.h"

#include "contract/names.h"
#include "cache/trim.h"
#include "logging/log.h"
#include "observed/ownership.h"
#include "policy/fast_publish.h"

namespace ncclop::controller {
namespace {

std::string JobLabelSelector() { return std::string(contract::kLabelJobName); }  // "has the label"

// Whether the API server serves `resource` and lets us list it (ours only: the informer lists them
// again at once), logged either way. Checked once, at start, for the optional APIs below.
bool ServesResource(kube::Client& client, const std::string& ns, const kube::Resource& resource,
                    const char* served, const char* not_served) {
  kube::ListOptions options;
  options.label_selector = JobLabelSelector();
  auto listed = client.List(resource, ns, options);
  if (listed.ok()) {
    logging::Info("controller", served);
    return true;
  }
  logging::Info("controller", not_served, {{"error", listed.status().ToString()}});
  return false;
}

// Kueue's Workloads: only then are jobs labelled kueue.x-k8s.io/queue-name admitted through a Workload.
bool ServesKueueWorkloads(kube::Client& client, const std::string& ns) {
  return ServesResource(client, ns, kKueueWorkloads,
                        "Kueue Workloads are served: jobs with a queue label wait for admission",
                        "Kueue Workloads are not served (or not allowed): the queue label is ignored");
}

// scheduling.k8s.io/v1alpha1 Workloads (Kubernetes 1.35+ with the GenericWorkload gate): then jobs
// with spec.gangScheduling Auto are gang scheduled (desired/gang_workload.h).
bool ServesGangWorkloads(kube::Client& client, const std::string& ns) {
  return ServesResource(
      client, ns, kGangWorkloads,
      "scheduling.k8s.io/v1alpha1 Workloads are served: jobs are gang scheduled (spec.gangScheduling Auto)",
      "scheduling.k8s.io/v1alpha1 Workloads are not served (or not allowed): no native gang scheduling");
}

// The reconcile queue reports adds and waits (ncclop_workqueue_*).
kube::WorkQueueOptions MeasuredQueue(metrics::Metrics* metrics) {
  kube::WorkQueueOptions options;
  if (metrics == nullptr) return options;
  options.on_add = [metrics] { metrics->WorkQueueAdded(); };
  options.on_wait = [metrics](double seconds) { metrics->WorkQueueWaited(seconds); };
  return options;
}

}  // namespace

Controller::Controller(std::shared_ptr<kube::Client> client, ControllerOptions options, metrics::Metrics* metrics)
    : options_(std::move(options)), metrics_(metrics), queue_(MeasuredQueue(metrics)) {
  kube::InformerOptions job_opts;
  job_opts.namespace_ = options_.namespace_;
  job_opts.name = "nccljobs";
  // A periodic resync is the safety net for anything a watch missed and for TTL/backoff
  // timers lost with a restart.
  job_opts.resync_period = std::chrono::seconds(300);
  jobs_ = std::make_unique<kube::Informer>(client, kNcclJobs, job_opts);

  kube::InformerOptions child_opts;
  child_opts.namespace_ = options_.namespace_;
  child_opts.label_selector = JobLabelSelector();
  child_opts.name = "pods";
  // Only what observed/pod.cc reads of a pod is cached (see cache/trim.h); smaller list
  // pages bound the memory of a relist of full pods.
  child_opts.transform = cache::TrimPod;
  child_opts.list_page_size = 100;
  // TrimPod drops the spec too: a watched pod's spec (~40 % of it as served) is not parsed.
  child_opts.drop_at_decode = {"spec"};
  pods_ = std::make_unique<kube::Informer>(client, kube::resources::kPods, child_opts);
  child_opts.drop_at_decode.clear();
  child_opts.name = "configmaps";
  // ConfigMaps are written back whole (conditional update), so they are cached whole.
  child_opts.transform = nullptr;
  child_opts.list_page_size = 500;
  configmaps_ = std::make_unique<kube::Informer>(client, kube::resources::kConfigMaps, child_opts);

  if (ServesKueueWorkloads(*client, options_.namespace_)) {
    child_opts.name = "workloads";
    kueue_workloads_ = std::make_unique<kube::Informer>(client, kKueueWorkloads, child_opts);
  }

  pods_->AddIndex(kPodsByJob, [](const nlohmann::json& pod) -> std::vector<std::string> {
    std::string job = observed::OwningJobKey(pod);
    if (job.empty()) return {};
    return {std::move(job)};
  });

  jobs_->AddEventHandlers({[this](const kube::ObjectPtr& o) { EnqueueJob(o); },
                           [this](const kube::ObjectPtr&, const kube::ObjectPtr& o) { EnqueueJob(o); },
                           [this](const kube::ObjectPtr& o) { EnqueueJob(o); }});
  kube::EventHandlers owner_handlers{[this](const kube::ObjectPtr& o) { EnqueueOwner(o); },
                                     [this](const kube::ObjectPtr&, const kube::ObjectPtr& o) { EnqueueOwner(o); },
                                     [this](const kube::ObjectPtr& o) { EnqueueOwner(o); }};
  pods_->AddEventHandlers(owner_handlers);
  pods_->AddEventHandlers({[this](const kube::ObjectPtr& o) { EnqueuePublish(nullptr, o); },
                           [this](const kube::ObjectPtr& before, const kube::ObjectPtr& o) { EnqueuePublish(before, o); },
                           nullptr});
  configmaps_->AddEventHandlers(owner_handlers);
  if (kueue_workloads_) kueue_workloads_->AddEventHandlers(owner_handlers);

  const bool gang_served = ServesGangWorkloads(*client, options_.namespace_);
  // A child EnsureChildren makes that is deleted or changed (its owner) has its job make sure of
  // its children again (Reconciler::ChildChanged).
  kube::EventHandlers changed_handlers{nullptr, [this](const kube::ObjectPtr&, const kube::ObjectPtr& o) { ChildChanged(o); },
                                       [this](const kube::ObjectPtr& o) { ChildChanged(o); }};
  if (gang_served) {
    child_opts.name = "scheduling-workloads";
    gang_workloads_ = std::make_unique<kube::Informer>(client, kGangWorkloads, child_opts);
    gang_workloads_->AddEventHandlers(owner_handlers);
    gang_workloads_->AddEventHandlers(changed_handlers);
  }
  // Only a deletion (or a change of owner) of these matters. Only their metadata is cached.
  child_opts.transform = cache::TrimToOwnership;
  auto watch_child = [&](std::unique_ptr<kube::Informer>& informer, const kube::Resource& resource, const char* name) {
    child_opts.name = name;
    informer = std::make_unique<kube::Informer>(client, resource, child_opts);
    informer->AddEventHandlers(changed_handlers);
  };
  watch_child(services_, kube::resources::kServices, "services");
  watch_child(roles_, kube::resources::kRoles, "roles");
  watch_child(role_bindings_, kube::resources::kRoleBindings, "rolebindings");
  watch_child(service_accounts_, kube::resources::kServiceAccounts, "serviceaccounts");

  auto store = [](const std::unique_ptr<kube::Informer>& informer) -> const kube::Store* {
    return informer ? &informer->store() : nullptr;
  };
  Caches caches{store(jobs_),     store(pods_),  store(configmaps_),    store(kueue_workloads_),        gang_served,
                store(gang_workloads_), store(services_), store(roles_), store(role_bindings_),
                store(service_accounts_),     &pod_memo_};
  reconciler_ = std::make_unique<Reconciler>(client, caches, options_.pod_options, metrics_);
  publisher_ = std::make_unique<Publisher>(client, caches, metrics_);
}

Controller::~Controller() { Stop(); }

void Controller::EnqueueJob(const kube::ObjectPtr& object) { queue_.Add(kube::ObjectKey(*object)); }

void Controller::EnqueueOwner(const kube::ObjectPtr& object) {
  if (std::string job = observed::OwningJobKey(*object); !job.empty()) queue_.Add(job);
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
  for (kube::Informer* inf : Informers()) inf->Start();
  // Workers start only on full caches: a reconcile on a half-listed cache would create pods
  // that already exist or miss a published id.
  starter_ = std::jthread([this](std::stop_token stop) {
    for (kube::Informer* inf : Informers()) {
      while (!stop.stop_requested() && !inf->WaitForSync(std::chrono::milliseconds(500))) {
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
}

void Controller::Work() {
  while (auto key = queue_.Get()) {
    auto started = std::chrono::steady_clock::now();
    const ReconcileResult result = reconciler_->Reconcile(*key);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    bool ok = true;
    switch (result.outcome()) {
      case ReconcileResult::Outcome::kDone:
        queue_.Forget(*key);
        break;
      case ReconcileResult::Outcome::kRequeueAfter:
        queue_.Forget(*key);
        queue_.AddAfter(*key, result.requeue_after());
        break;
      case ReconcileResult::Outcome::kStaleCache:
        // Not a failure: the cache is behind our own writes; look again shortly.
        queue_.AddAfter(*key, std::chrono::milliseconds(200));
        break;
      case ReconcileResult::Outcome::kWaitingForLeftover:
      case ReconcileResult::Outcome::kError:
        ok = false;
        logging::Warn("controller", "reconcile failed; will retry", {{"job", *key}, {"error", result.status().ToString()}});
        queue_.AddRateLimited(*key);
        break;
    }
    metrics_->ReconcileDone(seconds, ok);
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
  queue_.ShutDown();
  publish_queue_.ShutDown();
  workers_.clear();  // joins; a reconcile in flight finishes its current API call sequence
  for (kube::Informer* inf : Informers()) inf->Stop();
}

std::vector<kube::Informer*> Controller::Informers() const {
  std::vector<kube::Informer*> out;
  for (kube::Informer* inf : {jobs_.get(), pods_.get(), configmaps_.get(), kueue_workloads_.get(), gang_workloads_.get(),
                              services_.get(), roles_.get(), role_bindings_.get(), service_accounts_.get()}) {
    if (inf != nullptr) out.push_back(inf);
  }
  return out;
}

std::size_t Controller::QueueDepth() const { return queue_.Len(); }

std::map<std::string, int> Controller::JobsByState() const {
  std::map<std::string, int> out;
  for (const kube::ObjectPtr& job : jobs_->store().List()) {
    std::string state;
    if (auto st = job->find("status"); st != job->end() && st->is_object()) state = st->value("state", "");
    ++out[state];
  }
  return out;
}

}  // namespace ncclop::controller

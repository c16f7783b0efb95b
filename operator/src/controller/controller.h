// The running controller: one informer per row of the watch table (controller/watches.h:
// NcclJobs, their pods, ConfigMaps, Services, Roles, RoleBindings, ServiceAccounts and, where
// served, Kueue's Workloads and the gang scheduler's Workloads and PodGroups) feeds a work queue of job keys;
// `concurrency` workers reconcile, never the same key twice at once.
// A second queue, with its own worker, carries the id publish fast path (publisher.h): a root
// pod's new id is published while a long reconcile of its job may still hold the job's key.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "controller/publisher.h"
#include "controller/reconciler.h"
#include "controller/watches.h"
#include "metrics/job_samples.h"
#include "kube/informer.h"
#include "kube/workqueue.h"

namespace ncclop::controller {

struct ControllerOptions {
  std::string namespace_;  // "" = all namespaces
  int concurrency = 4;
  desired::PodOptions pod_options;
  // How often the running controller asks again which gang scheduling API is served
  // (controller/gang_api.h); on a change it calls on_gang_api_changed once (the manager exits
  // so that a restart follows the new one). Zero or no callback: never.
  std::chrono::seconds gang_api_recheck{60};
  // A job's status that changed in its pod counts alone is written at most once per this long
  // (status/write_pace.h); zero: at once.
  std::chrono::seconds status_counts_interval{1};
  std::function<void()> on_gang_api_changed;
};

class Controller {
 public:
  Controller(std::shared_ptr<kube::Client> client, ControllerOptions options, metrics::Metrics* metrics);
  ~Controller();  // Stop()

  void Start();  // informers, then workers once the caches are synced
  void Stop();   // drains nothing: the next leader (or restart) picks up from the API server
  bool Synced() const { return synced_.load(); }
  // Jobs in the cache by status.state, for the ncclop_jobs gauge.
  std::map<std::string, int> JobsByState() const;
  // Each job in the cache, for the ncclop_job_* series.
  std::vector<metrics::JobSample> JobSamples() const;
  // Jobs waiting in the reconcile queue, for ncclop_workqueue_depth.
  std::size_t QueueDepth() const;
  // The reconcile queue in client-go's terms, for workqueue_*.
  kube::WorkQueueLoad QueueLoad() const;
  int Concurrency() const { return options_.concurrency; }

 private:
  void EnqueueJob(const kube::ObjectPtr& object);
  void EnqueueOwner(const kube::ObjectPtr& object);
  // A child of a job (Service, Role, RoleBinding, ServiceAccount, gang Workload or PodGroup) was deleted or changed.
  void ChildChanged(const kube::ObjectPtr& object);
  // The pods watch's remember_gone_disrupted (controller/watches.h).
  void PodAdded(const kube::ObjectPtr& pod);
  void PodDeleted(const kube::ObjectPtr& pod);
  void EnqueuePublish(const kube::ObjectPtr& before, const kube::ObjectPtr& now);
  // What an event of a watched object does (the row's reactions, in the row's order).
  std::vector<kube::EventHandlers> HandlersFor(const Watch& watch);
  void Work();
  void PublishWork();
  void RecheckGangApi(std::stop_token stop);

  ControllerOptions options_;
  metrics::Metrics* metrics_;
  std::shared_ptr<kube::Client> client_;
  kube::WorkQueue queue_;
  kube::WorkQueue publish_queue_;
  // One per row of Watches() whose API is served, in the table's order (start, sync, stop).
  std::vector<std::unique_ptr<kube::Informer>> informers_;
  Caches caches_;  // their stores
  observed::PodMemo pod_memo_;  // shared by the reconciler and the publisher
  std::unique_ptr<Reconciler> reconciler_;
  std::unique_ptr<Publisher> publisher_;
  std::atomic<bool> synced_{false};
  std::atomic<bool> stopping_{false};
  std::jthread starter_;
  std::jthread gang_rechecker_;
  std::vector<std::jthread> workers_;
};

}  // namespace ncclop::controller

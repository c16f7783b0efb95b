// The running controller: informers (NcclJobs, their pods, ConfigMaps, Services, Roles,
// RoleBindings, ServiceAccounts and, where served, Workloads) feed a work queue of job keys; `concurrency` workers reconcile, never the same key twice at once.
// A second queue, with its own worker, carries the id publish fast path (publisher.h): a root
// pod's new id is published while a long reconcile of its job may still hold the job's key.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "controller/publisher.h"
#include "controller/reconciler.h"
#include "kube/informer.h"
#include "kube/workqueue.h"

namespace ncclop::controller {

struct ControllerOptions {
  std::string namespace_;  // "" = all namespaces
  int concurrency = 4;
  desired::PodOptions pod_options;
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
  // Jobs waiting in the reconcile queue, for ncclop_workqueue_depth.
  std::size_t QueueDepth() const;

 private:
  void EnqueueJob(const kube::ObjectPtr& object);
  void EnqueueOwner(const kube::ObjectPtr& object);
  // A child of a job (Service, Role, RoleBinding, ServiceAccount, gang Workload) was deleted or changed.
  void ChildChanged(const kube::ObjectPtr& object);
  void EnqueuePublish(const kube::ObjectPtr& before, const kube::ObjectPtr& now);
  void Work();
  void PublishWork();
  // Every informer this controller runs (those of APIs not served are absent), in start order.
  std::vector<kube::Informer*> Informers() const;

  ControllerOptions options_;
  metrics::Metrics* metrics_;
  kube::WorkQueue queue_;
  kube::WorkQueue publish_queue_;
  std::unique_ptr<kube::Informer> jobs_;
  std::unique_ptr<kube::Informer> pods_;
  std::unique_ptr<kube::Informer> configmaps_;
  std::unique_ptr<kube::Informer> kueue_workloads_;  // only when Kueue is served
  std::unique_ptr<kube::Informer> gang_workloads_;  // only when native gang scheduling is served
  // The job's other children, watched so that one deleted by hand is made again at once.
  std::unique_ptr<kube::Informer> services_;
  std::unique_ptr<kube::Informer> roles_;
  std::unique_ptr<kube::Informer> role_bindings_;
  std::unique_ptr<kube::Informer> service_accounts_;
  observed::PodMemo pod_memo_;  // shared by the reconciler and the publisher
  std::unique_ptr<Reconciler> reconciler_;
  std::unique_ptr<Publisher> publisher_;
  std::atomic<bool> synced_{false};
  std::atomic<bool> stopping_{false};
  std::jthread starter_;
  std::vector<std::jthread> workers_;
};

}  // namespace ncclop::controller

// What one reconcile should do (policy/decide.h makes it). The reconciler
// (controller/reconciler.cc, Carry) carries out a Plan in a fixed order that keeps every crash
// point safe:
//   1. the per-job children (ServiceAccount, Role, RoleBinding, Service, the gang's scheduling
//      Workload), and the Kueue Workload of a queued job;
//   2. ConfigMap: create/reset to status.attempt, or publish the id (so a new attempt's
//      ConfigMap never holds an old id by the time its pods exist);
//   3. status (a new attempt is recorded here, before any of its pods exists; IdPublished is
//      derived again from the ConfigMap if a crash loses it);
//   4. events;  5. delete pods;  6. move pods to the attempt in place, create pods;
//   7. the Kueue Workload: marked Finished, its evicted quota released, or (spec.suspend)
//      deactivated or activated again; its PodsReady condition;  8. delete the job (TTL).
// Names are reused: pod i of an attempt is created only once no pod holds its name; the id is
// published only once no pod of another attempt is left.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "api/nccl_job.h"
#include "desired/configmap.h"
#include "policy/admission.h"

namespace ncclop::policy {

struct Event {
  std::string type;  // "Normal" or "Warning"
  std::string reason;
  std::string message;
};

struct Plan {
  api::NcclJobStatus status;  // the status the job should have (written when it differs)
  bool ensure_children = false;  // the env ConfigMap, Service, ServiceAccount, Role, RoleBinding, gang objects
  // Set when ConfigMap data must be (re)written for status.attempt: with the id to publish,
  // or without one (a new attempt resets it).
  bool write_configmap = false;
  std::optional<desired::PublishedId> publish;
  std::vector<std::string> delete_pods;
  std::vector<int> create_pods;  // indices, for status.attempt
  bool create_in_place = false;  // the new pods restart in place (desired::Pod's in_place)
  // Pods moved to status.attempt in place: their attempt label and their
  // nccl.dev/restarts-before-attempt annotation are patched; their sidecars restart them.
  struct PodMove {
    std::string name;
    int restarts_before = 0;
  };
  std::vector<PodMove> move_pods;
  std::vector<Event> events;
  bool delete_job = false;
  // Jobs in a Kueue queue: create the Workload (desired/kueue_workload.h) if missing; once the job
  // has finished, mark it Finished (reason Succeeded or Failed) so Kueue releases the quota.
  bool ensure_kueue_workload = false;
  struct KueueWorkloadFinish {
    std::string reason;  // "Succeeded" or "Failed"
    std::string message;
  };
  std::optional<KueueWorkloadFinish> finish_kueue_workload;
  // Kueue evicted the Workload and every pod of the job is gone: clear its quota reservation
  // (policy/admission.h, ReleasesEvictedQuota) so Kueue queues it again.
  bool release_kueue_quota = false;
  // spec.suspend: the Workload's spec.active to write (policy/admission.h, KueueWorkloadActiveFor).
  std::optional<bool> set_kueue_workload_active;
  // The Kueue Workload's PodsReady condition to write (policy/admission.h, PodsReadyFor).
  std::optional<KueuePodsReady> set_kueue_pods_ready;
  std::optional<std::chrono::seconds> requeue_after;
  // Facts for metrics.
  bool attempt_started = false;
  bool restarted = false;  // an attempt failed and counts in status.restarts
  bool disrupted = false;  // an attempt was ended by a disruption (status.disruptions)
  std::optional<double> id_publish_latency_seconds;
};

}  // namespace ncclop::policy

// What the controller watches, as one table (controller-runtime's For/Owns/Watches as data):
// one row per watched kind says which objects, what the cache keeps of them, how the cache is
// indexed, what an event does and whether the API may be absent. The controller runs one
// informer per row, in the table's order (start, cache-sync wait, stop); a new watch is one row
// of kWatches (watches.cc) and, for the code that reads its cache, one member of Caches.
#pragma once

#include <string>
#include <vector>

#include "controller/observe.h"
#include "kube/informer.h"

namespace ncclop::controller {

struct Watch {
  const char* name;  // the informer's name in logs
  kube::Resource resource;
  // The NcclJobs themselves (every one, resynced every 300 s) or a job's children (those with
  // the job label).
  enum class Of { kJobs, kChildren, kNodes };
  Of of = Of::kChildren;
  enum class Keep {
    kWhole,      // the object as served (written back whole with a conditional update)
    kPodFacts,   // what observed/pod.cc reads (cache::TrimPod; the spec is skipped unparsed)
    kOwnership,  // whether it exists and whose it is (cache::TrimToOwnership)
    kNodeFeatures,  // whether it takes pods and what it declares (cache::TrimNode)
  };
  Keep keep = Keep::kWhole;
  bool index_by_job = false;  // the cache is indexed by owning job (kPodsByJob)
  // What an event of one does, in this order:
  // A pod deleted while disrupted is remembered (JobMemory::PodGoneDisrupted) before it leaves the
  // cache: a reconcile that finds it gone knows why. A pod added takes that back for its index.
  bool remember_gone_disrupted = false;
  bool queue_job = false;         // queues its job (itself, or the job that owns it)
  bool publish_root_id = false;   // a root pod's new id queues the id fast path (publisher.h)
  bool remake_when_gone = false;  // a child EnsureChildren makes: changed or deleted, it is made again
  // An API that may not be served (Kueue): asked once at start; unserved, it is not watched and its
  // cache stays null. The log lines for either answer; null: always served (the gang scheduler's
  // rows are there only for the version found served, controller/gang_api.h).
  const char* served = nullptr;
  const char* not_served = nullptr;
  // Where the reconciler and the publisher find its cache.
  const kube::Store* Caches::* cache = nullptr;
};

// Every watch, in start order, with the gang scheduler's Workloads and PodGroups in version `gang`
// (none for kNone; PodGroups only where the version has them).
std::vector<Watch> Watches(desired::GangApi gang);

// The informer a row asks for, in namespace `ns` ("" = all).
kube::InformerOptions InformerOptionsFor(const Watch& watch, const std::string& ns);

}  // namespace ncclop::controller

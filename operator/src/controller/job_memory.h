// What the reconciler remembers of each job between reconciles that no object in the cluster
// holds, by job key (namespace/name), each fact for the job UID it was learnt for:
//   - the children EnsureChildren made sure of, to spare the API server five creates per
//     reconcile, and the last change of one of them (ChildChanged) not yet looked at;
//   - the verdict that the job's pods cannot be created (policy/pod_refusal.h), and since when
//     creates of its current attempt have been refused as Forbidden;
//   - the priority class its Kueue Workload needs that did not exist when last read;
//   - the API server's warnings on its pod creates already reported (one event per text);
//   - when its status was last written, and when a reconcile last held a change of its counts
//     back (status/write_pace.h paces those writes, and the job's reconciles while one is held);
//   - its pods of one attempt whose delete event showed them disrupted (a reconcile that comes
//     after the delete sees them only gone).
// One lock for all of it; Forget(job) drops all of it once the job is gone. A restart forgets
// everything and learns it again (a child made sure of again, a create refused again, a class
// read again). Decide reads its part through Recall (policy::Remembered), never this object.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "api/nccl_job.h"
#include "observed/pod.h"
#include "policy/decide.h"

namespace ncclop::controller {

class JobMemory {
 public:
  // What Decide is told of the job (its verdict and its missing priority class).
  policy::Remembered Recall(const api::NcclJob& job);

  // The verdict that the job's pods cannot be created; empty when none. Dropped once the cache
  // shows the job finished (the Failed status was written, so a lost status write cannot lose
  // it), when the job was recreated or its spec changed since.
  policy::PodCreateVerdict VerdictFor(const api::NcclJob& job);
  void RememberVerdict(const api::NcclJob& job, policy::PodCreateVerdict verdict);
  // A Forbidden create of the job's current attempt: how long creates of that attempt have been
  // refused (0 at the first).
  std::chrono::seconds ForbiddenFor(const api::NcclJob& job, int attempt);
  // A round of creates was let in: a later refusal starts a new clock.
  void PodsLetIn(const std::string& key);

  // Whether the job's children were made sure of for its UID, and the number of their last
  // change not yet looked at (0: none).
  struct Children {
    bool ensured = false;
    std::uint64_t change = 0;
  };
  Children ChildrenOf(const std::string& key, const std::string& uid);
  // Made sure of for `uid`; `seen` (ChildrenOf's change) is cleared unless a newer one came.
  void ChildrenEnsured(const std::string& key, const std::string& uid, std::uint64_t seen);
  // Clears the job's change `seen` (0: none) unless a newer one came meanwhile.
  void ClearChildChange(const std::string& key, std::uint64_t seen);
  void ChildChanged(const std::string& key);

  // The priority class the job's Kueue Workload needs does not exist (`message` says which);
  // true when that is news (another class, or another job UID).
  bool PriorityClassMissing(const api::NcclJob& job, const std::string& message);
  // It exists now; true when one was remembered missing.
  bool PriorityClassFound(const std::string& key);

  // A warning the API server gave on creating the job's pods; true the first time for the job's
  // UID, so each text is reported once however many pods and attempts repeat it. At most
  // kMaxApiWarnings texts are kept per job: past that, nothing is news.
  static constexpr std::size_t kMaxApiWarnings = 32;
  bool FirstApiWarning(const api::NcclJob& job, const std::string& text);

  // The job's status was written now; the time since (nullopt: not written by this process for
  // the job's UID).
  void StatusWritten(const api::NcclJob& job);
  std::optional<std::chrono::steady_clock::duration> SinceStatusWrite(const api::NcclJob& job);
  // A reconcile of the job held a change of its counts back (now), or wrote or had nothing to
  // write (cleared); the time since the last that held one back, by job key (nullopt: none since).
  void CountsHeld(const std::string& key, bool held);
  std::optional<std::chrono::steady_clock::duration> SinceCountsHeld(const std::string& key);

  // This process wrote the id of the job's `attempt` (Remembered::id_written_attempt).
  void IdWritten(const api::NcclJob& job, int attempt);

  // A pod of a job was deleted while disrupted (observed::GoneDisruptedOf). Kept for its job UID
  // and the latest attempt only, and only for a job this process already knows (so a delete
  // that comes after Forget keeps nothing) and, once its children were made sure of, of that
  // UID. Recall gives those of the job's current attempt.
  void PodGoneDisrupted(const observed::GoneDisrupted& gone);
  // A pod of the job is at `index` of `attempt` (again): one remembered gone there is no longer.
  void PodAt(const std::string& key, int attempt, int index);

  // The job is gone.
  void Forget(const std::string& key);

 private:
  struct Rejection {
    std::string uid;
    std::int64_t generation = 0;
    policy::PodCreateVerdict verdict;
  };
  struct FirstForbidden {
    std::string uid;
    int attempt = 0;
    std::chrono::steady_clock::time_point at;
  };
  struct MissingClass {
    std::string uid;
    std::string message;
  };
  struct ApiWarnings {
    std::string uid;
    std::set<std::string> texts;
  };
  struct StatusWrite {
    std::string uid;
    std::chrono::steady_clock::time_point at;
  };
  struct Job {
    std::optional<std::string> children_ensured_for;  // the job UID
    std::uint64_t child_change = 0;                   // 0: none since they were made sure of
    std::optional<Rejection> rejection;
    std::optional<FirstForbidden> forbidden;
    std::optional<MissingClass> missing_class;
    ApiWarnings api_warnings;
    std::optional<StatusWrite> status_written;
    std::optional<std::chrono::steady_clock::time_point> counts_held_at;
    std::optional<std::pair<std::string, int>> id_written;  // the job UID, the attempt
    std::string gone_uid;                                   // the job UID gone_disrupted is of
    int gone_attempt = 0;                                   // the attempt gone_disrupted is of
    std::map<int, observed::Disruption> gone_disrupted;     // by index
  };
  policy::PodCreateVerdict VerdictLocked(const std::string& key, const api::NcclJob& job);  // holds mu_

  std::mutex mu_;
  std::map<std::string, Job> jobs_;  // guarded by mu_
  std::uint64_t child_changes_ = 0;  // guarded by mu_
};

}  // namespace ncclop::controller

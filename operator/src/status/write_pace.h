// When the status Decide computed is written (controller/reconciler.cc, Carry). The pod counts
// follow every pod's status, and a restart in place changes each pod's about five times (its
// kubelet's writes): a 4096-pod job wrote its status 1,114 times for one such restart, each
// write sent to every watcher of NcclJobs and a line in `kubectl get nccljobs -w`. A change of
// the counts alone (ready, active, succeeded, failed, and the wording of a condition whose
// status and reason stay, as Running's "k of n pods are running") is written at most once per
// interval per job, the newest value always (the reconcile looks again when the interval is
// over); any other change (state, attempt, restarts, a condition's status or reason, the
// published id, progress, a time) is written at once, with the counts of the moment.
#pragma once

#include <chrono>
#include <optional>

#include "api/nccl_job.h"

namespace ncclop::status {

// Whether `desired` differs from `written` in the counts alone (above); false when they are equal.
bool OnlyCountsDiffer(const api::NcclJobStatus& written, const api::NcclJobStatus& desired);

struct WritePace {
  enum class When { kNothingToWrite, kNow, kLater };
  When when = When::kNothingToWrite;
  // kLater: how long until it may be written.
  std::chrono::steady_clock::duration wait{0};
};

// `since_last_write`: the time since this process last wrote the job's status (nullopt: never,
// or forgotten); `interval` zero writes every change at once.
WritePace PaceWrite(const api::NcclJobStatus& written, const api::NcclJobStatus& desired,
                    std::optional<std::chrono::steady_clock::duration> since_last_write,
                    std::chrono::steady_clock::duration interval);

// While a job's counts are held back its pods change fast (an attempt starts or restarts in
// place: five kubelet writes per pod). A reconcile per pod event, each reading every pod and
// no longer slowed by a status write, cost more operator CPU than the writes it saved (1,751
// reconciles instead of 350 for a 1024-pod restart), so while they are held the job is
// reconciled at most once per this long; a pod event in between waits for the rest of it.
inline constexpr std::chrono::milliseconds kHeldReconcileSpacing{100};

// How long a reconcile of a job waits, the last reconcile that held its counts back having been
// `since_held` ago (nullopt: none since the last write); nullopt: it runs now.
std::optional<std::chrono::steady_clock::duration> ReconcileWait(
    std::optional<std::chrono::steady_clock::duration> since_held, std::chrono::steady_clock::duration spacing);

}  // namespace ncclop::status

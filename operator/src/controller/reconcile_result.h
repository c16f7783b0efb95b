// What one Reconcile(key), or one of its steps, ended with: a value the work loop switches on
// (client-go's Result{RequeueAfter}, plus the outcomes this controller tells apart).
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "kube/status.h"

namespace ncclop::controller {

class ReconcileResult {
 public:
  enum class Outcome {
    kDone,                // converged for now (a step: went through, the reconcile goes on)
    kRequeueAfter,        // converged for now; look again after requeue_after (a TTL, a backoff, a retry)
    kStaleCache,          // the cache is behind the API server (own writes, a conflict): look again shortly
    kWaitingForLeftover,  // an object of a deleted job of the same name is still being deleted: back off
    kError,               // an API call failed: back off
  };

  static ReconcileResult Done() { return ReconcileResult(Outcome::kDone); }
  static ReconcileResult RequeueAfter(std::chrono::milliseconds after) {
    ReconcileResult r(Outcome::kRequeueAfter);
    r.requeue_after_ = after;
    return r;
  }
  static ReconcileResult DoneOrRequeue(std::optional<std::chrono::seconds> after) {
    return after ? RequeueAfter(*after) : Done();
  }
  static ReconcileResult StaleCache(std::string what) {
    ReconcileResult r(Outcome::kStaleCache);
    r.status_ = kube::Status::Local("StaleCache", std::move(what));
    return r;
  }
  // `what` (e.g. "ConfigMap demo-nccl") and what happens to it.
  static ReconcileResult WaitingForLeftover(
      const std::string& what, const std::string& how = "of a deleted job of the same name is still being deleted") {
    ReconcileResult r(Outcome::kWaitingForLeftover);
    r.status_ = kube::Status::Local("WaitingForLeftover", what + " " + how);
    return r;
  }
  static ReconcileResult Error(kube::Status status) {
    ReconcileResult r(Outcome::kError);
    r.status_ = std::move(status);
    return r;
  }
  // Done for an ok status, else Error: for steps that only call the API.
  static ReconcileResult From(kube::Status status) { return status.ok() ? Done() : Error(std::move(status)); }

  // For a write of an object the reconcile read from the cache (`what`: "NcclJob", "ConfigMap"):
  // a conflict or its absence means the cache is behind (the object changed or was deleted,
  // e.g. the job deleted mid-reconcile), not a failure to back off from and warn about.
  static ReconcileResult FromWriteOfCached(kube::Status status, const std::string& what) {
    if (status.IsConflict()) return StaleCache(what + " changed since it was cached");
    if (status.IsNotFound()) return StaleCache(what + " was deleted");
    return From(std::move(status));
  }

  Outcome outcome() const { return outcome_; }
  // The step went through: the reconcile goes on to the next one.
  bool done() const { return outcome_ == Outcome::kDone; }
  std::chrono::milliseconds requeue_after() const { return requeue_after_; }
  // Why, for the log and for Error the API server's answer; OK for kDone and kRequeueAfter.
  const kube::Status& status() const { return status_; }

 private:
  explicit ReconcileResult(Outcome outcome) : outcome_(outcome) {}
  Outcome outcome_;
  std::chrono::milliseconds requeue_after_{0};
  kube::Status status_;
};

}  // namespace ncclop::controller

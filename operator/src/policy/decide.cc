// The state machine of one NcclJob. Every branch reads only the job's status and what is
// observed now, never what happened in an earlier call, so any sequence of crashes and
// lost events converges (level-triggered).
#include <algorithm>
#include <charconv>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "contract/names.h"
#include "desired/pod_shape.h"
#include "observed/attempt.h"
#include "observed/progress.h"
#include "policy/admission.h"
#include "policy/decide.h"
#include "policy/failure_policy.h"
#include "policy/publish_rule.h"
#include "policy/start_policy.h"
#include "policy/success_policy.h"
#include "policy/ttl_policy.h"
#include "status/conditions.h"
#include "status/counts.h"

namespace ncclop::policy {
namespace {

using observed::ObservedConfigMap;
using observed::ObservedPod;
using observed::ObservedKueueWorkload;

constexpr const char* kReasonPodDisrupted = "PodDisrupted";
// A rank reported progress and then nothing for failurePolicy.stallTimeoutSeconds.
constexpr const char* kReasonStalled = "Stalled";
constexpr const char* kReasonPriorityClassNotFound = api::reason::kPriorityClassNotFound;

class Decider {
 public:
  Decider(const api::NcclJob& job, const std::vector<ObservedPod>& pods, const ObservedConfigMap& cm, api::Time now,
          const Remembered& remembered, const ObservedKueueWorkload& kueue_workload)
      : job_(job), pods_(pods), cm_(cm), now_(now), remembered_(remembered), kueue_workload_(kueue_workload) {
    plan_.status = job.status;
    plan_.status.observed_generation = job.generation;
    // Recorded at the first look, so every later pod (and the Kueue pod set) keeps this shape
    // whatever operator makes it; a job an older operator started records that one's.
    if (!job.status.Finished()) plan_.status.pod_shape = desired::PodShapeOf(job);
  }

  Plan Run() {
    if (job_.being_deleted) return std::move(plan_);
    if (!job_.spec_error.empty() && !plan_.status.Finished()) {
      Fail("InvalidSpec", job_.spec_error);
    }
    if (!remembered_.pod_create_verdict.empty() && !plan_.status.Finished()) {
      Fail(remembered_.pod_create_verdict.reason, remembered_.pod_create_verdict.message);
    }
    // Suspended, or resuming now: the deadline's clock stands (it restarts on the resume).
    if (!plan_.status.Finished() && !job_.spec.suspend && !st().IsTrue(api::condition::kSuspended)) CheckDeadline();
    ShowProgress();
    if (plan_.status.Finished()) {
      Finished();
    } else if (job_.spec.suspend) {
      Suspend();
    } else {
      Active();
      WakeAtDeadline();
    }
    plan_.release_kueue_quota =
        !job_.queue_name.empty() && ReleasesEvictedQuota(kueue_workload_, plan_.status.Finished(), !pods_.empty());
    if (!job_.queue_name.empty()) {
      plan_.set_kueue_workload_active =
          KueueWorkloadActiveFor(kueue_workload_, job_.spec.suspend, plan_.status.Finished());
      plan_.set_kueue_pods_ready =
          PodsReadyFor(kueue_workload_, plan_.status.Finished(), ReadyPodsOfAttempt(), job_.spec.replicas);
    }
    return std::move(plan_);
  }

 private:
  api::NcclJobStatus& st() { return plan_.status; }
  void Set(const char* type, bool is_true, const std::string& reason, const std::string& message) {
    status::SetCondition(st().conditions, type, is_true, reason, message, job_.generation, now_);
  }
  void Emit(const char* type, const std::string& reason, const std::string& message) {
    plan_.events.push_back({type, reason, message});
  }
  std::string Now() const { return api::FormatTime(now_); }
  // Pods of the current attempt, not being deleted, that are ready or whose trainer succeeded.
  int ReadyPodsOfAttempt() const {
    const std::vector<std::string>& deleting = plan_.delete_pods;
    int n = 0;
    for (const ObservedPod& p : pods_) {
      if (p.attempt != plan_.status.attempt || p.terminating) continue;
      if (std::find(deleting.begin(), deleting.end(), p.name) != deleting.end()) continue;
      if (p.ready || p.trainer_succeeded || p.phase == "Succeeded") n += 1;
    }
    return n;
  }
  static std::string Count(int n, const std::string& noun) {
    return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
  }

  std::optional<api::Time> Deadline() const {
    if (!job_.spec.active_deadline_seconds) return std::nullopt;
    auto started = api::ParseTime(plan_.status.start_time);
    if (!started) return std::nullopt;
    return *started + std::chrono::seconds(*job_.spec.active_deadline_seconds);
  }

  // spec.activeDeadlineSeconds bounds the whole job, every attempt and backoff included.
  void CheckDeadline() {
    auto deadline = Deadline();
    if (!deadline || now_ < *deadline) return;
    Fail("DeadlineExceeded", "the job was active longer than spec.activeDeadlineSeconds (" +
                                 std::to_string(*job_.spec.active_deadline_seconds) + "s since " + st().start_time + ")");
  }

  void WakeAtDeadline() {
    auto deadline = Deadline();
    if (!deadline || plan_.status.Finished()) return;
    auto left = std::chrono::ceil<std::chrono::seconds>(*deadline - now_) + std::chrono::seconds(1);
    if (!plan_.requeue_after || left < *plan_.requeue_after) plan_.requeue_after = left;
  }

  // status.progress follows pod 0's newest report (observed/progress.h), whatever the state: a
  // report may land as the job ends, and an old one stays until a newer one replaces it.
  void ShowProgress() {
    for (const ObservedPod& p : pods_) {
      if (p.index != 0 || p.progress.empty()) continue;
      auto report = observed::ParseProgressAnnotation(p.progress);
      if (report && observed::IsNewerProgress(*report, st().progress)) st().progress = std::move(report);
    }
  }

  // A finished job waits for no id: the condition says so instead of "waiting for pod 0".
  void CloseIdCondition(const std::string& how) {
    if (st().Find(api::condition::kIdPublished) && !st().IsTrue(api::condition::kIdPublished)) {
      Set(api::condition::kIdPublished, false, "JobFinished", "the job " + how + " before an id was published");
    }
  }

  // The pods sorted for the attempt in st() (sorted again only when the attempt changes).
  const observed::AttemptView& View() {
    if (!view_ || view_->attempt != st().attempt) view_ = observed::ViewAttempt(pods_, st().attempt, job_.spec.replicas);
    return *view_;
  }

  void UpdateCounts() {
    status::Counts c = status::CountPods(View());
    st().ready = c.ready;
    st().active = c.active;
    st().succeeded = c.succeeded;
    st().failed = c.failed;
  }

  // A pod that failed in place is running again (its sidecar waits for the next attempt): it is
  // not left for its logs like an ended one, or its trainer would start again and again.
  static bool Ended(const ObservedPod& p) {
    return p.in_place ? p.phase == "Succeeded" || p.phase == "Failed" || p.trainer_succeeded : p.Terminal();
  }

  void DeletePods(bool include_terminal) {
    for (const ObservedPod& p : pods_) {
      if (p.terminating) continue;
      if (include_terminal || !Ended(p)) plan_.delete_pods.push_back(p.name);
    }
  }

  // New pods restart in place (failurePolicy.restartStrategy; Auto asks the nodes).
  bool InPlaceForNewPods() const {
    switch (job_.spec.failure_policy.restart_strategy) {
      case api::RestartStrategy::kInPlace: return true;
      case api::RestartStrategy::kRecreate: return false;
      case api::RestartStrategy::kAuto: return remembered_.nodes_restart_in_place;
    }
    return false;
  }

  // A pod that can serve the next attempt after its kubelet restarts its containers: made for
  // it and still there (not ended, deleted or disrupted).
  bool RestartableInPlace(const ObservedPod& p) const {
    return p.in_place && !p.terminating && p.phase != "Succeeded" && p.phase != "Failed" && !p.disruption &&
           !p.trainer_succeeded && !p.ended_before_its_attempt && !FailedBeforeItsId(p) && p.index >= 0 &&
           p.index < job_.spec.replicas;
  }

  // A pod that failed in its attempt before that attempt's id was out is made again, not restarted
  // in place. Its sidecar may have been killed in its first moments, before it recorded the attempt
  // it entered (served_attempt.h): restarted in place, it would take its next start for the pod's
  // first and enter every later attempt one restart behind the count the operator moves it with,
  // each such restart failing the attempt, up to maxRestarts. A made-again pod starts from its own
  // attempt. Once the id is out every sidecar of the attempt has recorded it, so a later failure
  // keeps its pod. The ConfigMap still names the failed attempt until the next one starts; a pod
  // kept before that keeps its place. The cached ConfigMap may lag behind the fast path's write:
  // this process's memory of its writes and the status's IdPublished say so too.
  bool FailedBeforeItsId(const ObservedPod& p) const {
    if (!p.in_place || !p.failed || p.disruption || p.attempt <= 0 || cm_.attempt > p.attempt) return false;
    const bool out = cm_.Published(p.attempt) || remembered_.id_written_attempt == p.attempt ||
                     (p.attempt == plan_.status.attempt && plan_.status.IsTrue(api::condition::kIdPublished));
    return !out;
  }

  // The trainer restart count a pod moved to the next attempt starts that attempt from. Every pod
  // enters an attempt through one restart of its containers: its sidecar's exit when it sees the
  // attempt (a sidecar that had not started yet does the same, docs/contracts.md), or the
  // restart it already had since its attempt began (its own failure, NCCL's error after another
  // rank's), after which its sidecar takes up the next attempt as it is. A pod that has not made
  // the restart into its current attempt yet makes only that one.
  static int RestartsBeforeNextAttempt(const ObservedPod& p) {
    if (p.trainer_restarts < p.restarts_before) return p.restarts_before;
    return std::max(p.trainer_restarts, p.restarts_before + 1);
  }

  // The pods the next attempt keeps, by index (nullptr: made again). A gang's pods are admitted
  // together, so a gang that would make any pod again makes them all again.
  std::vector<const ObservedPod*> KeptInPlace() const {
    std::vector<const ObservedPod*> kept(job_.spec.replicas > 0 ? job_.spec.replicas : 0, nullptr);
    std::vector<int> seen(kept.size(), 0);
    for (const ObservedPod& p : pods_) {
      if (p.index >= 0 && p.index < job_.spec.replicas && !p.terminating) seen[p.index] += 1;
    }
    for (const ObservedPod& p : pods_) {
      if (RestartableInPlace(p) && seen[p.index] == 1) kept[p.index] = &p;
    }
    if (remembered_.gang_scheduled && std::find(kept.begin(), kept.end(), nullptr) != kept.end()) {
      std::fill(kept.begin(), kept.end(), nullptr);
    }
    return kept;
  }

  static bool IsKept(const std::vector<const ObservedPod*>& kept, const ObservedPod& p) {
    return p.index >= 0 && p.index < static_cast<int>(kept.size()) && kept[p.index] == &p;
  }

  // An attempt ended: its pods go, except those that restart in place.
  void DeletePodsForRestart() {
    const std::vector<const ObservedPod*> kept = KeptInPlace();
    for (const ObservedPod& p : pods_) {
      if (p.terminating) continue;
      if (!IsKept(kept, p)) plan_.delete_pods.push_back(p.name);
    }
  }

  void Fail(const std::string& reason, const std::string& message) {
    st().state = api::state::kFailed;
    if (st().completion_time.empty()) st().completion_time = Now();
    st().restart_after.clear();
    Set(api::condition::kFailed, true, reason, message);
    Set(api::condition::kRunning, false, reason, "the job failed");
    if (st().Find(api::condition::kRestarting)) Set(api::condition::kRestarting, false, reason, "the job failed");
    CloseIdCondition("failed");
    Emit("Warning", reason, message);
  }

  // Terminal pods stay for their logs; running ones (the rest of a fail-fast attempt) go.
  void Finished() {
    RecordPublishedId();  // a job finished by an operator that had not seen the publish
    DeletePods(/*include_terminal=*/false);
    UpdateCounts();
    if (!job_.queue_name.empty() && kueue_workload_.exists && !kueue_workload_.finished) {
      const bool ok = st().IsTrue(api::condition::kSucceeded);
      const api::Condition* end = st().Find(ok ? api::condition::kSucceeded : api::condition::kFailed);
      plan_.finish_kueue_workload =
          Plan::KueueWorkloadFinish{ok ? "Succeeded" : "Failed", end ? end->message : "the job ended"};
    }
    api::NcclJob finished = job_;
    finished.status = st();
    TtlDecision ttl = DecideTtl(finished, now_);
    plan_.delete_job = ttl.delete_now;
    plan_.requeue_after = ttl.check_again_in;
  }

  void Suspend() {
    DeletePods(/*include_terminal=*/true);
    st().active = st().ready = 0;
    if (!st().IsTrue(api::condition::kSuspended)) {
      st().state = api::state::kSuspended;
      st().restart_after.clear();
      const bool ran = st().attempt > 0;
      Set(api::condition::kSuspended, true, "Suspended",
          ran ? "spec.suspend is true; pods were deleted" : "spec.suspend is true; no pods are created");
      Set(api::condition::kRunning, false, "Suspended", "the job is suspended");
      if (st().Find(api::condition::kRestarting)) Set(api::condition::kRestarting, false, "Suspended", "the job is suspended");
      if (st().IsTrue(api::condition::kAdmitted)) {
        Set(api::condition::kAdmitted, false, "Suspended",
            "spec.suspend is true: the admission is given back to queue " + job_.queue_name);
      }
      Emit("Normal", "Suspended",
           ran ? "deleted the pods of attempt " + std::to_string(st().attempt) : "created suspended: no pods until spec.suspend is false");
    }
  }

  void StartAttempt(int attempt, const std::string& why) {
    st().attempt = attempt;
    st().state = api::state::kPending;
    st().attempt_start_time = Now();
    if (st().start_time.empty()) st().start_time = Now();
    st().restart_after.clear();
    st().id_published_time.clear();
    Set(api::condition::kCreated, true, "AttemptStarted", "attempt " + std::to_string(attempt) + " started");
    Set(api::condition::kIdPublished, false, "WaitingForRoot",
        "waiting for pod " + contract::PodName(job_.name, 0) + " to report the id of attempt " + std::to_string(attempt));
    Set(api::condition::kRunning, false, "PodsStarting", "pods of attempt " + std::to_string(attempt) + " are starting");
    if (st().Find(api::condition::kRestarting)) Set(api::condition::kRestarting, false, "AttemptStarted", why);
    plan_.attempt_started = true;
    Emit("Normal", attempt == 1 ? "Created" : "AttemptStarted",
         why + ": creating " + Count(job_.spec.replicas, "pod") + " of attempt " + std::to_string(attempt));
  }

  void Active() {
    plan_.ensure_children = true;
    if (!job_.queue_name.empty() && !Admitted()) return;
    if (st().IsTrue(api::condition::kSuspended)) {
      Set(api::condition::kSuspended, false, "Resumed", "spec.suspend is false");
      Emit("Normal", "Resumed", "the job was resumed");
      st().start_time.clear();  // as for a Job: activeDeadlineSeconds counts from the resume
      StartAttempt(st().attempt + 1, "resumed");
    } else if (st().attempt == 0) {
      if (!job_.misplaced_trainer_annotation.empty()) {
        Emit("Warning", "AnnotationIgnored",
             "annotation " + std::string(contract::kAnnotationTrainerContainer) + "=" + job_.misplaced_trainer_annotation +
                 " is on the NcclJob, where it does nothing; put it on spec.template.metadata.annotations (the trainer is " +
                 job_.spec.trainer_container + ")");
      }
      StartAttempt(1, "new job");
    } else if (st().IsTrue(api::condition::kRestarting)) {
      if (!Backoff()) return;
    } else {
      RecordPublishedId();  // before judging: the attempt may have ended since the id went out
      if (CurrentAttemptEnded()) return;
    }
    Converge();
  }

  // A job in a Kueue queue runs pods only while its Workload is admitted. Waiting, it has no
  // pods; an attempt that loses its admission (Kueue evicted it) ends as a disruption, and the
  // next one starts once Kueue admits the job again. True when admitted.
  bool Admitted() {
    plan_.ensure_kueue_workload = true;
    const std::string& queue = job_.queue_name;
    if (kueue_workload_.admitted) {
      if (!st().IsTrue(api::condition::kAdmitted)) {
        const std::string& cluster_queue = kueue_workload_.cluster_queue;
        const std::string msg =
            "admitted in queue " + queue + (cluster_queue.empty() ? "" : " by ClusterQueue " + cluster_queue);
        Set(api::condition::kAdmitted, true, "Admitted", msg);
        Emit("Normal", "Admitted", msg);
      }
      return true;
    }
    // A copy: Restart below sets conditions, which may move them.
    std::optional<api::Condition> before;
    if (const api::Condition* found = st().Find(api::condition::kAdmitted)) before = *found;
    const bool was_admitted = before && before->status == "True";
    const bool attempt_active = st().attempt > 0 && !st().IsTrue(api::condition::kRestarting) &&
                                !st().IsTrue(api::condition::kSuspended);
    if (was_admitted && attempt_active) {
      st().disruptions += 1;
      plan_.disrupted = true;
      const std::string& eviction = kueue_workload_.eviction;
      const std::string why = eviction.empty() ? std::string("its admission was withdrawn") : eviction;
      Restart(st().attempt, std::chrono::seconds(0), kReasonPodDisrupted,
              "attempt " + std::to_string(st().attempt) + " was disrupted (Kueue: " + why + "); disruption " +
                  std::to_string(st().disruptions) + ", not counted in failurePolicy.maxRestarts",
              "Kueue: " + why);
    } else {
      DeletePods(/*include_terminal=*/true);
      UpdateCounts();
    }
    // A priority class that does not exist keeps the job out of the queue (no Workload) or at its
    // old priority: said in the condition and a Warning, each time the class named changes.
    const bool no_class = !remembered_.priority_class_missing.empty();
    const std::string reason = no_class ? kReasonPriorityClassNotFound : api::reason::kWaitingForAdmission;
    const std::string& waiting = kueue_workload_.waiting;
    const std::string msg = no_class ? remembered_.priority_class_missing
                                     : "waiting for admission in queue " + queue +
                                           (waiting.empty() ? std::string() : ": " + waiting);
    if (!before || before->status == "True" || before->reason != reason || (no_class && before->message != msg)) {
      Emit(no_class ? "Warning" : "Normal", reason, msg);
    }
    Set(api::condition::kAdmitted, false, reason, msg);
    if (!st().IsTrue(api::condition::kRestarting)) {
      st().state = api::state::kPending;
      Set(api::condition::kRunning, false, reason, msg);
    }
    return false;
  }

  // Restarting: the failed attempt's pods go away, then the next attempt starts when the
  // backoff is over. Returns true when the new attempt has started.
  bool Backoff() {
    auto after = api::ParseTime(st().restart_after);
    if (after && now_ < *after) {
      DeletePodsForRestart();
      UpdateCounts();
      plan_.requeue_after = std::chrono::ceil<std::chrono::seconds>(*after - now_);
      return false;
    }
    const api::Condition* restarting = st().Find(api::condition::kRestarting);
    const bool after_disruption = restarting != nullptr && restarting->reason == kReasonPodDisrupted;
    StartAttempt(st().attempt + 1, after_disruption ? "backoff over after disruption " + std::to_string(st().disruptions)
                                                    : "backoff over after restart " + std::to_string(st().restarts));
    return true;
  }

  // Judges the current attempt; true when it just ended (failed or succeeded).
  bool CurrentAttemptEnded() {
    const int attempt = st().attempt;
    std::optional<AttemptFailure> failure =
        FindAttemptFailure(job_.name, View(), cm_.Published(attempt), remembered_.gone_disrupted);
    if (!failure) failure = BlockedStartFailure();
    if (failure) {
      const api::FailurePolicy& fp = job_.spec.failure_policy;
      switch (Judge(fp, *failure, st().restarts, st().disruptions)) {
        case FailureVerdict::kFailFast:
          Fail("FailFastExitCode", failure->detail + "; exit code " + std::to_string(*failure->exit_code) +
                                       " is in failurePolicy.failFastExitCodes, so the job is not restarted");
          DeletePods(false);
          UpdateCounts();
          return true;
        case FailureVerdict::kRestartsExhausted:
          Fail("MaxRestartsExceeded", "attempt " + std::to_string(attempt) + " failed (" + failure->detail + ") and " +
                                          (fp.max_restarts == 0 ? std::string("failurePolicy.maxRestarts is 0")
                                                                : "all " + Count(fp.max_restarts, "restart") +
                                                                      " of failurePolicy.maxRestarts are used"));
          DeletePods(false);
          UpdateCounts();
          return true;
        case FailureVerdict::kDisruptionsExhausted:
          Fail("MaxDisruptionsExceeded",
               "attempt " + std::to_string(attempt) + " was disrupted (" + failure->disruption->kind + ": " +
                   failure->detail + ") and all " + Count(*fp.max_disruptions, "disruption") + " of failurePolicy.maxDisruptions are used");
          DeletePods(false);
          UpdateCounts();
          return true;
        case FailureVerdict::kRestart:
          st().restarts += 1;
          plan_.restarted = true;
          Restart(attempt, RestartBackoff(fp, st().restarts), failure->stalled ? kReasonStalled : "PodFailed",
                  "attempt " + std::to_string(attempt) + (failure->stalled ? " stalled (" : " failed (") +
                      failure->detail + ")",
                  failure->detail);
          return true;
        case FailureVerdict::kRestartAfterDisruption:
          st().disruptions += 1;
          plan_.disrupted = true;
          Restart(attempt, RestartBackoff(fp, st().disruptions), kReasonPodDisrupted,
                  "attempt " + std::to_string(attempt) + " was disrupted (" + failure->disruption->kind + ": " +
                      failure->detail + "); disruption " + std::to_string(st().disruptions) +
                      ", not counted in failurePolicy.maxRestarts",
                  failure->detail);
          return true;
      }
    }
    if (AttemptSucceeded(View())) {
      st().state = api::state::kSucceeded;
      st().completion_time = Now();
      Set(api::condition::kSucceeded, true, "AllTrainersSucceeded",
          "every trainer of attempt " + std::to_string(attempt) + " exited 0");
      Set(api::condition::kRunning, false, "Succeeded", "the job succeeded");
      CloseIdCondition("succeeded");
      Emit("Normal", "Succeeded", "every trainer of attempt " + std::to_string(attempt) + " exited 0");
      UpdateCounts();
      Finished();
      return true;
    }
    return false;
  }

  // Ends the current attempt: its pods go, the next one starts after `wait`.
  void Restart(int attempt, std::chrono::seconds wait, const char* reason, const std::string& what,
               const std::string& detail) {
    st().restart_after = api::FormatTime(now_ + wait);
    st().state = api::state::kRestarting;
    std::string msg = what + "; attempt " + std::to_string(attempt + 1) + " starts in " + std::to_string(wait.count()) + "s";
    Set(api::condition::kRestarting, true, reason, msg);
    Set(api::condition::kRunning, false, reason, detail);
    Emit("Warning", "Restarting", msg);
    DeletePodsForRestart();
    UpdateCounts();
    plan_.requeue_after = wait;
  }

  // A pod the cluster still does not start when the attempt's initTimeoutSeconds are over
  // fails the attempt; before that, a check is scheduled for the deadline (a pod that cannot
  // be scheduled changes no more, so no event would come).
  std::optional<AttemptFailure> BlockedStartFailure() {
    auto blocked = FindBlockedStart(View());
    auto deadline = BlockedStartDeadline(job_);
    if (!blocked || !deadline) return std::nullopt;
    if (now_ < *deadline) {
      RequeueWithin(std::chrono::ceil<std::chrono::seconds>(*deadline - now_));
      return std::nullopt;
    }
    return AttemptFailure{blocked->pod,
                          blocked->detail + " (still after initTimeoutSeconds, " +
                              std::to_string(job_.spec.init_timeout_seconds) + "s)",
                          std::nullopt, std::nullopt};
  }

  void RequeueWithin(std::chrono::seconds wait) {
    if (!plan_.requeue_after || wait < *plan_.requeue_after) plan_.requeue_after = wait;
  }

  // Running=False names the pod that does not start and the cluster's reason; a Warning event
  // says it once per change of that message.
  void ShowBlockedStart(const BlockedStart& blocked) {
    const std::string message =
        blocked.detail + "; the attempt is given up " + std::to_string(job_.spec.init_timeout_seconds) +
        "s after it started (initTimeoutSeconds)";
    const api::Condition* running = st().Find(api::condition::kRunning);
    const bool changed = !running || running->reason != blocked.reason || running->message != message;
    Set(api::condition::kRunning, false, blocked.reason, message);
    if (changed) Emit("Warning", "PodStartBlocked", message);
  }

  // The current attempt runs: stale pods go, missing pods are made, the id is published.
  // Names are reused across attempts, so pod i is made once no pod holds its name any more,
  // not once every stale pod is gone: a restart's creates overlap the removal of the old pods
  // (a 4096-pod restart waited for the last of 4096 removals before its first create). The
  // new pods still wait for the id, which is published only when no stale pod is left
  // (PublishId below), so no trainer of this attempt starts NCCL beside one of the last.
  // A stale pod's GPUs are free before its index is made again: the attempt never asks the
  // scheduler for more than the job's GPUs.
  void Converge() {
    const int attempt = st().attempt;
    const observed::AttemptView& view = View();
    const std::vector<bool> held = NamesHeld();
    const std::vector<const ObservedPod*> kept = KeptInPlace();
    // A pod moved into this attempt that ended before its restart into it is made again; in a
    // gang, so is every pod of the attempt (the id waits for them: it is not out yet).
    if (remembered_.gang_scheduled) {
      const bool remade = std::any_of(view.stale.begin(), view.stale.end(), [&](const ObservedPod* p) {
        return p->attempt == attempt && p->ended_before_its_attempt && !p->terminating;
      });
      for (const ObservedPod* p : view.members) {
        if (remade && !p->terminating) plan_.delete_pods.push_back(p->name);
      }
    }
    for (const ObservedPod* p : view.stale) {
      if (p->terminating) continue;
      const bool moves = IsKept(kept, *p) && !view.by_index.count(p->index);
      if (!moves) {
        plan_.delete_pods.push_back(p->name);
        continue;
      }
      plan_.move_pods.push_back({p->name, RestartsBeforeNextAttempt(*p)});
    }
    for (int i = 0; i < job_.spec.replicas; ++i) {
      if (!view.by_index.count(i) && !held[i]) plan_.create_pods.push_back(i);
    }
    if (!plan_.create_pods.empty()) plan_.create_in_place = InPlaceForNewPods();
    RecordRestartStrategy(view);
    if (cm_.attempt != attempt) plan_.write_configmap = true;  // reset to this attempt, no id
    PublishId(attempt);
    UpdateCounts();
    status::Counts c = status::CountPods(view);
    const int n = job_.spec.replicas;
    if (c.running == n) {
      st().state = api::state::kRunning;
      Set(api::condition::kRunning, true, "AllPodsRunning", "all " + std::to_string(n) + " pods are running");
    } else if (auto blocked = FindBlockedStart(view)) {
      st().state = api::state::kPending;
      ShowBlockedStart(*blocked);
    } else {
      st().state = api::state::kPending;
      Set(api::condition::kRunning, false, "PodsStarting",
          std::to_string(c.running) + " of " + std::to_string(n) + " pods are running");
    }
  }

  // status.restartStrategy: InPlace when every pod of the attempt (kept, moved and new) restarts in place.
  void RecordRestartStrategy(const observed::AttemptView& view) {
    if (view.members.empty() && plan_.move_pods.empty() && plan_.create_pods.empty()) return;
    bool in_place = plan_.create_pods.empty() || plan_.create_in_place;
    for (const ObservedPod* p : view.members) in_place = in_place && p->in_place;
    const std::string strategy = in_place ? "InPlace" : "Recreate";
    if (plan_.attempt_started && !plan_.move_pods.empty()) {
      for (Event& e : plan_.events) {
        if (e.reason != "AttemptStarted") continue;
        const std::size_t made = plan_.create_pods.size();
        e.message = e.message.substr(0, e.message.find(": creating")) + ": restarting " + Count(static_cast<int>(plan_.move_pods.size()), "pod") +
                    " of attempt " + std::to_string(st().attempt) + " in place" +
                    (made > 0 ? " and creating " + Count(static_cast<int>(made), "pod") : std::string());
      }
    }
    st().restart_strategy = strategy;
  }

  // Which of the attempt's pod names (contract::PodName(job, i), i in [0, replicas)) a pod holds,
  // by i: read off each pod's name rather than by building every name (a reconcile of a
  // 4096-pod job ran this on every pod event).
  std::vector<bool> NamesHeld() const {
    const int n = job_.spec.replicas;
    std::vector<bool> held(n > 0 ? n : 0, false);
    const std::string_view job = job_.name;
    for (const ObservedPod& p : pods_) {
      std::string_view name = p.name;
      if (name.size() <= job.size() + 1 || !name.starts_with(job) || name[job.size()] != '-') continue;
      const std::string_view digits = name.substr(job.size() + 1);
      if (digits.size() > 1 && digits[0] == '0') continue;  // PodName writes no leading zero
      int i = -1;
      auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), i);
      if (ec == std::errc() && end == digits.data() + digits.size() && i >= 0 && i < n) held[i] = true;
    }
    return held;
  }

  // Level-triggered: the ConfigMap holding the current attempt's id (the reconciler drops a
  // ConfigMap of another job's UID) means the id was published, whoever wrote it (the fast
  // path, policy/fast_publish.h, or a process that crashed before writing status) and whatever
  // happened since: IdPublished=True with the ConfigMap's publishedAt, and the event, once.
  void RecordPublishedId() {
    const int attempt = st().attempt;
    if (attempt <= 0 || !cm_.Published(attempt)) return;
    if (st().IsTrue(api::condition::kIdPublished) && !st().id_published_time.empty()) return;
    st().id_published_time = cm_.published_at.empty() ? Now() : cm_.published_at;
    Set(api::condition::kIdPublished, true, "Published",
        "the id of attempt " + std::to_string(attempt) + " is in ConfigMap " + contract::ConfigMapName(job_.name));
    Emit("Normal", "IdPublished",
         "published the id of attempt " + std::to_string(attempt) + " from pod " + contract::PodName(job_.name, 0));
  }

  // The id goes out under the one publish rule (policy/publish_rule.h), the fast path's too.
  void PublishId(int attempt) {
    if (cm_.Published(attempt)) {
      RecordPublishedId();
      return;
    }
    PublishDecision decision = DecidePublish(job_, st(), View(), cm_, now_);
    if (!decision.publish) return;
    plan_.write_configmap = true;
    plan_.publish = std::move(decision.publish);
    st().id_published_time = plan_.publish->published_at;
    Set(api::condition::kIdPublished, true, "Published",
        "the id of attempt " + std::to_string(attempt) + " is in ConfigMap " + contract::ConfigMapName(job_.name));
    const std::string from = job_.spec.bootstrap_roots > 1
                                 ? std::to_string(job_.spec.bootstrap_roots) + " root pods"
                                 : "pod " + contract::PodName(job_.name, 0);
    Emit("Normal", "IdPublished", "published the id of attempt " + std::to_string(attempt) + " from " + from);
    if (auto started = api::ParseTime(st().attempt_start_time)) {
      plan_.id_publish_latency_seconds = std::chrono::duration<double>(now_ - *started).count();
    }
  }

  const api::NcclJob& job_;
  const std::vector<ObservedPod>& pods_;
  const ObservedConfigMap& cm_;
  api::Time now_;
  const Remembered& remembered_;
  const ObservedKueueWorkload& kueue_workload_;
  Plan plan_;
  std::optional<observed::AttemptView> view_;
};

}  // namespace

Plan Decide(const api::NcclJob& job, const std::vector<ObservedPod>& pods, const ObservedConfigMap& configmap,
            api::Time now, const Remembered& remembered, const ObservedKueueWorkload& kueue_workload) {
  return Decider(job, pods, configmap, now, remembered, kueue_workload).Run();
}

}  // namespace ncclop::policy

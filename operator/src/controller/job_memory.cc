#include "controller/job_memory.h"

#include "observed/ownership.h"

namespace ncclop::controller {

policy::Remembered JobMemory::Recall(const api::NcclJob& job) {
  const std::string key = observed::JobKey(job.namespace_, job.name);
  std::lock_guard<std::mutex> lock(mu_);
  policy::Remembered out;
  out.pod_create_verdict = VerdictLocked(key, job);
  if (auto it = jobs_.find(key); it != jobs_.end()) {
    const std::optional<MissingClass>& missing = it->second.missing_class;
    if (missing && missing->uid == job.uid) out.priority_class_missing = missing->message;
    const auto& written = it->second.id_written;
    if (written && written->first == job.uid) out.id_written_attempt = written->second;
    const Job& j = it->second;
    if (j.gone_uid == job.uid && j.gone_attempt == job.status.attempt) out.gone_disrupted = j.gone_disrupted;
  }
  return out;
}

void JobMemory::PodGoneDisrupted(const observed::GoneDisrupted& gone) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = jobs_.find(gone.job_key);
  if (it == jobs_.end()) return;
  Job& job = it->second;
  // A late delete of a pod of an earlier job of the same name changes nothing of this one's.
  if (job.children_ensured_for && *job.children_ensured_for != gone.job_uid) return;
  if (job.gone_uid != gone.job_uid || job.gone_attempt < gone.attempt) {
    job.gone_uid = gone.job_uid;
    job.gone_attempt = gone.attempt;
    job.gone_disrupted.clear();
  }
  if (job.gone_attempt == gone.attempt) job.gone_disrupted[gone.index] = gone.disruption;
}

void JobMemory::PodAt(const std::string& key, int attempt, int index) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = jobs_.find(key);
  if (it != jobs_.end() && it->second.gone_attempt == attempt) it->second.gone_disrupted.erase(index);
}

void JobMemory::IdWritten(const api::NcclJob& job, int attempt) {
  std::lock_guard<std::mutex> lock(mu_);
  jobs_[observed::JobKey(job.namespace_, job.name)].id_written = std::make_pair(job.uid, attempt);
}

policy::PodCreateVerdict JobMemory::VerdictFor(const api::NcclJob& job) {
  std::lock_guard<std::mutex> lock(mu_);
  return VerdictLocked(observed::JobKey(job.namespace_, job.name), job);
}

policy::PodCreateVerdict JobMemory::VerdictLocked(const std::string& key, const api::NcclJob& job) {
  auto it = jobs_.find(key);
  if (it == jobs_.end() || !it->second.rejection) return {};
  const Rejection& r = *it->second.rejection;
  if (job.status.Finished() || r.uid != job.uid || r.generation != job.generation) {
    it->second.rejection.reset();
    return {};
  }
  return r.verdict;
}

void JobMemory::RememberVerdict(const api::NcclJob& job, policy::PodCreateVerdict verdict) {
  std::lock_guard<std::mutex> lock(mu_);
  jobs_[observed::JobKey(job.namespace_, job.name)].rejection = Rejection{job.uid, job.generation, std::move(verdict)};
}

std::chrono::seconds JobMemory::ForbiddenFor(const api::NcclJob& job, int attempt) {
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> lock(mu_);
  std::optional<FirstForbidden>& first = jobs_[observed::JobKey(job.namespace_, job.name)].forbidden;
  if (!first || first->uid != job.uid || first->attempt != attempt) first = FirstForbidden{job.uid, attempt, now};
  return std::chrono::duration_cast<std::chrono::seconds>(now - first->at);
}

void JobMemory::PodsLetIn(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = jobs_.find(key); it != jobs_.end()) it->second.forbidden.reset();
}

JobMemory::Children JobMemory::ChildrenOf(const std::string& key, const std::string& uid) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = jobs_.find(key);
  if (it == jobs_.end()) return {};
  return {it->second.children_ensured_for == uid, it->second.child_change};
}

void JobMemory::ChildrenEnsured(const std::string& key, const std::string& uid, std::uint64_t seen) {
  std::lock_guard<std::mutex> lock(mu_);
  Job& job = jobs_[key];
  job.children_ensured_for = uid;
  if (seen != 0 && job.child_change == seen) job.child_change = 0;
}

void JobMemory::ClearChildChange(const std::string& key, std::uint64_t seen) {
  if (seen == 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = jobs_.find(key); it != jobs_.end() && it->second.child_change == seen) it->second.child_change = 0;
}

void JobMemory::ChildChanged(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  jobs_[key].child_change = ++child_changes_;
}

bool JobMemory::PriorityClassMissing(const api::NcclJob& job, const std::string& message) {
  std::lock_guard<std::mutex> lock(mu_);
  std::optional<MissingClass>& missing = jobs_[observed::JobKey(job.namespace_, job.name)].missing_class;
  const bool news = !missing || missing->uid != job.uid || missing->message != message;
  missing = MissingClass{job.uid, message};
  return news;
}

bool JobMemory::PriorityClassFound(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = jobs_.find(key);
  if (it == jobs_.end() || !it->second.missing_class) return false;
  it->second.missing_class.reset();
  return true;
}

bool JobMemory::FirstApiWarning(const api::NcclJob& job, const std::string& text) {
  std::lock_guard<std::mutex> lock(mu_);
  ApiWarnings& warned = jobs_[observed::JobKey(job.namespace_, job.name)].api_warnings;
  if (warned.uid != job.uid) warned = ApiWarnings{job.uid, {}};
  if (warned.texts.size() >= kMaxApiWarnings) return false;
  return warned.texts.insert(text).second;
}

void JobMemory::StatusWritten(const api::NcclJob& job) {
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> lock(mu_);
  jobs_[observed::JobKey(job.namespace_, job.name)].status_written = StatusWrite{job.uid, now};
}

std::optional<std::chrono::steady_clock::duration> JobMemory::SinceStatusWrite(const api::NcclJob& job) {
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> lock(mu_);
  auto it = jobs_.find(observed::JobKey(job.namespace_, job.name));
  if (it == jobs_.end() || !it->second.status_written || it->second.status_written->uid != job.uid) return std::nullopt;
  return now - it->second.status_written->at;
}

void JobMemory::CountsHeld(const std::string& key, bool held) {
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> lock(mu_);
  if (held) {
    jobs_[key].counts_held_at = now;
  } else if (auto it = jobs_.find(key); it != jobs_.end()) {
    it->second.counts_held_at.reset();
  }
}

std::optional<std::chrono::steady_clock::duration> JobMemory::SinceCountsHeld(const std::string& key) {
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> lock(mu_);
  auto it = jobs_.find(key);
  if (it == jobs_.end() || !it->second.counts_held_at) return std::nullopt;
  return now - *it->second.counts_held_at;
}

void JobMemory::Forget(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  jobs_.erase(key);
}

}  // namespace ncclop::controller

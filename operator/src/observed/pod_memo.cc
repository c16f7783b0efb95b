#include "observed/pod_memo.h"

#include "observed/ownership.h"

namespace ncclop::observed {

std::shared_ptr<PodMemo::Job> PodMemo::JobFor(const std::string& job_key) {
  std::lock_guard<std::mutex> lock(mu_);
  std::shared_ptr<Job>& job = jobs_[job_key];
  if (!job) job = std::make_shared<Job>();
  return job;
}

std::vector<ObservedPod> PodMemo::ObserveOwned(const std::string& job_key, const std::string& job_uid,
                                               const std::string& trainer_container, const std::vector<Version>& cached) {
  std::shared_ptr<Job> job = JobFor(job_key);
  std::vector<ObservedPod> out;
  out.reserve(cached.size());
  std::uint64_t parsed = 0;
  {
    std::lock_guard<std::mutex> lock(job->mu);
    if (job->uid != job_uid || job->trainer_container != trainer_container) {
      job->seen.clear();  // another job of the same name, or its trainer changed: nothing kept holds
      job->uid = job_uid;
      job->trainer_container = trainer_container;
    }
    const std::uint64_t round = ++job->round;
    for (const Version& version : cached) {
      Seen& s = job->seen[version.get()];
      // A version that died left its address free for another; a live one at this address is
      // this version.
      if (s.version.expired()) {
        s.version = version;
        s.owned = OwnedBy(*version, job_uid);
        s.pod = s.owned ? ObservePod(*version, trainer_container) : ObservedPod{};
        ++parsed;
      }
      s.round = round;
      if (s.owned) out.push_back(s.pod);
    }
    // Versions replaced or removed since: dropped once they outnumber the live ones a little.
    if (job->seen.size() > cached.size() + cached.size() / 4 + 16) {
      std::erase_if(job->seen, [round](const auto& entry) { return entry.second.round != round; });
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  parses_ += parsed;
  return out;
}

void PodMemo::Forget(const std::string& job_key) {
  std::lock_guard<std::mutex> lock(mu_);
  jobs_.erase(job_key);
}

std::uint64_t PodMemo::parses() const {
  std::lock_guard<std::mutex> lock(mu_);
  return parses_;
}

}  // namespace ncclop::observed

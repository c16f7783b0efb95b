// Each cached version of a pod is parsed once. A job's reconcile reads every pod of the job from
// the informer cache, and a large job is reconciled again on almost every pod event: parsing every
// pod each time made the operator's CPU per pod grow with the job (1.8 ms a pod at 410 pods, 5.0 ms
// at 4096; bench/scale/RESULTS.md, C and D). The cache holds each version as an immutable object, so
// an observation stays valid as long as that version is the cached one: the memo keeps it by the
// version's identity and parses only the versions it has not seen. Pure (no I/O); thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "observed/pod.h"

namespace ncclop::observed {

class PodMemo {
 public:
  using Version = std::shared_ptr<const nlohmann::json>;

  // The pods among `cached` (the job's pods as cached) whose owner references carry `job_uid`,
  // each as ObservePod(pod, trainer_container) gives it, in the order of `cached`. Only versions
  // not observed before for this job's UID and trainer container are parsed.
  std::vector<ObservedPod> ObserveOwned(const std::string& job_key, const std::string& job_uid,
                                        const std::string& trainer_container, const std::vector<Version>& cached);
  // Drops what is kept for a job (it is gone).
  void Forget(const std::string& job_key);
  // Pods parsed so far (for tests and the bench's reading of where the time goes).
  std::uint64_t parses() const;

 private:
  struct Seen {
    std::weak_ptr<const nlohmann::json> version;  // alive: the address still names this version
    bool owned = false;
    ObservedPod pod;
    std::uint64_t round = 0;  // the last ObserveOwned that saw it
  };
  struct Job {
    std::mutex mu;
    std::string uid;
    std::string trainer_container;
    std::uint64_t round = 0;
    std::unordered_map<const nlohmann::json*, Seen> seen;  // by the cached version's address
  };
  std::shared_ptr<Job> JobFor(const std::string& job_key);

  mutable std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<Job>> jobs_;  // guarded by mu_
  std::uint64_t parses_ = 0;                                    // guarded by mu_
};

}  // namespace ncclop::observed

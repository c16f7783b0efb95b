// The env contract the operator injects into every trainer container (docs/contracts.md).
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "nccl_k8s/status.h"

namespace nccl_k8s {

struct JobEnv {
  std::string job_name;      // NCCLJOB_NAME (optional, for messages)
  int index = 0;             // NCCLJOB_INDEX: this pod's index
  int replicas = 1;          // NCCLJOB_REPLICAS (optional; derived from the world size)
  int gpus_per_pod = 1;      // NCCLJOB_GPUS_PER_POD: 0 means one CPU-only rank per pod
  int world_size = 1;        // NCCLJOB_WORLD_SIZE: NCCL ranks in all
  int attempt = 1;           // NCCLJOB_ATTEMPT: the attempt the pod was created for (served: ServedAttempt)
  std::string sidecar_url;   // NCCLJOB_SIDECAR_URL, e.g. http://127.0.0.1:8471
  std::string pod_ip;        // NCCLJOB_POD_IP (optional)
  std::chrono::seconds init_timeout{300};  // NCCLJOB_INIT_TIMEOUT_SECONDS (optional)
  int bootstrap_roots = 1;   // NCCLJOB_BOOTSTRAP_ROOTS (optional; 1 <= roots <= replicas)
  bool bootstrap_roots_set = false;  // NCCLJOB_BOOTSTRAP_ROOTS was given: init by ncclCommInitRankScalable

  // NCCL ranks in this pod: max(gpus_per_pod, 1).
  int ranks_per_pod() const { return gpus_per_pod > 0 ? gpus_per_pod : 1; }
  int first_rank() const { return index * ranks_per_pod(); }
  // Which id of the list this pod makes, or -1: with one root pod 0 makes it; with several, the pod
  // of NCCL's first rank of each id's block (docs/contracts.md, "Bootstrap roots").
  int root_slot() const;
  bool is_root() const { return root_slot() >= 0; }
};

// Looks a variable up; returns nullptr when it is unset. Tests pass a map, ReadJobEnv getenv.
using EnvLookup = std::function<const char*(const char* name)>;

// Parses and cross-checks the contract. On error the message names every missing or malformed
// variable at once, so one look at the log fixes them all.
Result<JobEnv> ParseJobEnv(const EnvLookup& lookup);
Result<JobEnv> ReadJobEnv();

// NCCL_K8S_COMM_MODE, set by the user (never injected): which communicators InitCommunicators
// hands out when CommOptions.blocking is unset. true = "blocking" or unset (the default); false =
// "nonblocking" (also "non-blocking", "non_blocking", any case). Only read where communicators are built,
// so a typo never stops nccl-k8s-id or the id part.
Result<bool> ParseBlockingCommMode(const EnvLookup& lookup);
Result<bool> ReadBlockingCommMode();

}  // namespace nccl_k8s

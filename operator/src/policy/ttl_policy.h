// ttlSecondsAfterFinished: a finished job is deleted (and with it, through ownerReferences,
// everything it made) once completionTime + ttl has passed.
#pragma once

#include <chrono>
#include <optional>

#include "api/nccl_job.h"

namespace ncclop::policy {

struct TtlDecision {
  bool delete_now = false;
  std::optional<std::chrono::seconds> check_again_in;
};

TtlDecision DecideTtl(const api::NcclJob& job, api::Time now);

}  // namespace ncclop::policy

#include "policy/ttl_policy.h"

namespace ncclop::policy {

TtlDecision DecideTtl(const api::NcclJob& job, api::Time now) {
  TtlDecision d;
  if (!job.spec.ttl_seconds_after_finished || !job.status.Finished()) return d;
  auto finished = api::ParseTime(job.status.completion_time);
  if (!finished) return d;
  auto deadline = *finished + std::chrono::seconds(*job.spec.ttl_seconds_after_finished);
  if (now >= deadline) {
    d.delete_now = true;
  } else {
    d.check_again_in = std::chrono::ceil<std::chrono::seconds>(deadline - now);
  }
  return d;
}

}  // namespace ncclop::policy

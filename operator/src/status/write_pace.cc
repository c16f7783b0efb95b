#include "status/write_pace.h"

namespace ncclop::status {
namespace {

// The status without what follows the pod counts.
api::NcclJobStatus WithoutCounts(api::NcclJobStatus s) {
  s.ready = s.active = s.succeeded = s.failed = 0;
  for (api::Condition& c : s.conditions) c.message.clear();
  return s;
}

}  // namespace

bool OnlyCountsDiffer(const api::NcclJobStatus& written, const api::NcclJobStatus& desired) {
  return written != desired && WithoutCounts(written) == WithoutCounts(desired);
}

WritePace PaceWrite(const api::NcclJobStatus& written, const api::NcclJobStatus& desired,
                    std::optional<std::chrono::steady_clock::duration> since_last_write,
                    std::chrono::steady_clock::duration interval) {
  if (written == desired) return {};
  if (!OnlyCountsDiffer(written, desired) || !since_last_write || *since_last_write >= interval) {
    return {WritePace::When::kNow};
  }
  return {WritePace::When::kLater, interval - *since_last_write};
}

std::optional<std::chrono::steady_clock::duration> ReconcileWait(
    std::optional<std::chrono::steady_clock::duration> since_held, std::chrono::steady_clock::duration spacing) {
  if (!since_held || *since_held >= spacing) return std::nullopt;
  return spacing - *since_held;
}

}  // namespace ncclop::status

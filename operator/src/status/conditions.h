// metav1.Condition bookkeeping: one entry per type; lastTransitionTime moves only when the
// status flips, so `kubectl describe` shows when a state began, not when we last looked.
#pragma once

#include <string>
#include <vector>

#include "api/nccl_job.h"

namespace ncclop::status {

void SetCondition(std::vector<api::Condition>& conditions, const std::string& type, bool is_true,
                  const std::string& reason, const std::string& message, std::int64_t generation,
                  api::Time now);

}  // namespace ncclop::status

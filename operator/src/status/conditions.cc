#include "status/conditions.h"

namespace ncclop::status {

void SetCondition(std::vector<api::Condition>& conditions, const std::string& type, bool is_true,
                  const std::string& reason, const std::string& message, std::int64_t generation,
                  api::Time now) {
  const std::string value = is_true ? "True" : "False";
  for (api::Condition& c : conditions) {
    if (c.type != type) continue;
    if (c.status != value) c.last_transition_time = api::FormatTime(now);
    c.status = value;
    c.reason = reason;
    c.message = message;
    c.observed_generation = generation;
    return;
  }
  conditions.push_back({type, value, reason, message, api::FormatTime(now), generation});
}

}  // namespace ncclop::status

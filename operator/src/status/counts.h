// Pod counts for status (ready/active/succeeded/failed), over the pods of one attempt only:
// leftovers of an earlier attempt say nothing about the current one.
#pragma once

#include "observed/attempt.h"

namespace ncclop::status {

struct Counts {
  int ready = 0;
  int active = 0;
  int succeeded = 0;
  int failed = 0;
  int running = 0;
};

Counts CountPods(const observed::AttemptView& attempt);

}  // namespace ncclop::status

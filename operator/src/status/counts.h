// Pod counts for status (ready/active/succeeded/failed), over the pods of one attempt only:
// leftovers of an earlier attempt say nothing about the current one, nor does a pod moved into
// it in place before it restarted into it (active, neither ready nor running yet).
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

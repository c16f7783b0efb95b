#include "status/counts.h"

namespace ncclop::status {

Counts CountPods(const observed::AttemptView& attempt) {
  Counts c;
  for (const observed::ObservedPod* p : attempt.members) {
    if (p->failed) {
      ++c.failed;
    } else if (p->trainer_succeeded) {
      ++c.succeeded;
    } else if (!p->terminating) {
      ++c.active;
      // Moved into the attempt in place and not restarted into it yet: its containers are still
      // the attempt before's (they go down with its restart), so it is neither ready nor running
      // for this one; counted as such, a restart in place showed its attempt Running, then not,
      // then Running again.
      if (p->in_place && p->trainer_restarts < p->restarts_before) continue;
      if (p->ready) ++c.ready;
      if (p->phase == "Running") ++c.running;
    }
  }
  return c;
}

}  // namespace ncclop::status

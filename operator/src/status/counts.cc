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
      if (p->ready) ++c.ready;
      if (p->phase == "Running") ++c.running;
    }
  }
  return c;
}

}  // namespace ncclop::status

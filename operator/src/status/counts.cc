#include "status/counts.h"

namespace ncclop::status {

Counts CountPods(const std::vector<policy::ObservedPod>& pods, int attempt) {
  Counts c;
  for (const policy::ObservedPod& p : pods) {
    if (p.attempt != attempt) continue;
    if (p.failed) {
      ++c.failed;
    } else if (p.trainer_succeeded) {
      ++c.succeeded;
    } else if (!p.terminating) {
      ++c.active;
      if (p.ready) ++c.ready;
      if (p.phase == "Running") ++c.running;
    }
  }
  return c;
}

}  // namespace ncclop::status

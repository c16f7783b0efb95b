// Test only: NCCLOP_TEST_KILL_AFTER_ID_WRITE=1 in the operator's environment makes the process
// SIGKILL itself right after it wrote an attempt's id into the ConfigMap, and, should another
// thread get further first on a loaded machine, before any status write that records the
// publish: the crash window (ConfigMap written, status and IdPublished event not) that
// tests/integration/operator (AnIdPublishedRightBeforeASigkillIsInTheStatusAfterTheJobFinished)
// must hit every time, whichever path (the fast path or the full reconcile) publishes. Never
// set it in a deployment.
#pragma once

#include <signal.h>

#include <cstdlib>
#include <cstring>

namespace ncclop::controller {

inline void TestKillAfterIdWrite() {
  static const bool enabled = [] {
    const char* v = std::getenv("NCCLOP_TEST_KILL_AFTER_ID_WRITE");
    return v != nullptr && std::strcmp(v, "1") == 0;
  }();
  if (enabled) raise(SIGKILL);
}

}  // namespace ncclop::controller

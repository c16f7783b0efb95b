// Independent API calls of one reconcile (the pods of an attempt: one round trip each) overlap
// instead of running one after another: a 4096-pod attempt deleted one pod at a time took
// minutes on a loaded API server.
#pragma once

#include <cstddef>
#include <functional>

namespace ncclop::controller {

// Calls fn(i) once for each i in [0, n), on up to `in_flight` threads at once (the caller's
// included), and returns when every call has returned. fn returning false stops the calls
// not yet started (those running finish). in_flight 0 counts as 1.
void InParallel(std::size_t n, std::size_t in_flight, const std::function<bool(std::size_t)>& fn);

}  // namespace ncclop::controller

#include "controller/in_parallel.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace ncclop::controller {

void InParallel(std::size_t n, std::size_t in_flight, const std::function<bool(std::size_t)>& fn) {
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stopped{false};
  auto work = [&] {
    for (std::size_t i = next++; i < n && !stopped; i = next++) {
      if (!fn(i)) stopped = true;
    }
  };
  const std::size_t workers = std::min(std::max<std::size_t>(in_flight, 1), n);
  if (workers == 0) return;
  std::vector<std::jthread> threads;
  threads.reserve(workers - 1);
  for (std::size_t w = 1; w < workers; ++w) threads.emplace_back(work);
  work();
}  // the jthreads join here

}  // namespace ncclop::controller

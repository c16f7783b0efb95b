// progress_bench: the trainer's side of progress reports, through the runtime's own
// nccl_k8s::ReportProgress (the NcclJob env must name the sidecar: NCCLJOB_SIDECAR_URL).
//
//   progress_bench calls N          N calls in a row; prints ns per call
//   progress_bench ranks R SECONDS  R ranks each report once a second for SECONDS (one process;
//                                   the rank is in the datagram, so one socket plays them all)
//   progress_bench burst RATE SECONDS  reports at RATE per second (0: as fast as it can) for SECONDS
//
// Each report carries a total and two metrics, as a trainer's would.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "nccl_k8s/progress.h"
#include "progress_sender.h"

namespace {

using Clock = std::chrono::steady_clock;

const char* Env(const char* name) { return std::getenv(name); }

int Calls(long n) {
  const auto started = Clock::now();
  for (long step = 1; step <= n; ++step) {
    nccl_k8s::ReportProgress(step, n, {{"loss", 1.0 / static_cast<double>(step)}, {"tokens_per_s", 123456.0}});
  }
  const double ns = std::chrono::duration<double, std::nano>(Clock::now() - started).count() / static_cast<double>(n);
  std::printf("calls=%ld ns_per_call=%.0f\n", n, ns);
  return 0;
}

// One sender per rank, as each process of a pod has its own; LOCAL_RANK picks the rank.
int Ranks(int ranks, int seconds) {
  std::vector<std::unique_ptr<nccl_k8s::ProgressSender>> senders;
  for (int r = 0; r < ranks; ++r) {
    const std::string local = std::to_string(r);
    senders.push_back(std::make_unique<nccl_k8s::ProgressSender>([&local](const char* name) -> const char* {
      return std::string(name) == "LOCAL_RANK" ? local.c_str() : Env(name);
    }));
  }
  const auto started = Clock::now();
  for (int step = 1; step <= seconds; ++step) {
    for (auto& sender : senders) {
      const nccl_k8s::Metric metrics[] = {{"loss", 2.0 / step}, {"tokens_per_s", 98765.0}};
      sender->Report(step, seconds, metrics);
    }
    std::this_thread::sleep_until(started + std::chrono::seconds(step));
  }
  std::printf("ranks=%d reports=%d\n", ranks, ranks * seconds);
  return 0;
}

int Burst(long rate, int seconds) {
  const auto started = Clock::now();
  const auto end = started + std::chrono::seconds(seconds);
  long sent = 0;
  while (Clock::now() < end) {
    for (int i = 0; i < 100; ++i) {
      ++sent;
      nccl_k8s::ReportProgress(sent, std::nullopt, {{"loss", 1.0 / static_cast<double>(sent)}, {"lr", 3e-4}});
    }
    if (rate > 0) std::this_thread::sleep_until(started + std::chrono::nanoseconds(sent * 1000000000L / rate));
  }
  const double took = std::chrono::duration<double>(Clock::now() - started).count();
  std::printf("sent=%ld seconds=%.2f per_second=%.0f\n", sent, took, static_cast<double>(sent) / took);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "calls" && argc == 3) return Calls(std::atol(argv[2]));
  if (mode == "ranks" && argc == 4) return Ranks(std::atoi(argv[2]), std::atoi(argv[3]));
  if (mode == "burst" && argc == 4) return Burst(std::atol(argv[2]), std::atoi(argv[3]));
  std::fprintf(stderr, "usage: progress_bench calls N | ranks R SECONDS | burst RATE SECONDS\n");
  return 2;
}

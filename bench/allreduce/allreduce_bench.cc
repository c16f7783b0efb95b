// nccl-allreduce-bench: the runtime's communicators against raw NCCL in one process, same GPUs,
// same buffers, interleaved per size so drift hits both alike.
//   raw:     ncclGetUniqueId, then ncclCommInitRank for each GPU in one group (the id passed
//            in-process, blocking init).
//   runtime: nccl_k8s::Init() through the env contract and a real sidecar (id POSTed to the
//            sidecar), in the mode asked for (default: blocking, NCCL's own init under a watchdog).
// Prints time-to-communicator for both and an all-reduce table with time and busbw for both and
// the time ratio runtime/raw per size (1.00 = as fast as raw; > 1 slower).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "allreduce_sweep.h"
#include "nccl_k8s/runtime.h"

namespace {

using nccl_k8s::Clock;

constexpr const char* kHelp = R"(usage: nccl-allreduce-bench [--min-bytes N] [--max-bytes N] [--iters N] [--reps N] [--raw-inits N] [--runtime-first] [--blocking|--nonblocking] [--init-only]

Needs the NcclJob env contract for one pod holding every local GPU (NCCLJOB_INDEX=0,
NCCLJOB_GPUS_PER_POD=NCCLJOB_WORLD_SIZE=<GPUs>, NCCLJOB_ATTEMPT, NCCLJOB_SIDECAR_URL of a
running sidecar). Sizes take K/M/G suffixes. --reps: interleaved measurements per size and
path (median reported). --raw-inits: raw inits timed (median reported); one untimed raw init
runs first to take NCCL's one-time setup out of both numbers. --blocking / --nonblocking: which
communicators the runtime hands out (CommOptions.blocking; default: NCCL_K8S_COMM_MODE, else
blocking). Sizes run from --min-bytes to --max-bytes in powers of two (e.g. 8 to 1G).
--init-only: print the time-to-communicator line and exit (one runtime sample per process: the
sidecar serves one id per attempt; bench/allreduce/init-reps.sh repeats it).
)";

size_t Bytes(std::string_view text) {
  size_t scale = 1;
  char last = text.empty() ? '\0' : text.back();
  if (last == 'K') scale = 1 << 10;
  if (last == 'M') scale = 1 << 20;
  if (last == 'G') scale = 1 << 30;
  if (scale != 1) text.remove_suffix(1);
  return std::strtoull(std::string(text).c_str(), nullptr, 10) * scale;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

bool RawInit(int n, std::vector<ncclComm_t>* comms, double* ms) {
  auto t0 = Clock::now();
  ncclUniqueId id;
  if (ncclGetUniqueId(&id) != ncclSuccess) return false;
  comms->assign(n, nullptr);
  ncclGroupStart();
  for (int g = 0; g < n; ++g) {
    cudaSetDevice(g);
    ncclCommInitRank(&(*comms)[g], n, id, g);
  }
  ncclResult_t rc = ncclGroupEnd();
  *ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  if (rc != ncclSuccess) std::fprintf(stderr, "raw init: %s\n", ncclGetErrorString(rc));
  return rc == ncclSuccess;
}

void RawDestroy(std::vector<ncclComm_t>& comms) {
  for (ncclComm_t c : comms) ncclCommDestroy(c);
  comms.clear();
}

}  // namespace

int main(int argc, char** argv) {
  nccl_k8s::SweepConfig sweep;
  int reps = 3, raw_inits = 3;
  bool runtime_first = false, init_only = false;
  nccl_k8s::CommOptions options;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "-h" || a == "--help") { std::fputs(kHelp, stdout); return 0; }
    if (a == "--runtime-first") { runtime_first = true; continue; }
    if (a == "--nonblocking") { options.blocking = false; continue; }
    if (a == "--blocking") { options.blocking = true; continue; }
    if (a == "--init-only") { init_only = true; continue; }
    if (i + 1 >= argc) { std::fprintf(stderr, "missing value for %s\n", argv[i]); return 2; }
    std::string_view v = argv[++i];
    if (a == "--min-bytes") sweep.min_bytes = Bytes(v);
    else if (a == "--max-bytes") sweep.max_bytes = Bytes(v);
    else if (a == "--iters") sweep.iters = std::atoi(argv[i]);
    else if (a == "--reps") reps = std::atoi(argv[i]);
    else if (a == "--raw-inits") raw_inits = std::atoi(argv[i]);
    else { std::fprintf(stderr, "unknown argument %s (see --help)\n", argv[i - 1]); return 2; }
  }
  auto env = nccl_k8s::ReadJobEnv();
  if (!env.ok()) { std::fprintf(stderr, "%s\n", env.status().ToString().c_str()); return 1; }
  int n = env->ranks_per_pod();
  int visible = 0;
  if (cudaGetDeviceCount(&visible) != cudaSuccess || visible < n) {
    std::printf("# GPU benchmark skipped: needs %d GPUs, %d visible\n", n, visible);
    return 0;
  }
  for (int g = 0; g < n; ++g) { cudaSetDevice(g); cudaFree(nullptr); }  // contexts out of the timings

  std::vector<ncclComm_t> raw;
  double ms = 0;
  if (!RawInit(n, &raw, &ms)) return 1;  // NCCL's one-time setup, untimed
  RawDestroy(raw);
  std::vector<double> raw_ms;
  double runtime_ms = 0;
  nccl_k8s::Result<nccl_k8s::Communicators> comms = nccl_k8s::Status(nccl_k8s::Code::kOk, "");
  auto runtime_init = [&] {
    auto t0 = Clock::now();
    comms = nccl_k8s::Init(options);
    runtime_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    return comms.ok();
  };
  if (runtime_first && !runtime_init()) { std::fprintf(stderr, "%s\n", comms.status().ToString().c_str()); return 1; }
  for (int i = 0; i < raw_inits; ++i) {
    if (!raw.empty()) RawDestroy(raw);
    if (!RawInit(n, &raw, &ms)) return 1;
    raw_ms.push_back(ms);
  }
  if (!runtime_first && !runtime_init()) { std::fprintf(stderr, "%s\n", comms.status().ToString().c_str()); return 1; }

  std::printf("# time to communicator (%d GPUs, one process): raw %.1f ms (median of %d), runtime via sidecar %.1f ms, ratio %.3f (%s first)\n",
              n, Median(raw_ms), raw_inits, runtime_ms, runtime_ms / Median(raw_ms), runtime_first ? "runtime" : "raw");
  // One line for scripts: init-reps.sh collects these.
  std::printf("INIT order=%s raw_ms=%.3f runtime_ms=%.3f rt_init_ms=%.3f blocking=%d\n",
              runtime_first ? "runtime-first" : "raw-first", Median(raw_ms), runtime_ms, comms->timings().init_ms,
              comms->blocking() ? 1 : 0);
  std::fflush(stdout);
  if (init_only) {
    RawDestroy(raw);
    auto destroyed = comms->Destroy();
    if (!destroyed.ok()) { std::fprintf(stderr, "%s\n", destroyed.ToString().c_str()); return 1; }
    return 0;
  }
  std::printf("# runtime communicators: %s\n", comms->blocking() ? "blocking" : "non-blocking");

  nccl_k8s::LocalRanks raw_local, rt_local;
  raw_local.world_size = rt_local.world_size = n;
  for (int g = 0; g < n; ++g) {
    raw_local.comms.push_back(raw[g]);
    raw_local.devices.push_back(g);
    raw_local.ranks.push_back(g);
    rt_local.comms.push_back(comms->comm(g));
    rt_local.devices.push_back(comms->device(g));
    rt_local.ranks.push_back(comms->rank(g));
  }
  auto buffers = nccl_k8s::SweepBuffers::Allocate(raw_local, sweep.max_bytes);
  if (!buffers.ok()) { std::fprintf(stderr, "%s\n", buffers.status().ToString().c_str()); return 1; }
  std::printf("#       size    raw time   raw busbw   rt time    rt busbw   rt/raw  #wrong\n"
              "#        (B)        (us)      (GB/s)      (us)      (GB/s)   (time)\n");
  long long wrong = 0;
  std::vector<double> ratios;
  size_t worst_bytes = 0;
  for (size_t bytes : nccl_k8s::SweepSizes(sweep)) {
    std::vector<double> raw_t, rt_t;
    for (int r = 0; r < reps; ++r) {
      auto cfg = sweep;
      cfg.check = (r == reps - 1);
      auto a = nccl_k8s::RunAllReduce(raw_local, *buffers, bytes, cfg);
      auto b = nccl_k8s::RunAllReduce(rt_local, *buffers, bytes, cfg);
      if (!a.ok() || !b.ok()) {
        std::fprintf(stderr, "%s\n", (!a.ok() ? a.status() : b.status()).ToString().c_str());
        return 1;
      }
      raw_t.push_back(a->time_us);
      rt_t.push_back(b->time_us);
      wrong += std::max(0LL, a->wrong) + std::max(0LL, b->wrong);
    }
    double factor = 2.0 * (n - 1) / n;
    double raw_bus = bytes / (Median(raw_t) * 1e3) * factor, rt_bus = bytes / (Median(rt_t) * 1e3) * factor;
    double ratio = Median(rt_t) / Median(raw_t);
    if (ratios.empty() || ratio > *std::max_element(ratios.begin(), ratios.end())) worst_bytes = bytes;
    ratios.push_back(ratio);
    std::printf("%12zu  %10.1f  %10.2f  %8.1f  %10.2f  %7.4f  %6lld\n", bytes, Median(raw_t), raw_bus,
                Median(rt_t), rt_bus, ratio, wrong);
    std::fflush(stdout);
  }
  if (!ratios.empty()) {
    std::printf("# rt/raw time over %zu sizes: median %.4f, max %.4f (at %zu B)\n", ratios.size(), Median(ratios),
                *std::max_element(ratios.begin(), ratios.end()), worst_bytes);
  }
  *buffers = nccl_k8s::SweepBuffers();
  RawDestroy(raw);
  auto destroyed = comms->Destroy();
  if (!destroyed.ok()) { std::fprintf(stderr, "%s\n", destroyed.ToString().c_str()); return 1; }
  if (wrong > 0) { std::fprintf(stderr, "%lld wrong elements\n", wrong); return 1; }
  std::printf("# all sums correct\n");
  return 0;
}

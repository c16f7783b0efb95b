// nccl-allreduce: an example trainer. Builds its communicators through the runtime (id from the
// sidecar, NCCL_SOCKET_IFNAME, deadline), all-reduces a size sweep, checks every element and
// prints an all_reduce_perf-style table. Without a GPU it does the id part and exits 0.
#include <signal.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/socket.h>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "allreduce_sweep.h"
#include "nccl_k8s/runtime.h"
#include "unique_id_codec.h"

namespace {

constexpr const char* kHelp = R"(usage: nccl-allreduce [--min-bytes N] [--max-bytes N] [--iters N] [--warmup N] [--no-check]
                      [--blocking|--nonblocking] [--require-gpu] [--linger-seconds N]
       nccl-allreduce -h|--help|--version

An example NcclJob trainer. Reads the NcclJob env contract, sets NCCL_SOCKET_IFNAME, gets the
NCCL id through the sidecar (root: creates and posts it; others: long-poll), builds one
communicator per local GPU (rank = NCCLJOB_INDEX * GPUs per pod + local GPU) with a deadline,
then all-reduces float sums from --min-bytes to --max-bytes (powers of two), checks every
element, and prints size, time, algbw and busbw (busbw = algbw * 2(n-1)/n) like nccl-tests.

Without a GPU (or NCCLJOB_GPUS_PER_POD=0) it does the id part only, says that the GPU part was
skipped, and exits 0. --require-gpu makes a missing or unusable GPU an error (exit 1) when
NCCLJOB_GPUS_PER_POD > 0, so a GPU job on a node without working GPUs does not look like a success.

It logs one line with its rank, attempt, the chosen NCCL_SOCKET_IFNAME and the root's bootstrap
address (ip:port) taken from the id (each root's, with NCCLJOB_BOOTSTRAP_ROOTS: then
ncclCommInitRankScalable builds the communicators); never the id itself. --linger-seconds N keeps it alive N
seconds after its work (like further training steps), so a run can be observed or interrupted;
meanwhile it reports progress to the sidecar once a second (step = seconds lingered, total = N,
metric busbw_gbps: the sweep's best bus bandwidth) and says done before it exits.

--blocking / --nonblocking: which communicators to run the sweep on (default: NCCL_K8S_COMM_MODE,
else blocking). Blocking: plain NCCL communicators at raw speed; an init still running at the
deadline ends the process (exit 124, message on stderr). Non-blocking: an init past the deadline
is aborted (exit 1), but every collective costs tens of µs more (NCCL starts a thread per launch).

Sizes accept K, M, G suffixes (powers of 1024). Defaults: 1M to 1G, 20 timed and 5 warm-up
iterations per size. --version prints the program's name and version, then exits. Exit status:
0 success; 1 error (message on stderr), including wrong sums; 2 bad usage; 124 communicator init
still running at the deadline (blocking mode; message on stderr).
)";

bool ParseBytes(std::string_view text, size_t* out) {
  if (text.empty()) return false;
  size_t scale = 1;
  char last = text.back();
  if (last == 'K' || last == 'k') scale = size_t{1} << 10;
  if (last == 'M' || last == 'm') scale = size_t{1} << 20;
  if (last == 'G' || last == 'g') scale = size_t{1} << 30;
  if (scale != 1) text.remove_suffix(1);
  std::string digits(text);
  char* end = nullptr;
  unsigned long long v = std::strtoull(digits.c_str(), &end, 10);
  if (digits.empty() || *end != '\0' || v == 0) return false;
  *out = static_cast<size_t>(v) * scale;
  return true;
}

// Where the root listens, as carried by the id: lets every rank's log show they joined the same
// root without printing the id (which is a credential for joining the job).
std::string RootAddress(const ncclUniqueId& id) {
  nccl_k8s::IdBytes bytes{};
  static_assert(sizeof(id.internal) == bytes.size());
  std::memcpy(bytes.data(), id.internal, bytes.size());
  auto where = nccl_k8s::DecodeBootstrapAddress(bytes);
  if (!where) return "unknown";
  return where->family == AF_INET6 ? "[" + where->ip + "]:" + std::to_string(where->port)
                                   : where->ip + ":" + std::to_string(where->port);
}

// SIGTERM and SIGINT end it at once with 128 + the signal, as they end a process that is not its
// container's PID 1: the kernel ignores a signal PID 1 has no handler for, and the kubelet then
// waits out the grace period (at least 2 s for a restart in place) before it sends SIGKILL.
void EndOnStopSignals() {
  struct sigaction action {};
  action.sa_handler = [](int sig) { _exit(128 + sig); };
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
}

// Stays alive like further training steps: one progress report a second (step = seconds so
// far of `seconds`, with the sweep's best bus bandwidth when there was one), then done.
int Linger(int seconds, std::optional<double> best_busbw_gbs) {
  if (seconds > 0) {
    std::printf("# lingering %d s\n", seconds);
    std::fflush(stdout);
    const auto started = std::chrono::steady_clock::now();
    for (int step = 1; step <= seconds; ++step) {
      std::this_thread::sleep_until(started + std::chrono::seconds(step));
      if (best_busbw_gbs) {
        nccl_k8s::ReportProgress(step, seconds, {{"busbw_gbps", *best_busbw_gbs}});
      } else {
        nccl_k8s::ReportProgress(step, seconds);
      }
    }
  }
  nccl_k8s::ReportProgressDone();
  return 0;
}

bool GpuAvailable(std::string* why) {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) *why = cudaGetErrorString(err);
  else if (count == 0) *why = "no CUDA device";
  return err == cudaSuccess && count > 0;
}

}  // namespace

int main(int argc, char** argv) {
  EndOnStopSignals();
  nccl_k8s::SweepConfig sweep;
  int linger_seconds = 0;
  nccl_k8s::CommOptions options;
  bool require_gpu = false;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "-h" || arg == "--help") { std::fputs(kHelp, stdout); return 0; }
    if (arg == "--version") { std::puts("nccl-allreduce " NCCL_K8S_VERSION); return 0; }
    if (arg == "--no-check") { sweep.check = false; continue; }
    if (arg == "--require-gpu") { require_gpu = true; continue; }
    if (arg == "--blocking" || arg == "--nonblocking") { options.blocking = arg == "--blocking"; continue; }
    bool ok = i + 1 < argc;
    if (ok && arg == "--min-bytes") ok = ParseBytes(argv[++i], &sweep.min_bytes);
    else if (ok && arg == "--max-bytes") ok = ParseBytes(argv[++i], &sweep.max_bytes);
    else if (ok && (arg == "--iters" || arg == "--warmup")) {
      int v = std::atoi(argv[++i]);
      ok = v > 0 || (v == 0 && arg == "--warmup");
      (arg == "--iters" ? sweep.iters : sweep.warmup_iters) = v;
    } else if (ok && arg == "--linger-seconds") {
      char* end = nullptr;
      long v = std::strtol(argv[++i], &end, 10);
      ok = *end == '\0' && v >= 0 && v <= 86400 && end != argv[i];
      linger_seconds = static_cast<int>(v);
    } else ok = false;
    if (!ok) { std::fprintf(stderr, "nccl-allreduce: bad argument near '%s' (see --help)\n", argv[i]); return 2; }
  }
  if (sweep.min_bytes > sweep.max_bytes) { std::fprintf(stderr, "nccl-allreduce: --min-bytes > --max-bytes\n"); return 2; }

  auto env = nccl_k8s::ReadJobEnv();
  if (!env.ok()) { std::fprintf(stderr, "nccl-allreduce: %s\n", env.status().ToString().c_str()); return 1; }
  auto blocking = nccl_k8s::ResolveBlocking(options);  // a bad NCCL_K8S_COMM_MODE fails before the id exchange
  if (!blocking.ok()) { std::fprintf(stderr, "nccl-allreduce: %s\n", blocking.status().ToString().c_str()); return 1; }
  options.blocking = *blocking;
  if (std::string why; require_gpu && env->gpus_per_pod > 0 && !GpuAvailable(&why)) {  // before the id exchange
    std::fprintf(stderr, "nccl-allreduce: NCCLJOB_GPUS_PER_POD=%d but no usable GPU (%s); --require-gpu makes that an error\n",
                 env->gpus_per_pod, why.c_str());
    return 1;
  }
  auto started = nccl_k8s::Clock::now();
  auto deadline = started + env->init_timeout;
  // The attempt the ids belong to: after an in-place restart it is past NCCLJOB_ATTEMPT.
  auto attempt = nccl_k8s::ServedAttempt(*env, deadline);
  if (!attempt.ok()) { std::fprintf(stderr, "nccl-allreduce: %s\n", attempt.status().ToString().c_str()); return 1; }
  auto ids = nccl_k8s::ObtainUniqueIds(*env, deadline);
  if (!ids.ok()) { std::fprintf(stderr, "nccl-allreduce: %s\n", ids.status().ToString().c_str()); return 1; }
  std::string roots;
  for (const ncclUniqueId& id : *ids) roots += (roots.empty() ? "" : ",") + RootAddress(id);
  const char* ifname = std::getenv("NCCL_SOCKET_IFNAME");
  std::printf("# nccl-allreduce: rank %d of %d pods, attempt %d, interface %s, root%s %s: id%s obtained\n", env->index,
              env->replicas, *attempt, ifname != nullptr && *ifname != '\0' ? ifname : "(NCCL default)",
              ids->size() > 1 ? "s" : "", roots.c_str(), ids->size() > 1 ? "s" : "");
  std::fflush(stdout);

  std::string why;
  if (env->gpus_per_pod == 0 || !GpuAvailable(&why)) {
    std::printf("# GPU part skipped: %s; the id part succeeded\n",
                env->gpus_per_pod == 0 ? "NCCLJOB_GPUS_PER_POD=0" : why.c_str());
    return Linger(linger_seconds, std::nullopt);
  }
  auto comms = nccl_k8s::InitCommunicators(*env, *ids, options, deadline);
  if (!comms.ok()) { std::fprintf(stderr, "nccl-allreduce: %s\n", comms.status().ToString().c_str()); return 1; }
  double init_ms = std::chrono::duration<double, std::milli>(nccl_k8s::Clock::now() - started).count();

  nccl_k8s::LocalRanks local;
  local.world_size = comms->world_size();
  for (int g = 0; g < comms->local_count(); ++g) {
    local.comms.push_back(comms->comm(g));
    local.devices.push_back(comms->device(g));
    local.ranks.push_back(comms->rank(g));
  }
  std::printf("# ranks %d..%d of %d, %s communicators%s, time to communicator %.1f ms\n", local.ranks.front(),
              local.ranks.back(), local.world_size, comms->blocking() ? "blocking" : "non-blocking",
              comms->scalable() ? (" (ncclCommInitRankScalable, " + std::to_string(comms->id_count()) + " id(s))").c_str() : "",
              init_ms);
  auto buffers = nccl_k8s::SweepBuffers::Allocate(local, sweep.max_bytes);
  if (!buffers.ok()) { std::fprintf(stderr, "nccl-allreduce: %s\n", buffers.status().ToString().c_str()); return 1; }
  std::fputs(nccl_k8s::TableHeader().c_str(), stdout);
  long long wrong = 0;
  double best_busbw_gbs = 0;
  for (size_t bytes : nccl_k8s::SweepSizes(sweep)) {
    auto row = nccl_k8s::RunAllReduce(local, *buffers, bytes, sweep);
    if (!row.ok()) { std::fprintf(stderr, "nccl-allreduce: %s\n", row.status().ToString().c_str()); return 1; }
    wrong += row->wrong > 0 ? row->wrong : 0;
    best_busbw_gbs = std::max(best_busbw_gbs, row->busbw_gbs);
    std::fputs(nccl_k8s::TableRow(*row).c_str(), stdout);
    std::fflush(stdout);
  }
  *buffers = nccl_k8s::SweepBuffers();
  nccl_k8s::Status destroyed = comms->Destroy();
  if (!destroyed.ok()) { std::fprintf(stderr, "nccl-allreduce: %s\n", destroyed.ToString().c_str()); return 1; }
  if (wrong > 0) { std::fprintf(stderr, "nccl-allreduce: %lld wrong elements\n", wrong); return 1; }
  std::printf("# all sums correct\n");
  return Linger(linger_seconds, best_busbw_gbs);
}

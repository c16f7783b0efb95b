// Watch throughput: realistic pod events, serialised as the API server sends them, split into
// chunks of typical sizes, decoded and applied to an indexed informer cache on one thread.
// Also reports the process's peak RSS. Prints a table; see RESULTS.md.
//
//   kube_watch_bench [--pods N] [--events N]
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "kube/cache_updater.h"
#include "kube/store.h"
#include "kube/watch.h"

namespace {

using nlohmann::json;

// A pod as the operator creates them: labels, env, a sidecar, status with conditions.
json MakePod(int index, int rv, const char* phase) {
  const std::string job = "job-" + std::to_string(index / 8);
  const std::string name = job + "-" + std::to_string(index % 8);
  json env = json::array();
  for (const char* k : {"NCCLJOB_NAME", "NCCLJOB_NAMESPACE", "NCCLJOB_UID", "NCCLJOB_INDEX", "NCCLJOB_REPLICAS",
                        "NCCLJOB_GPUS_PER_POD", "NCCLJOB_WORLD_SIZE", "NCCLJOB_ATTEMPT", "NCCLJOB_SIDECAR_URL",
                        "MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK"}) {
    env.push_back({{"name", k}, {"value", std::string(k) + "-value-" + std::to_string(index)}});
  }
  json container = {{"name", "trainer"},
                    {"image", "registry.example/team/trainer:2024.11.3"},
                    {"command", {"python", "-m", "train", "--config", "/etc/train/config.yaml"}},
                    {"env", env},
                    {"resources", {{"limits", {{"nvidia.com/gpu", "8"}, {"memory", "512Gi"}}},
                                   {"requests", {{"cpu", "32"}, {"memory", "512Gi"}}}}},
                    {"volumeMounts", {{{"name", "data"}, {"mountPath", "/data"}}, {{"name", "shm"}, {"mountPath", "/dev/shm"}}}}};
  json sidecar = {{"name", "nccl-sidecar"}, {"image", "registry.example/nccl-sidecar:0.1"}, {"restartPolicy", "Always"},
                  {"ports", {{{"containerPort", 8471}}, {{"containerPort", 8472}}}}};
  json conditions = json::array();
  for (const char* t : {"PodScheduled", "Initialized", "ContainersReady", "Ready"}) {
    conditions.push_back({{"type", t}, {"status", "True"}, {"lastProbeTime", nullptr},
                          {"lastTransitionTime", "2024-11-29T21:3" + std::to_string(rv % 10) + ":00Z"}});
  }
  return {
      {"kind", "Pod"},
      {"apiVersion", "v1"},
      {"metadata",
       {{"name", name},
        {"namespace", "ml-team-" + std::to_string(index % 4)},
        {"uid", "6f1c2a4e-0000-4000-8000-" + std::to_string(100000000000 + index)},
        {"resourceVersion", std::to_string(rv)},
        {"creationTimestamp", "2024-11-29T21:30:00Z"},
        {"labels", {{"nccl.dev/job-name", job}, {"nccl.dev/index", std::to_string(index % 8)}, {"nccl.dev/attempt", "1"}}},
        {"ownerReferences", {{{"apiVersion", "nccl.dev/v1alpha1"}, {"kind", "NcclJob"}, {"name", job},
                              {"uid", "0f0f0f0f-0000-4000-8000-000000000000"}, {"controller", true}}}}}},
      {"spec",
       {{"hostname", name}, {"subdomain", job}, {"restartPolicy", "Never"}, {"nodeName", "gpu-node-" + std::to_string(index)},
        {"initContainers", {sidecar}}, {"containers", {container}},
        {"volumes", {{{"name", "data"}, {"persistentVolumeClaim", {{"claimName", "data"}}}},
                     {{"name", "shm"}, {"emptyDir", {{"medium", "Memory"}}}}}}}},
      {"status",
       {{"phase", phase}, {"podIP", "10.1." + std::to_string(index / 250) + "." + std::to_string(index % 250)},
        {"hostIP", "192.168.0." + std::to_string(index % 250)}, {"conditions", conditions},
        {"startTime", "2024-11-29T21:30:05Z"}}}};
}

long PeakRssKiB() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

long CurrentRssKiB() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  }
  return 0;
}

struct Row {
  std::size_t chunk;
  std::size_t events;
  double seconds;
  double mib;
};

}  // namespace

int main(int argc, char** argv) {
  int pods = 5000;
  int events = 100000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--pods") == 0) pods = std::atoi(argv[i + 1]);
    else if (std::strcmp(argv[i], "--events") == 0) events = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "usage: %s [--pods N] [--events N]\n", argv[0]);
      return 2;
    }
  }
  if (argc % 2 == 0) {
    std::fprintf(stderr, "usage: %s [--pods N] [--events N]\n", argv[0]);
    return 2;
  }

  // The stream: every pod ADDED once, then MODIFIED events round-robin, with a bookmark every
  // 1000 events, as the API server would send them.
  std::string stream;
  for (int e = 0; e < events; ++e) {
    const int index = e % pods;
    json ev = {{"type", e < pods ? "ADDED" : "MODIFIED"}, {"object", MakePod(index, 1000 + e, e < pods ? "Pending" : "Running")}};
    stream += ev.dump();
    stream += '\n';
    if (e % 1000 == 999) {
      stream += R"({"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":")" +
                std::to_string(1000 + e) + "\"}}}\n";
    }
  }
  const long rss_before = CurrentRssKiB();

  std::printf("kube watch benchmark: %d pods, %d events, %.1f MiB stream, %.0f bytes/event\n", pods, events,
              static_cast<double>(stream.size()) / (1 << 20), static_cast<double>(stream.size()) / events);
  std::printf("%-12s %10s %12s %12s %10s\n", "chunk bytes", "events", "seconds", "events/s", "MiB/s");

  std::vector<Row> rows;
  long cache_rss_kib = 0;
  for (std::size_t chunk : {1400u, 16384u, 65536u}) {
    kube::Store store;
    store.AddIndex("job", kube::IndexByLabel("nccl.dev/job-name"));
    std::vector<kube::EventHandlers> handlers{{
        [](const kube::ObjectPtr&) {}, [](const kube::ObjectPtr&, const kube::ObjectPtr&) {}, [](const kube::ObjectPtr&) {}}};
    kube::CacheUpdater cache_updater(&store, &handlers);
    kube::WatchDecoder decoder;
    std::size_t applied = 0, errors = 0;
    auto sink = [&](kube::Result<kube::WatchEvent>&& ev) {
      if (!ev.ok()) {
        ++errors;
        return;
      }
      if (ev->type != kube::EventType::kBookmark) ++applied;
      cache_updater.ApplyEvent(std::move(*ev));
    };
    const auto start = std::chrono::steady_clock::now();
    for (std::size_t off = 0; off < stream.size(); off += chunk) {
      decoder.Feed(std::string_view(stream).substr(off, chunk), sink);
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (errors != 0 || store.size() != static_cast<std::size_t>(std::min(pods, events))) {
      std::fprintf(stderr, "benchmark broken: %zu decode errors, %zu objects cached\n", errors, store.size());
      return 1;
    }
    cache_rss_kib = std::max(cache_rss_kib, CurrentRssKiB() - rss_before);
    std::printf("%-12zu %10zu %12.3f %12.0f %10.1f\n", chunk, applied, secs, applied / secs,
                static_cast<double>(stream.size()) / (1 << 20) / secs);
  }
  std::printf("\ncache of %d pods: +%.1f MiB RSS over the stream buffer; peak RSS %.1f MiB (includes the %.1f MiB "
              "in-memory stream)\n",
              std::min(pods, events), cache_rss_kib / 1024.0, PeakRssKiB() / 1024.0,
              static_cast<double>(stream.size()) / (1 << 20));
  return 0;
}

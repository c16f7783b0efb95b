// The sidecar under connection abuse (issue 11's load check): a fresh standalone root sidecar
// per round; `abandoned` clients send a long-poll and close at once, `idle` clients connect and
// send nothing, `peers` long-polls wait for the id; then the root trainer POSTs the id. Times,
// on loopback, the POST's answer and each peer's answer from the moment the POST was sent. A
// round with nothing else connected is the baseline.
//
//   sidecar_load_bench NCCL_SIDECAR [--rounds N] [--abandoned N] [--idle N] [--peers N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "raw_http.h"
#include "sidecar_process.h"

namespace {

using Clock = std::chrono::steady_clock;
using sidecar_it::RawConnection;

constexpr auto kAnswerDeadline = std::chrono::seconds(10);

struct Load {
  int abandoned = 200;
  int idle = 200;
  int peers = 8;
};

struct Round {
  double post_ms = -1;       // -1: no answer within kAnswerDeadline
  double last_peer_ms = -1;  // the slowest peer's answer, from the POST being sent
  int peers_served = 0;
};

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

Round RunRound(const std::string& binary, const Load& load, int round) {
  sidecar_it::Env env = {{"NCCLJOB_NAME", "bench"}, {"NCCLJOB_INDEX", "0"}, {"NCCLJOB_REPLICAS", "9"},
                         {"NCCLJOB_GPUS_PER_POD", "8"}, {"NCCLJOB_ATTEMPT", "1"}, {"NCCLJOB_UID", "uid-bench"}};
  sidecar_it::SidecarProcess root(binary, env, {"--standalone"},
                                  "/tmp/sidecar-load-bench-" + std::to_string(round) + ".log");
  Round result;
  if (!root.WaitStarted()) {
    std::fprintf(stderr, "the sidecar did not start:\n%s\n", root.Log().c_str());
    std::exit(1);
  }
  int port = root.api_port();
  std::vector<RawConnection> held;
  for (int i = 0; i < load.abandoned; ++i) {
    RawConnection gone(port);
    gone.Send(sidecar_it::GetRequest("/v1/id?timeout=300"));
  }
  for (int i = 0; i < load.idle; ++i) held.emplace_back(port);
  std::vector<RawConnection> peers;
  for (int i = 0; i < load.peers; ++i) {
    peers.emplace_back(port);
    peers.back().Send(sidecar_it::GetRequest("/v1/id?timeout=30"));
  }
  std::string id(128, static_cast<char>('a' + round % 26));
  RawConnection trainer(port);
  auto sent = Clock::now();
  trainer.Send(sidecar_it::PostRequest("/v1/id", id));
  auto posted = trainer.Read(sent + kAnswerDeadline);
  if (posted && posted->status == 200) result.post_ms = MsSince(sent);
  for (RawConnection& peer : peers) {
    auto answer = peer.Read(sent + kAnswerDeadline);
    if (!answer || answer->status != 200) continue;
    ++result.peers_served;
    result.last_peer_ms = std::max(result.last_peer_ms, MsSince(sent));
  }
  root.Terminate();
  return result;
}

std::string Percentile(std::vector<double> values, double p) {
  values.erase(std::remove(values.begin(), values.end(), -1.0), values.end());
  if (values.empty()) return "-";
  std::sort(values.begin(), values.end());
  size_t at = std::min(values.size() - 1, static_cast<size_t>(p * static_cast<double>(values.size() - 1) + 0.5));
  char text[32];
  std::snprintf(text, sizeof(text), "%.2f", values[at]);
  return text;
}

void Report(const char* name, const std::vector<Round>& rounds, const Load& load) {
  std::vector<double> post, last_peer;
  int failed = 0;
  for (const Round& r : rounds) {
    post.push_back(r.post_ms);
    last_peer.push_back(r.last_peer_ms);
    if (r.post_ms < 0 || r.peers_served < load.peers) ++failed;
  }
  std::printf("%-34s %6zu %9s %9s %13s %13s %10d\n", name, rounds.size(), Percentile(post, 0.5).c_str(),
              Percentile(post, 1.0).c_str(), Percentile(last_peer, 0.5).c_str(), Percentile(last_peer, 1.0).c_str(),
              failed);
}

int Flag(int argc, char** argv, const std::string& name, int fallback) {
  for (int i = 2; i + 1 < argc; ++i) {
    if (argv[i] == name) return std::atoi(argv[i + 1]);
  }
  return fallback;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") {
    std::printf("usage: sidecar_load_bench NCCL_SIDECAR [--rounds N] [--abandoned N] [--idle N] [--peers N]\n");
    return argc < 2 ? 2 : 0;
  }
  std::string binary = argv[1];
  int rounds = Flag(argc, argv, "--rounds", 20);
  Load load{Flag(argc, argv, "--abandoned", 200), Flag(argc, argv, "--idle", 200), Flag(argc, argv, "--peers", 8)};
  Load baseline{0, 0, load.peers};
  std::printf("sidecar load: %d rounds, a fresh root sidecar each; times in ms from the POST being sent\n", rounds);
  std::printf("%-34s %6s %9s %9s %13s %13s %10s\n", "load", "rounds", "POST p50", "POST max", "last peer p50",
              "last peer max", "failed");
  for (const auto& [name, which] : {std::pair{std::string("none (baseline)"), baseline},
                                    std::pair{std::to_string(load.abandoned) + " abandoned + " +
                                                  std::to_string(load.idle) + " idle", load}}) {
    std::vector<Round> results;
    for (int i = 0; i < rounds; ++i) results.push_back(RunRound(binary, which, i));
    Report(name.c_str(), results, which);
  }
  return 0;
}

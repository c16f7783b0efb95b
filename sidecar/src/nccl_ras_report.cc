// nccl-ras-report: reads NCCL's health report (RAS) the way the sidecar does and prints the raw
// answer, what the sidecar parsed from it and the stall watch's verdict. For people checking a
// pod (kubectl exec into the sidecar) and for the GPU check (tests/gpu/ras-on-device.sh).
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/program.h"
#include "config.h"
#include "ras_client.h"
#include "ras_report.h"
#include "ras_watch.h"

namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitBadFlags = 2;
constexpr int kExitUnavailable = 3;

struct Flags {
  sidecar::HostPort address{sidecar::kRasDefaultHost, sidecar::kRasDefaultPort};
  int deadline_seconds = 12;
  std::string format = "json";
  int count = 1;
  int interval_seconds = 5;
  int timeout_seconds = 0;
};

cli::Program CommandLine(Flags* f) {
  return {.name = "nccl-ras-report",
          .summary = "nccl-ras-report: reads NCCL's health report (RAS) from a process of this network namespace\n"
                     "and prints the raw answer, the report the sidecar parses from it, and the stall reason it gives.",
          .flags = {cli::Parsed<sidecar::HostPort>(
                        "address", &f->address, "HOST:PORT", "HOST:PORT", sidecar::ParseHostPort,
                        [](const sidecar::HostPort& a) { return a.host + ":" + std::to_string(a.port); },
                        "where NCCL's RAS listens (NCCL_RAS_ADDR)"),
                    cli::IntInRange("deadline-seconds", &f->deadline_seconds, 1, 120, "the most one read may take"),
                    cli::OneOf("format", &f->format, "FORMAT", {"json", "text"},
                               "the report asked for (json falls back to text before NCCL 2.28.7)"),
                    cli::IntInRange("count", &f->count, 1, 1000, "reads, one every --interval-seconds"),
                    cli::IntInRange("interval-seconds", &f->interval_seconds, 1, 3600, "between reads"),
                    cli::IntInRange("timeout-seconds", &f->timeout_seconds, 0, 86400,
                                    "how long a problem must last to be a stall reason (the stall timeout)")},
          .epilogue = "Exit status: 0 every read gave a report; 3 nothing listens at the address (no NCCL process\n"
                      "here, or NCCL_RAS_ENABLE=0); 1 a read failed or its answer was not understood; 2 bad flags.\n"};
}

nlohmann::json Summary(const sidecar::RasReport& report) {
  nlohmann::json out = {{"format", report.format == sidecar::RasFormat::kJson ? "json" : "text"},
                        {"nccl_version", report.nccl_version},
                        {"timeouts_count", report.timeouts_count},
                        {"repaired", report.repaired},
                        {"communicators", nlohmann::json::array()},
                        {"blocks", nlohmann::json::array()}};
  for (const sidecar::RasCommunicator& comm : report.communicators) {
    nlohmann::json c = {{"hash", comm.hash}, {"secondary_hash", comm.secondary_hash}, {"size", comm.size},
                        {"ranks", nlohmann::json::array()}, {"missing_ranks", nlohmann::json::array()}};
    for (const sidecar::RasRank& r : comm.ranks) {
      c["ranks"].push_back({{"rank", r.rank}, {"host", r.host}, {"pid", r.pid}, {"cuda_dev", r.cuda_dev},
                            {"init_state", r.init_state}, {"async_error", r.async_error},
                            {"finalize_called", r.finalize_called}, {"destroy_flag", r.destroy_flag},
                            {"abort_flag", r.abort_flag}, {"collective_counts", r.collective_counts}});
    }
    for (const sidecar::RasMissingRank& r : comm.missing_ranks) {
      c["missing_ranks"].push_back({{"rank", r.rank}, {"host", r.host}, {"pid", r.pid}, {"cuda_dev", r.cuda_dev},
                                    {"unresponsive", r.unresponsive}, {"considered_dead", r.considered_dead}});
    }
    out["communicators"].push_back(std::move(c));
  }
  for (const sidecar::RasTextBlock& b : report.blocks) {
    out["blocks"].push_back({{"section", b.section}, {"heading", b.heading}, {"lines", b.lines}});
  }
  return out;
}

const char* KindName(sidecar::RasAnswer::Kind kind) {
  switch (kind) {
    case sidecar::RasAnswer::Kind::kOk: return "ok";
    case sidecar::RasAnswer::Kind::kUnavailable: return "unavailable";
    case sidecar::RasAnswer::Kind::kFailed: return "failed";
  }
  return "?";
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  cli::ParseOutcome outcome = cli::Parse(CommandLine(&flags), std::vector<std::string>(argv + 1, argv + argc));
  if (outcome.help) {
    std::fputs(cli::HelpText(CommandLine(&flags)).c_str(), stdout);
    return kExitOk;
  }
  if (outcome.version) {
    std::fputs(cli::VersionText(CommandLine(&flags)).c_str(), stdout);
    return kExitOk;
  }
  if (!outcome.ok()) {
    std::fprintf(stderr, "%s\n", outcome.error.c_str());
    return kExitBadFlags;
  }
  sidecar::RasClientOptions options;
  options.host = flags.address.host;
  options.port = flags.address.port;
  options.deadline = std::chrono::seconds(flags.deadline_seconds);
  options.json = flags.format == "json";
  sidecar::RasWatch watch{std::chrono::seconds(flags.timeout_seconds)};
  int status = kExitOk;
  for (int i = 0; i < flags.count; ++i) {
    if (i > 0) std::this_thread::sleep_for(std::chrono::seconds(flags.interval_seconds));
    auto started = sidecar::RasWatch::Clock::now();
    sidecar::RasAnswer answer = sidecar::AskRas(options);
    auto took = std::chrono::duration_cast<std::chrono::milliseconds>(sidecar::RasWatch::Clock::now() - started);
    std::printf("=== read %d: %s, %lld ms, protocol \"%s\", format %s, %zu bytes%s%s\n", i + 1, KindName(answer.kind),
                static_cast<long long>(took.count()), answer.server_protocol.c_str(),
                answer.format == sidecar::RasFormat::kJson ? "json" : "text", answer.body.size(),
                answer.error.empty() ? "" : ": ", answer.error.c_str());
    if (answer.kind != sidecar::RasAnswer::Kind::kOk) {
      if (answer.kind == sidecar::RasAnswer::Kind::kUnavailable) watch.Forget();
      status = answer.kind == sidecar::RasAnswer::Kind::kUnavailable ? kExitUnavailable : kExitFailed;
      continue;
    }
    std::printf("--- raw answer\n%s%s", answer.body.c_str(),
                !answer.body.empty() && answer.body.back() == '\n' ? "" : "\n");
    sidecar::RasParse parsed = sidecar::ParseRasAnswer(answer.format, answer.body);
    if (!parsed.report) {
      std::printf("--- parse error: %s\n", parsed.error.c_str());
      status = kExitFailed;
      continue;
    }
    std::printf("--- parsed\n%s\n", Summary(*parsed.report).dump(2).c_str());
    watch.Observe(started, *parsed.report);
    std::optional<std::string> reason = watch.Reason();
    std::printf("--- stall reason: %s\n", reason ? reason->c_str() : "none");
    std::fflush(stdout);
  }
  return status;
}

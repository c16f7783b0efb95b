// The standard process_* metrics Prometheus clients export (memory, CPU, file descriptors,
// start time), read from Linux's /proc/self. Parsing is separate from reading, so it is
// tested on fixed text.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace ncclop::metrics {

struct ProcessStats {
  double cpu_seconds = 0;           // user + system
  std::uint64_t resident_bytes = 0;
  std::uint64_t virtual_bytes = 0;
  double start_time_seconds = 0;    // since the Unix epoch
  std::uint64_t open_fds = 0;
  std::optional<std::uint64_t> max_fds;  // unset: unlimited
};

// From /proc/self/stat's text; ticks_per_second = sysconf(_SC_CLK_TCK), boot_time_seconds =
// /proc/stat's btime. False when the text is not a stat line.
bool ParseProcStat(const std::string& stat, long ticks_per_second, std::uint64_t page_size, double boot_time_seconds,
                   ProcessStats* out);
// The soft "Max open files" of /proc/self/limits; nullopt for "unlimited" or when absent.
std::optional<std::uint64_t> ParseMaxOpenFiles(const std::string& limits);
// btime of /proc/stat (seconds since the epoch the machine booted); 0 when absent.
double ParseBootTime(const std::string& proc_stat);

// This process, now; nullopt when /proc cannot be read (not Linux).
std::optional<ProcessStats> ReadProcessStats();

// Appends the process_* metrics in the text exposition format.
void RenderProcessStats(const ProcessStats& stats, std::string* out);

}  // namespace ncclop::metrics

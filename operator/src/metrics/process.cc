#include "metrics/process.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "metrics/catalog.h"

namespace ncclop::metrics {
namespace {

std::string ReadAll(const char* path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string Number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

void Sample(std::string* out, const Family& family, const std::string& value) {
  *out += Header(family) + std::string(family.name) + " " + value + "\n";
}

}  // namespace

bool ParseProcStat(const std::string& stat, long ticks_per_second, std::uint64_t page_size, double boot_time_seconds,
                   ProcessStats* out) {
  // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so fields start after
  // the last ')'. Field 3 (state) is the first after it; utime is 14, stime 15, starttime 22,
  // vsize 23, rss 24 (proc(5), counted from 1).
  const auto close = stat.rfind(')');
  if (close == std::string::npos || ticks_per_second <= 0) return false;
  std::istringstream rest(stat.substr(close + 1));
  std::vector<std::string> fields;
  for (std::string f; rest >> f;) fields.push_back(f);
  auto field = [&](int n) { return fields.at(static_cast<std::size_t>(n - 3)); };
  if (fields.size() < 22) return false;
  try {
    const double ticks = static_cast<double>(ticks_per_second);
    out->cpu_seconds = (std::stod(field(14)) + std::stod(field(15))) / ticks;
    out->start_time_seconds = boot_time_seconds + std::stod(field(22)) / ticks;
    out->virtual_bytes = std::stoull(field(23));
    out->resident_bytes = std::stoull(field(24)) * page_size;
  } catch (const std::exception&) {
    return false;
  }
  return true;
}

std::optional<std::uint64_t> ParseMaxOpenFiles(const std::string& limits) {
  std::istringstream in(limits);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Max open files", 0) != 0) continue;
    std::istringstream values(line.substr(std::string("Max open files").size()));
    std::string soft;
    values >> soft;
    if (soft.empty() || soft == "unlimited") return std::nullopt;
    try {
      return std::stoull(soft);
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

double ParseBootTime(const std::string& proc_stat) {
  std::istringstream in(proc_stat);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("btime ", 0) == 0) {
      try {
        return std::stod(line.substr(6));
      } catch (const std::exception&) {
        return 0;
      }
    }
  }
  return 0;
}

std::optional<ProcessStats> ReadProcessStats() {
  ProcessStats stats;
  if (!ParseProcStat(ReadAll("/proc/self/stat"), sysconf(_SC_CLK_TCK), static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE)),
                     ParseBootTime(ReadAll("/proc/stat")), &stats)) {
    return std::nullopt;
  }
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++stats.open_fds;
  }
  stats.max_fds = ParseMaxOpenFiles(ReadAll("/proc/self/limits"));
  return stats;
}

void RenderProcessStats(const ProcessStats& s, std::string* out) {
  Sample(out, kProcessCpu, Number(s.cpu_seconds));
  Sample(out, kProcessResident, std::to_string(s.resident_bytes));
  Sample(out, kProcessVirtual, std::to_string(s.virtual_bytes));
  Sample(out, kProcessStart, Number(s.start_time_seconds));
  Sample(out, kProcessOpenFds, std::to_string(s.open_fds));
  if (s.max_fds) Sample(out, kProcessMaxFds, std::to_string(*s.max_fds));
}

}  // namespace ncclop::metrics

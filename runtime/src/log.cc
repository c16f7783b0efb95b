#include "log.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <mutex>

#include "contract/env.h"

namespace nccl_k8s::log {
namespace {

const char* LevelName(Level level) {
  switch (level) {
    case Level::kDebug: return "debug";
    case Level::kInfo: return "info";
    case Level::kWarn: return "warn";
    case Level::kError: return "error";
    case Level::kOff: return "off";
  }
  return "info";
}

Level MinLevel() {
  static const Level level = [] {
    const char* v = std::getenv(contract::env::kLogLevel);
    std::string_view s = v ? v : "info";
    if (s == "debug") return Level::kDebug;
    if (s == "warn") return Level::kWarn;
    if (s == "error") return Level::kError;
    if (s == "off") return Level::kOff;
    return Level::kInfo;
  }();
  return level;
}

std::string Now() {
  using namespace std::chrono;
  auto now = system_clock::now();
  std::time_t secs = system_clock::to_time_t(now);
  int millis = static_cast<int>(duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, millis);
  return buf;
}

void AppendValue(std::string& out, std::string_view v) {
  bool quote = v.empty();
  for (char c : v) quote = quote || c == ' ' || c == '"' || c == '=' || c == '\n' || c == '\t';
  if (!quote) {
    out.append(v);
    return;
  }
  out.push_back('"');
  for (char c : v) {
    if (c == '"' || c == '\\') out.push_back('\\');
    if (c == '\n') { out.append("\\n"); continue; }
    out.push_back(c);
  }
  out.push_back('"');
}

}  // namespace

std::string Render(std::string_view timestamp, Level level, std::string_view message,
                   const Fields& fields) {
  std::string out;
  out.append(timestamp).append(" ").append(LevelName(level)).append(" nccl-k8s: ").append(message);
  for (const auto& [k, v] : fields) {
    out.append(" ").append(k).append("=");
    AppendValue(out, v);
  }
  return out;
}

namespace {

void WriteLine(Level level, std::string_view message, const Fields& fields) {
  std::string line = Render(Now(), level, message, fields);
  line.push_back('\n');
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

}  // namespace

void Write(Level level, std::string_view message, const Fields& fields) {
  if (static_cast<int>(level) < static_cast<int>(MinLevel())) return;
  WriteLine(level, message, fields);
}

void LastWords(std::string_view message, const Fields& fields) { WriteLine(Level::kError, message, fields); }

}  // namespace nccl_k8s::log

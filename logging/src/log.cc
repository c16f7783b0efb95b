#include "logging/log.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>

#include <nlohmann/json.hpp>

namespace logging {
namespace {

std::atomic<int> g_level{static_cast<int>(Level::kInfo)};
std::atomic<int> g_format{static_cast<int>(Format::kText)};
std::mutex g_write_mu;

const char* LevelName(Level level) {
  switch (level) {
    case Level::kDebug: return "debug";
    case Level::kInfo: return "info";
    case Level::kWarn: return "warn";
    case Level::kError: return "error";
  }
  return "info";
}

bool NeedsQuotes(std::string_view v) {
  if (v.empty()) return true;
  for (char c : v) {
    if (c == ' ' || c == '"' || c == '=' || c == '\n' || c == '\t') return true;
  }
  return false;
}

}  // namespace

std::string FormatRfc3339(std::chrono::system_clock::time_point t) {
  using namespace std::chrono;
  std::time_t secs = system_clock::to_time_t(t);
  auto millis = duration_cast<milliseconds>(t.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[80];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(millis));
  return buf;
}

void Configure(Format format, Level min_level) {
  g_format = static_cast<int>(format);
  g_level = static_cast<int>(min_level);
}

bool ParseLevel(std::string_view name, Level* out) {
  if (name == "debug") *out = Level::kDebug;
  else if (name == "info") *out = Level::kInfo;
  else if (name == "warn" || name == "warning") *out = Level::kWarn;
  else if (name == "error") *out = Level::kError;
  else return false;
  return true;
}

bool ParseFormat(std::string_view name, Format* out) {
  if (name == "text") *out = Format::kText;
  else if (name == "json") *out = Format::kJson;
  else return false;
  return true;
}

bool Enabled(Level level) { return static_cast<int>(level) >= g_level.load(); }

std::string Render(Format format, Level level, std::string_view timestamp,
                   std::string_view component, std::string_view message, const Fields& fields) {
  if (format == Format::kJson) {
    nlohmann::json line = {{"ts", timestamp}, {"level", LevelName(level)},
                           {"component", component}, {"msg", message}};
    for (const auto& [k, v] : fields) line[k] = v;
    return line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  std::string out;
  out.reserve(96 + message.size());
  out.append(timestamp).append(" ").append(LevelName(level)).append(" ");
  out.append(component).append(": ").append(message);
  for (const auto& [k, v] : fields) {
    out.append(" ").append(k).append("=");
    if (NeedsQuotes(v)) out.append(nlohmann::json(v).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    else out.append(v);
  }
  return out;
}

void Write(Level level, std::string_view component, std::string_view message, const Fields& fields) {
  if (!Enabled(level)) return;
  std::string line = Render(static_cast<Format>(g_format.load()), level,
                            FormatRfc3339(std::chrono::system_clock::now()), component, message, fields);
  line.push_back('\n');
  std::lock_guard<std::mutex> lock(g_write_mu);
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

}  // namespace logging

// One log format for the operator, the sidecar and the Kubernetes client: a line per
// event on stderr, either "text" (time level component: message key=value ...) or
// "json" (one object per line, for log collectors). Thread-safe.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace logging {

enum class Level { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3 };
enum class Format { kText, kJson };

using Field = std::pair<std::string, std::string>;
using Fields = std::vector<Field>;

// Process-wide settings; call once at start-up (defaults: text, info).
void Configure(Format format, Level min_level);
bool ParseLevel(std::string_view name, Level* out);    // debug|info|warn|error
bool ParseFormat(std::string_view name, Format* out);  // text|json
bool Enabled(Level level);

void Write(Level level, std::string_view component, std::string_view message,
           const Fields& fields = {});

// `t` as RFC 3339 in UTC with milliseconds ("2026-12-04T20:00:00.123Z"), as log lines carry it.
std::string FormatRfc3339(std::chrono::system_clock::time_point t);

// Renders one line without writing it (pure; used by Write and by tests).
std::string Render(Format format, Level level, std::string_view timestamp,
                   std::string_view component, std::string_view message, const Fields& fields);

inline void Debug(std::string_view c, std::string_view m, const Fields& f = {}) { Write(Level::kDebug, c, m, f); }
inline void Info(std::string_view c, std::string_view m, const Fields& f = {}) { Write(Level::kInfo, c, m, f); }
inline void Warn(std::string_view c, std::string_view m, const Fields& f = {}) { Write(Level::kWarn, c, m, f); }
inline void Error(std::string_view c, std::string_view m, const Fields& f = {}) { Write(Level::kError, c, m, f); }

}  // namespace logging

#include "api/time.h"

#include <cstdio>
#include <ctime>

namespace ncclop::api {

std::string FormatTime(Time t) {
  std::time_t secs = Clock::to_time_t(std::chrono::floor<std::chrono::seconds>(t));
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::optional<Time> ParseTime(std::string_view text) {
  int y, mo, d, h, mi, s;
  int consumed = 0;
  std::string str(text);
  if (std::sscanf(str.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &s, &consumed) != 6 ||
      consumed != 19) {
    return std::nullopt;
  }
  std::size_t pos = 19;
  if (pos < str.size() && str[pos] == '.') {
    ++pos;
    while (pos < str.size() && str[pos] >= '0' && str[pos] <= '9') ++pos;
  }
  long offset_seconds = 0;
  if (pos < str.size() && (str[pos] == 'Z' || str[pos] == 'z')) {
    ++pos;
  } else if (pos < str.size() && (str[pos] == '+' || str[pos] == '-')) {
    int oh, om;
    if (std::sscanf(str.c_str() + pos + 1, "%2d:%2d", &oh, &om) != 2) return std::nullopt;
    offset_seconds = (oh * 3600L + om * 60L) * (str[pos] == '+' ? 1 : -1);
    pos += 6;
  } else {
    return std::nullopt;
  }
  if (pos != str.size()) return std::nullopt;
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = s;
  std::time_t utc = timegm(&tm);
  return Clock::from_time_t(utc - offset_seconds);
}

}  // namespace ncclop::api

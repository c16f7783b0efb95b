// RFC 3339 timestamps as Kubernetes writes them ("2024-05-01T12:00:00Z", seconds precision).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace ncclop::api {

using Clock = std::chrono::system_clock;
using Time = Clock::time_point;

std::string FormatTime(Time t);
// Accepts "Z" or "+hh:mm" offsets and fractional seconds; nullopt when not a timestamp.
std::optional<Time> ParseTime(std::string_view text);

}  // namespace ncclop::api

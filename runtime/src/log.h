// The runtime's log lines on stderr, in the text format of the operator and sidecar
// ("<time> <level> nccl-k8s: <message> key=value ..."). The runtime lives inside a user's
// training process, so it keeps its own tiny writer instead of linking the shared logging
// library (which needs nlohmann/json); NCCL_K8S_LOG_LEVEL=debug|info|warn|error|off sets the floor.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nccl_k8s::log {

enum class Level { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3, kOff = 4 };
using Fields = std::vector<std::pair<std::string, std::string>>;

void Write(Level level, std::string_view message, const Fields& fields = {});
// An error line written whatever the floor: the last words of a process about to end itself.
void LastWords(std::string_view message, const Fields& fields = {});
// Pure: one line without the trailing newline (tests).
std::string Render(std::string_view timestamp, Level level, std::string_view message,
                   const Fields& fields);

inline void Debug(std::string_view m, const Fields& f = {}) { Write(Level::kDebug, m, f); }
inline void Info(std::string_view m, const Fields& f = {}) { Write(Level::kInfo, m, f); }
inline void Warn(std::string_view m, const Fields& f = {}) { Write(Level::kWarn, m, f); }
inline void Error(std::string_view m, const Fields& f = {}) { Write(Level::kError, m, f); }

}  // namespace nccl_k8s::log

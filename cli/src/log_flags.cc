#include "cli/log_flags.h"

namespace cli {

Flag LogFormatFlag(logging::Format* field) {
  return Choice("log-format", field, "FORMAT", {"text", "json"}, &logging::ParseFormat,
                "the log line format, json for log collectors");
}

Flag LogLevelFlag(logging::Level* field) {
  return Choice("log-level", field, "LEVEL", {"debug", "info", "warn", "error"}, &logging::ParseLevel,
                "the least severe level logged");
}

}  // namespace cli

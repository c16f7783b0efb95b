#include "cli/log_flags.h"

namespace cli {

Flag LogFormatFlag(logging::Format* field) {
  return Choice("log-format", field, "FORMAT", {"text", "json"}, &logging::ParseFormat,
                "log lines as text or as one JSON object each");
}

Flag LogLevelFlag(logging::Level* field) {
  return Choice("log-level", field, "LEVEL", {"debug", "info", "warn", "error"}, &logging::ParseLevel,
                "the least severe level logged");
}

}  // namespace cli

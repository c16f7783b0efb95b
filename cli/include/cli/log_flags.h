// --log-format and --log-level, the same in every program that logs (logging/log.h).
#pragma once

#include "cli/flag.h"
#include "logging/log.h"

namespace cli {

Flag LogFormatFlag(logging::Format* field);
Flag LogLevelFlag(logging::Level* field);

}  // namespace cli

// The configuration text handed to a Kineto client (KEY=VALUE lines, see KINETO_IPC.md).
#pragma once

#include <string>

#include "rankscope/daemon/capture_spec.h"

namespace rankscope::daemon {

// `log_file` is where the client should write; it inserts "_<pid>" before ".json" itself.
// `now_unix_ms` places a duration-mode trace without an explicit start time.
std::string BuildKinetoConfig(const TraceSpec& spec, const std::string& log_file, int64_t now_unix_ms);

// The file the client will write for `log_file` (Kineto inserts the pid).
std::string KinetoOutputPath(const std::string& log_file, int32_t pid);
// Where Kineto writes when it refuses the requested path.
std::string KinetoFallbackPath(int32_t pid);

}  // namespace rankscope::daemon

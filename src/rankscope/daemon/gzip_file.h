// Compresses a finished Kineto trace (plain JSON, often hundreds of MB) into the gzip file the
// rest of rankscope expects, streamed with isa-l (several GB/s at level 1).
#pragma once

#include <string>

#include "rankscope/base/status.h"

namespace rankscope::daemon {

// Writes `dst` + ".tmp", then renames it to `dst`: readers never see half a file.
Status GzipFile(const std::string& src, const std::string& dst);

}  // namespace rankscope::daemon

// Compresses a finished Kineto trace (plain JSON, often hundreds of MB) into the gzip file the
// rest of rankscope expects, streamed with isa-l (several GB/s at level 1).
#pragma once

#include "rankscope/base/status.h"

namespace rankscope::daemon {

// Reads `in_fd` to its end and writes it gzip-compressed to `out_fd`. The descriptors are the
// caller's: it opened them safely (DirHandle::OpenOwnedFile, DirHandle::WriteFile).
Status GzipStream(int in_fd, int out_fd);

}  // namespace rankscope::daemon

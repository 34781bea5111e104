// The Kineto / PyTorch-profiler trace format: Chrome-trace JSON (plain or gzip) of every schema
// generation, as torch.profiler and Kineto's daemon mode write it.
#pragma once

#include "rankscope/ingest/trace_format.h"

namespace rankscope::kineto {

const TraceFormat& Format();

}  // namespace rankscope::kineto

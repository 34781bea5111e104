// Reading one Kineto / PyTorch-profiler Chrome-trace file (plain or gzip) into a TraceModel.
#pragma once

#include <string>
#include <string_view>

#include "rankscope/base/status.h"
#include "rankscope/ingest/reader_options.h"
#include "rankscope/ingest/trace_model.h"

namespace rankscope {

// Reads `path`. Errors name the file, the byte offset (in the uncompressed JSON) and the reason.
StatusOr<TraceModel> ReadKinetoTrace(const std::string& path, const ReaderOptions& options = {});

// The same for bytes in memory (plain or gzip); `name` is used in messages.
StatusOr<TraceModel> ReadKinetoTraceBytes(std::string_view data, const std::string& name,
                                          const ReaderOptions& options = {});

// Which compiled variant of the JSON hot path this CPU runs ("haswell" or "generic").
const char* ReaderTargetName();

}  // namespace rankscope

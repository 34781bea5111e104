// Reading one trace file, whatever its format, into a TraceModel.
//
// The file is opened (gzip is inflated whatever its name), its format is picked from its first
// bytes and its name (trace_formats.h), and that format reads it.
#pragma once

#include <string>
#include <string_view>

#include "rankscope/base/status.h"
#include "rankscope/ingest/reader_options.h"
#include "rankscope/ingest/trace_model.h"

namespace rankscope {

// Reads `path`. Errors name the file, the byte offset (in the uncompressed data) and the reason;
// StatusCode::kNotATrace when the file is valid data of another kind (a JSON config).
StatusOr<TraceModel> ReadTrace(const std::string& path, const ReaderOptions& options = {});

// The same for bytes in memory (plain or gzip); `name` stands for the file name.
StatusOr<TraceModel> ReadTraceBytes(std::string_view data, const std::string& name, const ReaderOptions& options = {});

}  // namespace rankscope

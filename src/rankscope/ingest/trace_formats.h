// The registry of trace formats: every format rankscope reads, and which one a file is in.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "rankscope/ingest/trace_format.h"

namespace rankscope {

// The registered formats, in the order of ingest/CMakeLists.txt's RANKSCOPE_TRACE_FORMATS. The
// first is the default.
std::span<const TraceFormat* const> TraceFormats();

// The first format whose Sniff accepts the file, else the default one, which then says what is
// wrong with the file in terms of the most common format.
const TraceFormat& SelectTraceFormat(std::string_view head, std::string_view file_name);

// Whether some format's files end like `file_name` (directory search).
bool HasTraceFileSuffix(std::string_view file_name);

// "*.json, *.json.gz": the names directory search looks for, for messages.
std::string TraceFilePatterns();

}  // namespace rankscope

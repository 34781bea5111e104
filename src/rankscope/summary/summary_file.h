// Summary files on disk: `<trace>.rsum` beside the trace (or in an output directory), written
// atomically, read with a clear error, and checked against the trace they were made from.
#pragma once

#include <string>
#include <string_view>

#include "rankscope/base/status.h"
#include "rankscope/summary/summary_codec.h"

namespace rankscope::summary {

inline constexpr std::string_view kSummarySuffix = ".rsum";

bool IsSummaryPath(std::string_view path);

// "<dir>/<trace base name>.rsum"; `out_dir` "" = beside the trace.
std::string SummaryPathFor(const std::string& trace_path, const std::string& out_dir);

// The trace a summary path stands for: the path without ".rsum" (a summary in an output
// directory stands for a trace of that name there; the report names that path).
std::string TracePathOf(const std::string& summary_path);

// Size, modification time and sample hash of the trace (summary_codec.h).
StatusOr<TraceIdentity> IdentifyTrace(const std::string& trace_path);

// Writes to a temporary name and renames, so a reader never sees half a summary.
Status WriteSummaryFile(const std::string& path, const SummaryFile& file);

// Errors name the path (see DecodeSummary for the kinds).
StatusOr<SummaryFile> ReadSummaryFile(const std::string& path);

}  // namespace rankscope::summary

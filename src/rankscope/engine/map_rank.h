// The map of one file, inside the engine: a trace is read and analysed to its RankSummary, a
// summary file (.rsum) is read, and a trace with a current summary beside it is not read at all.
// AnalyzeJob, SummarizeTraces and the MPI run share these.
#pragma once

#include <optional>
#include <string>

#include "rankscope/analysis/analyze_rank.h"
#include "rankscope/base/status.h"
#include "rankscope/engine/analyze_job.h"

namespace rankscope {

// The per-rank analysis options of a job's options; `patterns` must outlive the result.
StatusOr<AnalysisOptions> RankOptions(const AnalyzeOptions& options, const CommPatterns* patterns);

// Reads and analyses one trace (`hook` may be null); records the read time in the summary.
// parse_threads: ReaderOptions::parse_threads.
MappedFile MapTrace(const std::string& file, const AnalysisOptions& options, const RankHook* hook,
                    unsigned parse_threads = 1);

// Reads a summary file; it must have been made with `options_key` (SummaryOptionsKey).
MappedFile MapSummaryFile(const std::string& file, const std::string& options_key);

// The summary beside `trace` (<trace>.rsum) when it is current: made with `options_key` from a
// trace of the same size, modification time and sample hash. A corrupt one is noted in
// `*warning`; an older format or a stale summary is silently passed over.
std::optional<RankSummary> CurrentSummaryBeside(const std::string& trace, const std::string& options_key,
                                                std::string* warning);

}  // namespace rankscope

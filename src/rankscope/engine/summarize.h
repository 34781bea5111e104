// SummarizeTraces: the map alone, saved. Each trace is analysed to its rank summary, which is
// written as <trace>.rsum beside it (or into an output directory), so a later analysis, another
// machine or another process reads summaries instead of traces (docs/scale.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "rankscope/base/status.h"
#include "rankscope/engine/analyze_job.h"
#include "rankscope/summary/summary_codec.h"

namespace rankscope {

struct SummarizedFile {
  std::string trace;
  std::string summary_path;  // "" when the trace could not be summarised
  Status status;
  uint64_t bytes = 0;        // size of the summary file
};

// One trace's summary file, not written anywhere (the node daemon writes it as the trace's user).
StatusOr<summary::SummaryFile> SummarizeTrace(const std::string& trace, const AnalyzeOptions& options);

// Fails on a whole-run problem (no trace, bad options, two traces of one name for one output
// directory); a trace that cannot be read is a SummarizedFile with an error. `out_dir` "" =
// beside each trace.
StatusOr<std::vector<SummarizedFile>> SummarizeTraces(const std::vector<std::string>& paths,
                                                      const AnalyzeOptions& options, const std::string& out_dir,
                                                      Progress* progress = nullptr);

}  // namespace rankscope

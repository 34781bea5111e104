// The files of a job: traces and rank summaries (.rsum, summary/summary_file.h), and the key of
// the analysis options a summary must have been computed with to stand for its trace.
#pragma once

#include <string>
#include <vector>

#include "rankscope/base/status.h"
#include "rankscope/engine/job_report.h"

namespace rankscope {

// Expands files and directories (recursively) into trace files and summaries, sorted by path
// within each directory. A summary found beside its trace in a directory is left out: the trace
// stands for both, and its summary is used when current (AnalyzeJob).
StatusOr<std::vector<std::string>> DiscoverJobFiles(const std::vector<std::string>& inputs);

// Every option that changes a rank's summary, in one string; a summary made with another key
// does not stand for its trace.
std::string SummaryOptionsKey(const AnalyzeOptions& options);

}  // namespace rankscope

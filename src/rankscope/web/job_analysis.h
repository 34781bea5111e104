// The analysis `rankscope serve` runs for a job of trace files: the engine's pipeline (read,
// summarise each rank, resolve ranks, diagnose the cluster, join telemetry), the same as
// `rankscope analyze`. To become engine/analyze_job.h's AnalyzeJob once it lands.
#pragma once

#include <string>
#include <vector>

#include "rankscope/base/status.h"
#include "rankscope/report/analysis_report.h"

namespace rankscope::web {

// Fails only on a whole-job problem (no trace at all, a rank given twice); a file that cannot be
// read is an entry in the report's errors.
StatusOr<AnalysisReport> AnalyzeTraceFiles(const std::vector<std::string>& files, unsigned threads);

}  // namespace rankscope::web

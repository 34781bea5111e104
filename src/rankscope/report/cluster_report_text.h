// Terminal rendering of cluster diagnosis: the ranked findings with their cost, evidence and
// next step, then the per-rank comparison, collective matching, clock offsets, abnormal
// functions and GPU utilization. At most 100 columns wide.
#pragma once

#include <string>

#include "rankscope/cluster/cluster_diagnosis.h"
#include "rankscope/findings/finding.h"
#include "rankscope/report/analysis_report_text.h"

namespace rankscope {

// `findings` are the job's findings (cluster and telemetry), ranked.
std::string RenderClusterReport(const ClusterDiagnosis& d, const std::vector<Finding>& findings,
                                const TextOptions& options);

}  // namespace rankscope

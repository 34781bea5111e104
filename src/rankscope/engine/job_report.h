// JobReport: what AnalyzeJob returns — every rank's summary, the cluster diagnosis, node
// telemetry over the traced window, and one ranked list of findings. The JSON report (schema
// "rankscope.report/2", docs/report-schema.md) and the terminal report both render this.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rankscope/analysis/definitions.h"
#include "rankscope/analysis/rank_summary.h"
#include "rankscope/analysis/telemetry_join.h"
#include "rankscope/base/parallel_for.h"
#include "rankscope/cluster/cluster_diagnosis.h"
#include "rankscope/findings/finding.h"

namespace rankscope {

// Every knob of an analysis, with the defaults of `rankscope analyze`.
struct AnalyzeOptions {
  std::string window = "auto";    // auto | steps | gpu | cpu
  std::string steps;              // "A:B", "A:", ":B", "A", or "" for every profiled step
  std::vector<std::string> comm_patterns;  // regexes: kernels counted as communication
  int64_t kernel_wait_threshold_ns = kDefaultKernelWaitThresholdNs;
  double outlier_k = kDefaultOutlierK;
  double outlier_margin = kDefaultOutlierMargin;
  double min_cost_share = kDefaultMinCostShare;
  double flag_share = kFlagShare;  // bottleneck ratio above which a function is flagged
  unsigned threads = DefaultThreadCount();  // files analysed in parallel
  bool telemetry = true;           // join the telemetry.<host>.tsv found beside the traces
  bool function_tables = true;     // false: no per-function tables (compare uses none of them)
  bool stream_analyses = true;     // false: no idle per stream, no launch statistics (compare reads neither)
  bool use_summaries = true;       // a current <trace>.rsum beside a trace stands for it (docs/scale.md)
};

struct FileError {
  std::string path;
  std::string message;
};

struct JobReport {
  AnalyzeOptions options;
  std::vector<RankSummary> ranks;           // by rank number
  std::optional<ClusterDiagnosis> cluster;  // two or more ranks
  bool has_telemetry = false;               // a telemetry.<host>.tsv was found
  std::vector<analysis::NodeWindowTelemetry> telemetry;
  std::vector<Finding> findings;            // cluster + telemetry, ranked (RankFindings)
  std::vector<FileError> errors;            // files that could not be read or analysed
  std::vector<std::string> warnings;
};

}  // namespace rankscope

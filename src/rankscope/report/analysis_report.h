// The `rankscope analyze` report: per-rank summaries plus the options they were computed with.
// JSON (schema "rankscope.report/1", docs/report-schema.md and docs/report-schema.json) and the
// terminal rendering both start from this.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "rankscope/analysis/rank_summary.h"
#include "rankscope/analysis/telemetry_join.h"
#include "rankscope/cluster/cluster_diagnosis.h"

namespace rankscope {

inline constexpr const char* kReportSchema = "rankscope.report/1";

struct ReportOptions {
  std::string window;  // "auto", "steps", ...
  std::string steps;   // --steps as given, or ""
  std::vector<std::string> comm_patterns;
  int64_t kernel_wait_threshold_ns = kDefaultKernelWaitThresholdNs;
  double flag_share = kFlagShare;
};

struct FileError {
  std::string path;
  std::string message;
};

struct AnalysisReport {
  ReportOptions options;
  std::vector<RankSummary> ranks;  // by rank
  std::optional<ClusterDiagnosis> cluster;  // cross-rank diagnosis (two or more ranks)
  // Node telemetry saved beside the traces, over each node's traced window, and what it shows.
  bool has_telemetry = false;  // a telemetry.<host>.tsv was found
  std::vector<analysis::NodeWindowTelemetry> telemetry;
  std::vector<analysis::TelemetryFinding> telemetry_findings;
  std::vector<FileError> errors;   // files that could not be read or analysed
  std::vector<std::string> warnings;
};

nlohmann::json RankSummaryToJson(const RankSummary& r, double flag_share);
nlohmann::json AnalysisReportToJson(const AnalysisReport& report);
// Every top-level field but "ranks" (small whatever the number of ranks; the web UI's overview).
nlohmann::json ReportHeadJson(const AnalysisReport& report);
// The same document, written one rank at a time: memory holds one rank's JSON, not the job's.
void WriteAnalysisReportJson(const AnalysisReport& report, std::ostream& out);

// The report's `cluster` and `findings` sections (cluster_report_json.cc).
nlohmann::json ClusterToJson(const ClusterDiagnosis& d);
nlohmann::json FindingsToJson(const ClusterDiagnosis& d);

}  // namespace rankscope

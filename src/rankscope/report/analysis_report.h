// The `rankscope analyze` report as JSON (schema "rankscope.report/2", docs/report-schema.md and
// docs/report-schema.json), written from the engine's JobReport (engine/job_report.h).
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "rankscope/engine/job_report.h"

namespace rankscope {

inline constexpr const char* kReportSchema = "rankscope.report/2";

nlohmann::json RankSummaryToJson(const RankSummary& r, double flag_share);
nlohmann::json AnalysisReportToJson(const JobReport& report);
// Every top-level field but "ranks" (small whatever the number of ranks; the web UI's overview).
nlohmann::json ReportHeadJson(const JobReport& report);
// The same document, written one rank at a time: memory holds one rank's JSON, not the job's.
void WriteAnalysisReportJson(const JobReport& report, std::ostream& out);

// The report's `cluster` section (cluster_report_json.cc).
nlohmann::json ClusterToJson(const ClusterDiagnosis& d);

}  // namespace rankscope

// What the web UI's views show beyond the report itself (`rankscope serve`, `analyze --html`),
// computed here from the per-rank summaries and the cluster diagnosis so that the page draws
// numbers and never computes them. Every document is bounded whatever the number of ranks;
// docs/report-schema.md ("Web UI documents") describes each field.
//
//   overview   the report without the per-rank function tables (report_overview_json.cc)
//   timeline   one step, one lane per rank on the reference clock, every collective instance
//              joined across the ranks that took part in it (timeline_json.cc)
//   matrix     rank x rank (or host x host) time, bytes and bandwidth of matched collectives
//              and point-to-point transfers, intra vs inter host (comm_matrix_json.cc)
//   functions  the distribution over ranks of the heaviest functions, and the outliers
//              (function_spread_json.cc)
//   telemetry  node telemetry samples over the traced window, steps marked
//              (telemetry_series_json.cc)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rankscope/analysis/rank_summary.h"
#include "rankscope/cluster/cluster_diagnosis.h"

namespace rankscope {

inline constexpr const char* kViewsSchema = "rankscope.views/1";

// Bounds of the view documents.
struct ViewLimits {
  size_t max_timeline_spans = 200'000;  // collective spans in one step's timeline
  size_t max_matrix_cells = 256;        // matrix side; more ranks are grouped by host, then by block
  size_t max_functions = 40;            // functions per kind in the spread
  size_t max_series_points = 1500;      // samples per telemetry series (evenly thinned beyond)
  size_t max_embedded_timelines = 16;   // steps whose timeline an HTML report carries
};

// The report's head (everything but `ranks`) plus every rank without its function tables,
// communication instances, idle, launch and memory sections: what the first view needs, small
// at thousands of ranks. `head` is the report head as the JSON report writes it.
nlohmann::json ReportOverviewJson(nlohmann::json head, const std::vector<RankSummary>& ranks, double flag_share);
// The same from a report document (a report JSON given to `rankscope serve`).
nlohmann::json ReportOverviewFromReport(const nlohmann::json& report);

// The step numbers that have a timeline: steps present on every rank, ascending.
std::vector<int64_t> TimelineSteps(const std::vector<RankSummary>& ranks);
// One step (default: the step whose median duration over ranks is the median one).
nlohmann::json TimelineJson(const std::vector<RankSummary>& ranks, const ClusterDiagnosis& d,
                            std::optional<int64_t> step, const ViewLimits& limits = {});

nlohmann::json CommMatrixJson(const std::vector<RankSummary>& ranks, const ClusterDiagnosis& d,
                              const ViewLimits& limits = {});

nlohmann::json FunctionSpreadJson(const std::vector<RankSummary>& ranks, const ClusterDiagnosis& d,
                                  const ViewLimits& limits = {});

// `sidecars`: telemetry.<host>.tsv files. Step marks come from the ranks that ran on each host.
nlohmann::json TelemetrySeriesJson(const std::vector<std::string>& sidecars, const std::vector<RankSummary>& ranks,
                                   const ViewLimits& limits = {});

// Everything an HTML report carries: overview, the timelines of up to max_embedded_timelines
// steps, matrix, functions, telemetry. `cluster` may be null (one rank).
nlohmann::json ViewBundleJson(nlohmann::json head, const std::vector<RankSummary>& ranks,
                              const ClusterDiagnosis* cluster, const std::vector<std::string>& sidecars,
                              double flag_share, const ViewLimits& limits = {});

}  // namespace rankscope

#include "rankscope/web/job_analysis.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <optional>
#include <set>

#include "rankscope/analysis/analyze_rank.h"
#include "rankscope/base/parallel_for.h"
#include "rankscope/cluster/cluster_diagnosis.h"
#include "rankscope/ingest/kineto_reader.h"
#include "rankscope/telemetry/sidecar.h"

namespace rankscope::web {

StatusOr<AnalysisReport> AnalyzeTraceFiles(const std::vector<std::string>& files, unsigned threads) {
  AnalysisOptions a;
  std::vector<std::optional<RankSummary>> summaries(files.size());
  std::vector<Status> errors(files.size());
  ParallelFor(files.size(), threads, [&](size_t i) {
    const auto t0 = std::chrono::steady_clock::now();
    auto model = ReadKinetoTrace(files[i]);
    const int64_t ingest_ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
    if (!model.ok()) {
      errors[i] = model.status();
    } else if (auto summary = AnalyzeRank(*model, a); summary.ok()) {
      summary->ingest_ns = ingest_ns;
      summaries[i] = std::move(summary).value();
    } else {
      errors[i] = summary.status();
    }
  });
  AnalysisReport report;
  report.options = {"auto", "", {}, a.kernel_wait_threshold_ns, kFlagShare};
  std::vector<RankEvidence> evidence;
  for (size_t i = 0; i < files.size(); ++i) {
    if (summaries[i]) {
      evidence.push_back({summaries[i]->path, summaries[i]->distributed_rank});
      report.ranks.push_back(std::move(*summaries[i]));
    } else if (errors[i].code() == StatusCode::kNotATrace) {
      report.warnings.push_back(errors[i].message() + "; skipped");
    } else {
      report.errors.push_back({files[i], errors[i].message()});
    }
  }
  if (report.ranks.empty() && report.errors.empty()) {
    return InvalidArgument("none of the {} file(s) is a trace", files.size());
  }
  RANKSCOPE_ASSIGN_OR_RETURN(std::vector<RankAssignment> ranks, ResolveRanks(evidence, &report.warnings));
  for (size_t k = 0; k < report.ranks.size(); ++k) {
    report.ranks[k].rank = ranks[k];
    report.ranks[k].rank_resolved = true;
  }
  std::sort(report.ranks.begin(), report.ranks.end(),
            [](const RankSummary& x, const RankSummary& y) { return x.rank.rank < y.rank.rank; });
  if (report.ranks.size() > 1) {
    RANKSCOPE_ASSIGN_OR_RETURN(report.cluster, DiagnoseCluster(report.ranks, ClusterOptions{}));
  }
  // Telemetry the node daemons saved beside the traces.
  std::set<std::string> dirs;
  for (const std::string& f : files) dirs.insert(std::filesystem::path(f).parent_path().string());
  std::vector<std::string> sidecars;
  for (const std::string& dir : dirs) {
    for (std::string& p : telemetry::FindSidecars(dir)) sidecars.push_back(std::move(p));
  }
  if (!sidecars.empty()) {
    std::vector<analysis::RankWindow> windows;
    for (const RankSummary& r : report.ranks) {
      if (r.window_ns() > 0) windows.push_back({r.rank.rank, r.window_start_ns, r.window_end_ns});
    }
    report.has_telemetry = true;
    report.telemetry = analysis::JoinTelemetry(sidecars, windows, &report.warnings);
    report.telemetry_findings = analysis::FindTelemetryIssues(report.telemetry);
  }
  return report;
}

}  // namespace rankscope::web

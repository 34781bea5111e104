#include "rankscope/engine/analyze_job.h"

#include <algorithm>
#include <chrono>
#include <optional>

#include "rankscope/analysis/analyze_rank.h"
#include "rankscope/base/parallel_for.h"
#include "rankscope/engine/capture_hosts.h"
#include "rankscope/engine/job_files.h"
#include "rankscope/engine/map_rank.h"
#include "rankscope/summary/summary_file.h"

namespace rankscope {
namespace {

// Keeps the summaries, sorts the others into errors and warnings, and numbers the ranks.
Status CollectRanks(const std::vector<std::string>& files, std::vector<MappedFile> mapped, JobReport* report) {
  std::vector<RankEvidence> evidence;
  for (size_t i = 0; i < files.size(); ++i) {
    if (!mapped[i].warning.empty()) report->warnings.push_back(mapped[i].warning);
    if (mapped[i].summary) {
      evidence.push_back({mapped[i].summary->path, mapped[i].summary->distributed_rank});
      report->ranks.push_back(std::move(*mapped[i].summary));
    } else if (mapped[i].error.code() == StatusCode::kNotATrace) {  // e.g. a JSON config beside the traces
      report->warnings.push_back(mapped[i].error.message() + "; skipped");
    } else {
      report->errors.push_back({files[i], mapped[i].error.message()});
    }
  }
  if (report->ranks.empty() && report->errors.empty()) {
    return InvalidArgument("none of the {} file(s) is a trace or a rank summary", files.size());
  }
  RANKSCOPE_ASSIGN_OR_RETURN(std::vector<RankAssignment> ranks, ResolveRanks(evidence, &report->warnings));
  for (size_t k = 0; k < report->ranks.size(); ++k) {
    report->ranks[k].rank = ranks[k];
    report->ranks[k].rank_resolved = true;
  }
  std::sort(report->ranks.begin(), report->ranks.end(),
            [](const RankSummary& a, const RankSummary& b) { return a.rank.rank < b.rank.rank; });
  return OkStatus();
}

StatusOr<ClusterOptions> ClusterOptionsFor(const JobInputs& in, const AnalyzeOptions& opt, JobReport* report) {
  ClusterOptions c;
  c.outlier_k = opt.outlier_k;
  c.outlier_margin = opt.outlier_margin;
  c.min_cost_share = opt.min_cost_share;
  if (!in.hosts_file.empty()) {
    RANKSCOPE_ASSIGN_OR_RETURN(c.hosts, ReadHostMap(in.hosts_file));
    c.hosts_source = in.hosts_file;
  }
  if (!in.layout.empty()) {
    RANKSCOPE_ASSIGN_OR_RETURN(c.layout, ParseLayoutSpec(in.layout));
  }
  std::vector<TraceFileRank> files;
  for (const RankSummary& r : report->ranks) files.push_back({r.path, r.rank.rank});
  c.capture_hosts = FindCaptureHosts(files, &report->warnings);
  return c;
}

// Telemetry the node daemons saved beside the traces (telemetry.<host>.tsv, docs/telemetry.md),
// joined with the traces on absolute time: each node over the union of its ranks' windows W.
void JoinNodeTelemetry(const JobInputs& in, JobReport* report) {
  std::vector<std::string> files;
  for (const RankSummary& r : report->ranks) files.push_back(r.path);
  const std::vector<std::string> sidecars = FindTelemetrySidecars(in.paths, files);
  if (sidecars.empty()) return;
  std::vector<analysis::RankWindow> windows;
  for (const RankSummary& r : report->ranks) {
    if (r.window_ns() > 0) windows.push_back({r.rank.rank, r.window_start_ns, r.window_end_ns});
  }
  report->has_telemetry = true;
  report->telemetry = analysis::JoinTelemetry(sidecars, windows, &report->warnings);
  for (Finding& f : analysis::FindTelemetryIssues(report->telemetry)) report->findings.push_back(std::move(f));
}

// Fewer files than threads (one big trace, rank 0's often): the spare threads parse inside the
// files (ReaderOptions::parse_threads). Beyond 4 the in-order build of the model is the limit
// (bench/README.md, "Single-file speed-up").
unsigned ParseThreadsPerFile(size_t files, unsigned threads) {
  constexpr unsigned kMostUseful = 4;
  if (files == 0 || files >= threads) return 1;
  return std::min<unsigned>(kMostUseful, threads / static_cast<unsigned>(files));
}

}  // namespace

StatusOr<std::vector<MappedFile>> MapJobFiles(const std::vector<std::string>& files, const AnalyzeOptions& options,
                                              Progress* progress, const RankHook* hook) {
  RANKSCOPE_ASSIGN_OR_RETURN(CommPatterns patterns, CommPatterns::Compile(options.comm_patterns));
  RANKSCOPE_ASSIGN_OR_RETURN(AnalysisOptions rank_options, RankOptions(options, &patterns));
  const std::string key = SummaryOptionsKey(options);
  const bool summaries_stand_for_traces = options.use_summaries && hook == nullptr;  // a hook needs the model
  std::vector<MappedFile> out(files.size());
  if (progress) progress->Start(files.size());
  const unsigned parse_threads = ParseThreadsPerFile(files.size(), options.threads);
  ParallelFor(files.size(), options.threads, [&](size_t i) {
    if (summary::IsSummaryPath(files[i])) {
      out[i] = hook ? MappedFile{std::nullopt,
                                 FailedPrecondition("{}: a summary cannot be used here: this command needs the trace",
                                                    files[i]), ""}
                    : MapSummaryFile(files[i], key);
    } else if (summaries_stand_for_traces) {
      if (auto current = CurrentSummaryBeside(files[i], key, &out[i].warning)) {
        out[i].summary = std::move(current);
      } else {
        std::string warning = std::move(out[i].warning);
        out[i] = MapTrace(files[i], rank_options, hook, parse_threads);
        out[i].warning = std::move(warning);
      }
    } else {
      out[i] = MapTrace(files[i], rank_options, hook, parse_threads);
    }
    if (progress) progress->FileDone();
  });
  return out;
}

StatusOr<JobReport> ReduceJob(const JobInputs& inputs, const AnalyzeOptions& options,
                              const std::vector<std::string>& files, std::vector<MappedFile> mapped) {
  JobReport report;
  report.options = options;
  RANKSCOPE_RETURN_IF_ERROR(CollectRanks(files, std::move(mapped), &report));
  if (report.ranks.size() > 1) {
    RANKSCOPE_ASSIGN_OR_RETURN(ClusterOptions cluster_options, ClusterOptionsFor(inputs, options, &report));
    RANKSCOPE_ASSIGN_OR_RETURN(ClusterDiagnosis cluster, DiagnoseCluster(report.ranks, cluster_options));
    report.findings = cluster.findings;
    report.cluster = std::move(cluster);
  }
  if (options.telemetry) JoinNodeTelemetry(inputs, &report);
  RankFindings(&report.findings);
  return report;
}

StatusOr<JobReport> AnalyzeJob(const JobInputs& inputs, const AnalyzeOptions& options, Progress* progress,
                               const RankHook* hook) {
  RANKSCOPE_ASSIGN_OR_RETURN(std::vector<std::string> files, DiscoverJobFiles(inputs.paths));
  RANKSCOPE_RETURN_IF_ERROR(CommPatterns::Compile(options.comm_patterns).status());
  if (!inputs.hosts_file.empty()) RANKSCOPE_RETURN_IF_ERROR(ReadHostMap(inputs.hosts_file).status());
  if (!inputs.layout.empty()) RANKSCOPE_RETURN_IF_ERROR(ParseLayoutSpec(inputs.layout).status());
  RANKSCOPE_ASSIGN_OR_RETURN(std::vector<MappedFile> mapped, MapJobFiles(files, options, progress, hook));
  return ReduceJob(inputs, options, files, std::move(mapped));
}

}  // namespace rankscope

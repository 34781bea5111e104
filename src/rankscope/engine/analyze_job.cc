#include "rankscope/engine/analyze_job.h"

#include <algorithm>
#include <chrono>
#include <optional>

#include "rankscope/analysis/analyze_rank.h"
#include "rankscope/base/parallel_for.h"
#include "rankscope/engine/capture_hosts.h"
#include "rankscope/ingest/read_trace.h"
#include "rankscope/ingest/trace_set.h"

namespace rankscope {
namespace {

StatusOr<AnalysisOptions> RankOptions(const AnalyzeOptions& opt, const CommPatterns* patterns) {
  AnalysisOptions a;
  a.comm_patterns = patterns;
  a.kernel_wait_threshold_ns = opt.kernel_wait_threshold_ns;
  a.function_tables = opt.function_tables;
  a.stream_analyses = opt.stream_analyses;
  if (opt.window == "steps") a.window.kind = WindowRequest::Kind::kSteps;
  else if (opt.window == "gpu") a.window.kind = WindowRequest::Kind::kGpu;
  else if (opt.window == "cpu") a.window.kind = WindowRequest::Kind::kCpu;
  else if (opt.window != "auto") return InvalidArgument("window {}: expected auto, steps, gpu or cpu", opt.window);
  if (!opt.steps.empty()) {
    if (opt.window != "auto" && opt.window != "steps") {
      return InvalidArgument("--steps selects profiler steps: it cannot be combined with --window {}", opt.window);
    }
    RANKSCOPE_RETURN_IF_ERROR(ParseStepRange(opt.steps, &a.window));
  }
  return a;
}

struct MappedFile {
  std::optional<RankSummary> summary;
  Status error;
};

// The map: each file is read and reduced to its summary on a worker; the model is dropped there,
// so memory holds a few models at a time and one summary per rank.
std::vector<MappedFile> MapFiles(const std::vector<std::string>& files, const AnalysisOptions& a, unsigned threads,
                                 Progress* progress, const RankHook* hook) {
  std::vector<MappedFile> out(files.size());
  if (progress) progress->Start(files.size());
  ParallelFor(files.size(), threads, [&](size_t i) {
    const auto t0 = std::chrono::steady_clock::now();
    auto model = ReadTrace(files[i], hook ? hook->reader : ReaderOptions{});
    const int64_t ingest_ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
    if (!model.ok()) {
      out[i].error = model.status();
    } else {
      RankIntermediates intermediates;
      auto summary = AnalyzeRank(*model, a, hook ? &intermediates : nullptr);
      if (!summary.ok()) {
        out[i].error = summary.status();
      } else if (Status s = hook ? hook->fn(*model, *summary, intermediates) : OkStatus(); !s.ok()) {
        out[i].error = s;
      } else {
        summary->ingest_ns = ingest_ns;
        out[i].summary = std::move(summary).value();
      }
    }
    if (progress) progress->FileDone();
  });
  return out;
}

// Keeps the summaries, sorts the others into errors and warnings, and numbers the ranks.
Status CollectRanks(const std::vector<std::string>& files, std::vector<MappedFile> mapped, JobReport* report) {
  std::vector<RankEvidence> evidence;
  for (size_t i = 0; i < files.size(); ++i) {
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
    return InvalidArgument("none of the {} file(s) is a trace", files.size());
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

}  // namespace

StatusOr<JobReport> AnalyzeJob(const JobInputs& inputs, const AnalyzeOptions& options, Progress* progress,
                               const RankHook* hook) {
  RANKSCOPE_ASSIGN_OR_RETURN(std::vector<std::string> files, DiscoverTraceFiles(inputs.paths));
  RANKSCOPE_ASSIGN_OR_RETURN(CommPatterns patterns, CommPatterns::Compile(options.comm_patterns));
  RANKSCOPE_ASSIGN_OR_RETURN(AnalysisOptions rank_options, RankOptions(options, &patterns));
  if (!inputs.hosts_file.empty()) RANKSCOPE_RETURN_IF_ERROR(ReadHostMap(inputs.hosts_file).status());
  if (!inputs.layout.empty()) RANKSCOPE_RETURN_IF_ERROR(ParseLayoutSpec(inputs.layout).status());

  JobReport report;
  report.options = options;
  RANKSCOPE_RETURN_IF_ERROR(CollectRanks(files, MapFiles(files, rank_options, options.threads, progress, hook), &report));
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

}  // namespace rankscope

// `rankscope analyze <files|dir> [--json FILE] [--rank R] [--steps A:B] [--top N]
//                    [--comm-pattern REGEX]... [--hosts FILE] [--outlier-k K] ...`: per-rank
// analysis, cluster diagnosis across the ranks, and their report.
//
// Files are read and analysed in parallel; each worker reduces its trace to a RankSummary and
// drops the model, so memory holds a few models at a time and one summary per rank. Cluster
// diagnosis then reads the summaries only.
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>

#include "rankscope/analysis/analyze_rank.h"
#include "rankscope/base/parallel_for.h"
#include "rankscope/cluster/cluster_diagnosis.h"
#include "rankscope/cli/commands.h"
#include "rankscope/ingest/read_trace.h"
#include "rankscope/ingest/trace_set.h"
#include "rankscope/report/analysis_report_text.h"
#include "rankscope/report/cluster_report_text.h"
#include "rankscope/report/progress.h"
#include "rankscope/report/telemetry_report_text.h"
#include "rankscope/telemetry/sidecar.h"

namespace rankscope::cli {
namespace {

struct AnalyzeOptions {
  std::vector<std::string> inputs;
  std::string json_path;
  std::optional<int64_t> rank;
  std::string steps;
  std::string window = "auto";
  size_t top = 10;
  std::vector<std::string> comm_patterns;
  double kernel_wait_us = kDefaultKernelWaitThresholdNs / 1000.0;
  std::string color = "auto";
  unsigned threads = DefaultThreadCount();
  std::string hosts_file;
  double outlier_k = kDefaultOutlierK;
  double outlier_margin = kDefaultOutlierMargin;
  double min_cost_share = kDefaultMinCostShare;
};

StatusOr<ClusterOptions> BuildClusterOptions(const AnalyzeOptions& opt) {
  ClusterOptions c;
  c.outlier_k = opt.outlier_k;
  c.outlier_margin = opt.outlier_margin;
  c.min_cost_share = opt.min_cost_share;
  if (!opt.hosts_file.empty()) {
    RANKSCOPE_ASSIGN_OR_RETURN(c.hosts, ReadHostMap(opt.hosts_file));
    c.hosts_source = opt.hosts_file;
  }
  return c;
}

StatusOr<AnalysisOptions> BuildAnalysisOptions(const AnalyzeOptions& opt, const CommPatterns* patterns) {
  AnalysisOptions a;
  a.comm_patterns = patterns;
  a.kernel_wait_threshold_ns = static_cast<int64_t>(opt.kernel_wait_us * 1000.0);
  if (opt.window == "steps") a.window.kind = WindowRequest::Kind::kSteps;
  if (opt.window == "gpu") a.window.kind = WindowRequest::Kind::kGpu;
  if (opt.window == "cpu") a.window.kind = WindowRequest::Kind::kCpu;
  if (!opt.steps.empty()) {
    if (opt.window != "auto" && opt.window != "steps") {
      return InvalidArgument("--steps selects profiler steps: it cannot be combined with --window {}", opt.window);
    }
    RANKSCOPE_RETURN_IF_ERROR(ParseStepRange(opt.steps, &a.window));
  }
  return a;
}

// Reads and analyses every file; summaries[i] or errors[i] is set for each.
void AnalyzeFiles(const std::vector<std::string>& files, const AnalysisOptions& a, unsigned threads,
                  std::vector<std::optional<RankSummary>>* summaries, std::vector<Status>* errors) {
  ProgressLine progress("trace files", files.size(), isatty(STDERR_FILENO) != 0);
  ParallelFor(files.size(), threads, [&](size_t i) {
    const auto t0 = std::chrono::steady_clock::now();
    auto model = ReadTrace(files[i]);
    const int64_t ingest_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
    if (!model.ok()) {
      (*errors)[i] = model.status();
    } else if (auto summary = AnalyzeRank(*model, a); summary.ok()) {
      summary->ingest_ns = ingest_ns;
      (*summaries)[i] = std::move(summary).value();
    } else {
      (*errors)[i] = summary.status();
    }
    progress.ItemDone();  // the model is dropped here, before the next file is read
  });
}

std::string RenderTelemetrySection(const AnalysisReport& report) {
  std::string out = "\nNode telemetry  saved by the node daemons beside the traces, over each node's window W\n";
  for (const auto& node : report.telemetry) out += RenderNodeTelemetry(node);
  out += report.telemetry_findings.empty()
             ? "\n  no node was CPU-, memory- or GPU-bound during the window\n"
             : "\n" + RenderTelemetryFindings(report.telemetry_findings);
  return out;
}

bool UseColor(const std::string& mode) {
  if (mode == "always") return true;
  if (mode == "never") return false;
  return isatty(STDOUT_FILENO) != 0 && std::getenv("NO_COLOR") == nullptr;
}

int WriteJson(const AnalysisReport& report, const std::string& path) {
  if (path == "-") {
    WriteAnalysisReportJson(report, std::cout);
    return 0;
  }
  std::ofstream out(path, std::ios::binary);
  WriteAnalysisReportJson(report, out);
  out.close();
  if (!out) {
    fmt::print(stderr, "rankscope: error: cannot write {}\n", path);
    return 1;
  }
  return 0;
}

// Telemetry the node daemons saved beside the traces (telemetry.<host>.tsv, docs/telemetry.md),
// joined with the traces on absolute time: each node over the union of its ranks' windows W.
void AttachTelemetry(const std::vector<std::string>& inputs, AnalysisReport* report) {
  std::set<std::string> dirs;
  for (const std::string& input : inputs) {
    const std::filesystem::path p(input);
    dirs.insert(std::filesystem::is_directory(p) ? p.string() : p.parent_path().string());
  }
  std::vector<std::string> sidecars;
  for (const std::string& dir : dirs) {
    for (std::string& path : telemetry::FindSidecars(dir.empty() ? "." : dir)) sidecars.push_back(std::move(path));
  }
  if (sidecars.empty()) return;
  std::vector<analysis::RankWindow> windows;
  for (const RankSummary& r : report->ranks) {
    if (r.window_ns() > 0) windows.push_back({r.rank.rank, r.window_start_ns, r.window_end_ns});
  }
  report->has_telemetry = true;
  report->telemetry = analysis::JoinTelemetry(sidecars, windows, &report->warnings);
  report->telemetry_findings = analysis::FindTelemetryIssues(report->telemetry);
}

int RunAnalyze(const AnalyzeOptions& opt) {
  auto fail = [](const Status& s) {
    fmt::print(stderr, "rankscope: error: {}\n", s.message());
    return 1;
  };
  auto files = DiscoverTraceFiles(opt.inputs);
  if (!files.ok()) return fail(files.status());
  auto patterns = CommPatterns::Compile(opt.comm_patterns);
  if (!patterns.ok()) return fail(patterns.status());
  auto analysis = BuildAnalysisOptions(opt, &*patterns);
  if (!analysis.ok()) return fail(analysis.status());
  auto cluster_options = BuildClusterOptions(opt);
  if (!cluster_options.ok()) return fail(cluster_options.status());

  const size_t n = files->size();
  std::vector<std::optional<RankSummary>> summaries(n);
  std::vector<Status> errors(n);
  AnalyzeFiles(*files, *analysis, opt.threads, &summaries, &errors);

  AnalysisReport report;
  report.options = {opt.window, opt.steps, opt.comm_patterns, analysis->kernel_wait_threshold_ns, kFlagShare};
  std::vector<RankEvidence> evidence;
  for (size_t i = 0; i < n; ++i) {
    if (summaries[i]) {
      evidence.push_back({summaries[i]->path, summaries[i]->distributed_rank});
      report.ranks.push_back(std::move(*summaries[i]));
    } else if (errors[i].code() == StatusCode::kNotATrace) {  // e.g. a JSON config beside the traces
      report.warnings.push_back(errors[i].message() + "; skipped");
    } else {
      report.errors.push_back({(*files)[i], errors[i].message()});
    }
  }
  if (report.ranks.empty() && report.errors.empty()) {
    return fail(InvalidArgument("none of the {} file(s) is a trace", n));
  }
  auto ranks = ResolveRanks(evidence, &report.warnings);
  if (!ranks.ok()) return fail(ranks.status());
  for (size_t k = 0; k < report.ranks.size(); ++k) {
    report.ranks[k].rank = (*ranks)[k];
    report.ranks[k].rank_resolved = true;
  }
  std::sort(report.ranks.begin(), report.ranks.end(),
            [](const RankSummary& a, const RankSummary& b) { return a.rank.rank < b.rank.rank; });
  // Across every rank, before --rank narrows the per-rank report down to one.
  if (report.ranks.size() > 1) {
    auto cluster = DiagnoseCluster(report.ranks, *cluster_options);
    if (!cluster.ok()) return fail(cluster.status());
    report.cluster = std::move(cluster).value();
  }
  AttachTelemetry(opt.inputs, &report);
  if (opt.rank) {
    std::erase_if(report.ranks, [&](const RankSummary& r) { return r.rank.rank != *opt.rank; });
    if (report.ranks.empty()) return fail(InvalidArgument("--rank {}: no trace file is that rank", *opt.rank));
  }

  int rc = report.errors.empty() ? 0 : 1;
  if (!opt.json_path.empty()) rc |= WriteJson(report, opt.json_path);
  if (opt.json_path != "-") {
    TextOptions text{opt.top, UseColor(opt.color), kFlagShare};
    if (report.ranks.size() > 1) std::cout << RenderRankOverview(report.ranks, text);
    if (report.ranks.size() == 1) std::cout << RenderRankReport(report.ranks.front(), text);
    if (report.cluster && report.ranks.size() > 1) std::cout << RenderClusterReport(*report.cluster, text);
    if (report.has_telemetry) std::cout << RenderTelemetrySection(report);
  }
  for (const std::string& w : report.warnings) fmt::print(stderr, "rankscope: warning: {}\n", w);
  for (const FileError& e : report.errors) fmt::print(stderr, "rankscope: error: {}\n", e.message);
  return rc;
}

}  // namespace

void RegisterAnalyzeCommand(CLI::App& app, int* exit_code) {
  auto opt = std::make_shared<AnalyzeOptions>();
  CLI::App* cmd = app.add_subcommand("analyze", "Analyse each rank's trace (steps, GPU time, bottleneck functions, "
                                                "communication, idle time, launch delay, memory) and diagnose the job: "
                                                "slow ranks and nodes, abnormal functions, what fixing them is worth");
  cmd->add_option("paths", opt->inputs, "Trace files or directories of them (.json, .json.gz)")->required();
  cmd->add_option("--json", opt->json_path, "Also write the report as JSON to FILE ('-': stdout only)");
  cmd->add_option("--rank", opt->rank, "Report only this rank");
  cmd->add_option("--steps", opt->steps, "Window = profiler steps A..B (A:B, A:, :B or A)");
  cmd->add_option("--window", opt->window, "Window when --steps is not given: auto (steps, else GPU span, else CPU "
                                           "span), steps, gpu or cpu")
      ->check(CLI::IsMember({"auto", "steps", "gpu", "cpu"}));
  cmd->add_option("--top", opt->top, "Rows per table in the terminal report (default 10)")->check(CLI::Range(1, 100000));
  cmd->add_option("--comm-pattern", opt->comm_patterns,
                  "Regular expression: kernels whose name contains a match count as communication (repeatable)");
  cmd->add_option("--kernel-wait-us", opt->kernel_wait_us, "Idle gaps shorter than this are kernel wait (default 30)")
      ->check(CLI::Range(0.0, 1e9));
  cmd->add_option("--color", opt->color, "auto (on a terminal), always or never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  cmd->add_option("--hosts", opt->hosts_file,
                  "Rank -> host map, lines \"RANK HOST\" or \"FIRST-LAST HOST\" (default: the traces' host names)");
  cmd->add_option("--outlier-k", opt->outlier_k, "Abnormal = more than K x 1.4826 MAD above the median (default 3)")
      ->check(CLI::Range(0.0, 1000.0));
  cmd->add_option("--outlier-margin", opt->outlier_margin,
                  "... and more than this fraction of the median (default 0.10)")
      ->check(CLI::Range(0.0, 100.0));
  cmd->add_option("--min-cost-share", opt->min_cost_share,
                  "Report findings worth at least this fraction of the step time (default 0.02)")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--threads", opt->threads, "Files analysed in parallel (default: all cores)")->check(CLI::Range(1u, 1024u));
  cmd->callback([opt, exit_code] { *exit_code = RunAnalyze(*opt); });
}

}  // namespace rankscope::cli

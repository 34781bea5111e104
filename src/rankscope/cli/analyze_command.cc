// `rankscope analyze <files|dir> [--json FILE] [--rank R] [--steps A:B] [--top N]
//                    [--comm-pattern REGEX]... [--hosts FILE] [--outlier-k K] ...`: option parsing
// and rendering around the engine's AnalyzeJob (engine/analyze_job.h), which does the work.
#include <fmt/format.h>
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <utility>

#include "rankscope/cli/commands.h"
#include "rankscope/engine/analyze_job.h"
#include "rankscope/engine/mpi_job.h"
#include "rankscope/report/analysis_report.h"
#include "rankscope/report/analysis_report_text.h"
#include "rankscope/report/cluster_report_text.h"
#include "rankscope/report/findings_report_text.h"
#include "rankscope/report/job_html.h"
#include "rankscope/report/progress.h"
#include "rankscope/report/telemetry_report_text.h"

namespace rankscope::cli {
namespace {

struct AnalyzeCommandOptions {
  JobInputs inputs;
  AnalyzeOptions analysis;
  std::string json_path;
  std::string html_path;  // --html: the web UI's views in one file (docs/ui.md)
  std::optional<int64_t> rank;
  size_t top = 10;
  double kernel_wait_us = kDefaultKernelWaitThresholdNs / 1000.0;
  std::string color = "auto";
  bool mpi = false;
};

bool UseColor(const std::string& mode) {
  if (mode == "always") return true;
  if (mode == "never") return false;
  return isatty(STDOUT_FILENO) != 0 && std::getenv("NO_COLOR") == nullptr;
}

int WriteJson(const JobReport& report, const std::string& path) {
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

std::string RenderTelemetrySection(const JobReport& report) {
  std::string out = "\nNode telemetry  saved by the node daemons beside the traces, over each node's window W\n";
  for (const auto& node : report.telemetry) out += RenderNodeTelemetry(node);
  return out;
}

void RenderText(const JobReport& report, const TextOptions& text) {
  if (report.ranks.size() > 1) std::cout << RenderRankOverview(report.ranks, text);
  if (report.ranks.size() == 1) std::cout << RenderRankReport(report.ranks.front(), text);
  if (report.cluster && report.ranks.size() > 1) std::cout << RenderClusterReport(*report.cluster, report.findings, text);
  if (report.has_telemetry) std::cout << RenderTelemetrySection(report);
  if (!(report.cluster && report.ranks.size() > 1) && report.has_telemetry) {
    FindingsSectionContext context;
    context.none = "no node was CPU-, memory- or GPU-bound during the window";
    std::cout << RenderFindingsSection(report.findings, context, text);
  }
}

int Report(AnalyzeCommandOptions& opt, JobReport& report);

int RunAnalyze(AnalyzeCommandOptions opt) {
  opt.analysis.kernel_wait_threshold_ns = static_cast<int64_t>(opt.kernel_wait_us * 1000.0);
  TerminalProgress progress(isatty(STDERR_FILENO) != 0);
  if (opt.mpi) {  // every process maps its slice; process 0 reduces and reports (docs/scale.md)
    if (!MpiAvailable()) {
      fmt::print(stderr, "rankscope: error: --mpi: this rankscope was built without MPI (install libopenmpi-dev and rebuild)\n");
      return 1;
    }
    MpiSession mpi;
    auto job = AnalyzeJobMpi(mpi, opt.inputs, opt.analysis, &progress);
    if (!job.ok()) {  // every process finds a whole-job error alike: one says it
      if (mpi.rank() == 0) fmt::print(stderr, "rankscope: error: {}\n", job.status().message());
      return 1;
    }
    return *job ? Report(opt, **job) : 0;
  }
  auto job = AnalyzeJob(opt.inputs, opt.analysis, &progress);
  if (!job.ok()) {
    fmt::print(stderr, "rankscope: error: {}\n", job.status().message());
    return 1;
  }
  // The process ends after the report, and its memory goes back with it: freeing the report of
  // 10,000 ranks (millions of strings, one by one) took a tenth of the run (docs/scale.md), so
  // it is kept, reachable, to the end.
  static JobReport* kept = nullptr;
  delete std::exchange(kept, new JobReport(std::move(*job)));
  return Report(opt, *kept);
}

int Report(AnalyzeCommandOptions& opt, JobReport& report) {
  if (!opt.html_path.empty()) {  // before --rank narrows the ranks: the views show every rank
    if (Status s = WriteJobHtml(report, opt.html_path); !s.ok()) {
      fmt::print(stderr, "rankscope: error: {}\n", s.message());
      return 1;
    }
  }
  if (opt.rank) {  // the diagnosis covers every rank; --rank narrows the per-rank report to one
    std::erase_if(report.ranks, [&](const RankSummary& r) { return r.rank.rank != *opt.rank; });
    if (report.ranks.empty()) {
      fmt::print(stderr, "rankscope: error: --rank {}: no trace file is that rank\n", *opt.rank);
      return 1;
    }
  }
  int rc = report.errors.empty() ? 0 : 1;
  if (!opt.json_path.empty()) rc |= WriteJson(report, opt.json_path);
  if (opt.json_path != "-") RenderText(report, TextOptions{opt.top, UseColor(opt.color), opt.analysis.flag_share});
  for (const std::string& w : report.warnings) fmt::print(stderr, "rankscope: warning: {}\n", w);
  for (const FileError& e : report.errors) fmt::print(stderr, "rankscope: error: {}\n", e.message);
  return rc;
}

}  // namespace

void RegisterAnalyzeCommand(CLI::App& app, int* exit_code) {
  auto opt = std::make_shared<AnalyzeCommandOptions>();
  CLI::App* cmd = app.add_subcommand("analyze", "Analyse each rank's trace (steps, GPU time, bottleneck functions, "
                                                "communication, idle time, launch delay, memory) and diagnose the job: "
                                                "slow ranks and nodes, abnormal functions, what fixing them is worth");
  cmd->add_option("paths", opt->inputs.paths, "Trace files, rank summaries (.rsum, `rankscope summarize`) or "
                                             "directories of them (.json, .json.gz, .rsum)")->required();
  cmd->add_flag("!--no-summaries", opt->analysis.use_summaries,
                "Read every trace, even one with a current summary (<trace>.rsum) beside it");
  cmd->add_flag("--mpi", opt->mpi, "Run under mpirun: each process reads a slice of the files (balanced by size), "
                                  "process 0 gathers the summaries and writes the report");
  cmd->add_option("--json", opt->json_path, "Also write the report as JSON to FILE ('-': stdout only)");
  cmd->add_option("--html", opt->html_path, "Also write the web UI's views with the job's data as one self-contained "
                                           "HTML file (opens offline)");
  cmd->add_option("--rank", opt->rank, "Report only this rank");
  cmd->add_option("--steps", opt->analysis.steps, "Window = profiler steps A..B (A:B, A:, :B or A)");
  cmd->add_option("--window", opt->analysis.window, "Window when --steps is not given: auto (steps, else GPU span, else CPU "
                                           "span), steps, gpu or cpu")
      ->check(CLI::IsMember({"auto", "steps", "gpu", "cpu"}));
  cmd->add_option("--top", opt->top, "Rows per table in the terminal report (default 10)")->check(CLI::Range(1, 100000));
  cmd->add_option("--comm-pattern", opt->analysis.comm_patterns,
                  "Regular expression: kernels whose name contains a match count as communication (repeatable)");
  cmd->add_option("--kernel-wait-us", opt->kernel_wait_us, "Idle gaps shorter than this are kernel wait (default 30)")
      ->check(CLI::Range(0.0, 1e9));
  cmd->add_option("--color", opt->color, "auto (on a terminal), always or never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  cmd->add_option("--hosts", opt->inputs.hosts_file,
                  "Rank -> host map, lines \"RANK HOST\" or \"FIRST-LAST HOST\" (default: the traces' host names)");
  cmd->add_option("--layout", opt->inputs.layout,
                  "Parallel layout when the traces do not say it: dp=N,pp=N[,tp=N][,cp=N][,order=tp-cp-dp-pp] "
                  "(dimensions fastest-varying first)");
  cmd->add_option("--outlier-k", opt->analysis.outlier_k, "Abnormal = more than K x 1.4826 MAD above the median (default 3)")
      ->check(CLI::Range(0.0, 1000.0));
  cmd->add_option("--outlier-margin", opt->analysis.outlier_margin,
                  "... and more than this fraction of the median (default 0.10)")
      ->check(CLI::Range(0.0, 100.0));
  cmd->add_option("--min-cost-share", opt->analysis.min_cost_share,
                  "Report findings worth at least this fraction of the step time (default 0.02)")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--threads", opt->analysis.threads, "Files analysed in parallel (default: all cores)")->check(CLI::Range(1u, 1024u));
  cmd->callback([opt, exit_code] { *exit_code = RunAnalyze(*opt); });
}

}  // namespace rankscope::cli

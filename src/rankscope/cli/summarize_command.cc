// `rankscope summarize TRACES... [-o DIR]`: the map alone — each trace analysed to its rank
// summary, written as <trace>.rsum (docs/scale.md). `rankscope analyze` then reads the summary
// instead of the trace while it is current; summaries travel where traces are too big to.
#include <fmt/format.h>
#include <unistd.h>

#include "rankscope/cli/commands.h"
#include "rankscope/engine/summarize.h"
#include "rankscope/report/progress.h"

namespace rankscope::cli {
namespace {

struct SummarizeCommandOptions {
  std::vector<std::string> paths;
  std::string out_dir;
  AnalyzeOptions analysis;
  double kernel_wait_us = kDefaultKernelWaitThresholdNs / 1000.0;
  bool quiet = false;
};

int RunSummarize(SummarizeCommandOptions opt) {
  opt.analysis.kernel_wait_threshold_ns = static_cast<int64_t>(opt.kernel_wait_us * 1000.0);
  TerminalProgress progress(isatty(STDERR_FILENO) != 0);
  auto done = SummarizeTraces(opt.paths, opt.analysis, opt.out_dir, &progress);
  if (!done.ok()) {
    fmt::print(stderr, "rankscope: error: {}\n", done.status().message());
    return 1;
  }
  int rc = 0;
  for (const SummarizedFile& f : *done) {
    if (!f.status.ok()) {
      fmt::print(stderr, "rankscope: error: {}\n", f.status.message());
      rc = 1;
    } else if (!opt.quiet) {
      fmt::print("{}  {} bytes\n", f.summary_path, f.bytes);
    }
  }
  return rc;
}

}  // namespace

void RegisterSummarizeCommand(CLI::App& app, int* exit_code) {
  auto opt = std::make_shared<SummarizeCommandOptions>();
  CLI::App* cmd = app.add_subcommand("summarize", "Analyse each trace to its rank summary and write it as "
                                                  "<trace>.rsum, which `rankscope analyze` reads instead of the trace");
  cmd->add_option("paths", opt->paths, "Trace files or directories of them (.json, .json.gz)")->required();
  cmd->add_option("-o,--output-dir", opt->out_dir, "Write the summaries into DIR (default: beside each trace)");
  cmd->add_option("--steps", opt->analysis.steps, "Window = profiler steps A..B (A:B, A:, :B or A)");
  cmd->add_option("--window", opt->analysis.window, "auto, steps, gpu or cpu (as for analyze)")
      ->check(CLI::IsMember({"auto", "steps", "gpu", "cpu"}));
  cmd->add_option("--comm-pattern", opt->analysis.comm_patterns,
                  "Regular expression: kernels whose name contains a match count as communication (repeatable)");
  cmd->add_option("--kernel-wait-us", opt->kernel_wait_us, "Idle gaps shorter than this are kernel wait (default 30)")
      ->check(CLI::Range(0.0, 1e9));
  cmd->add_option("--threads", opt->analysis.threads, "Files analysed in parallel (default: all cores)")
      ->check(CLI::Range(1u, 1024u));
  cmd->add_flag("-q,--quiet", opt->quiet, "Print nothing but errors");
  cmd->callback([opt, exit_code] { *exit_code = RunSummarize(*opt); });
}

}  // namespace rankscope::cli

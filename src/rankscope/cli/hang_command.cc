// `rankscope hang <snapshot dir or files>...`: who is stuck, where, and why — from every rank's
// stacks and Flight Recorder dump (docs/hang.md).
#include "rankscope/cli/hang_command.h"

#include <unistd.h>

#include <fstream>
#include <iostream>

#include "rankscope/cli/commands.h"
#include "rankscope/report/hang_report.h"

namespace rankscope::cli {

int RunHangAnalysis(const HangCommandOptions& opt) {
  auto analysis = hang::AnalyzeHang(opt.paths, opt.analysis);
  if (!analysis.ok()) {
    fmt::print(stderr, "rankscope hang: {}\n", analysis.status().message());
    return 2;
  }
  if (opt.json_path.empty()) {
    std::cout << HangReportText(*analysis, opt.color);
    return 0;
  }
  const std::string text = HangReportJson(*analysis).dump(2) + "\n";
  if (opt.json_path == "-") {
    std::cout << text;
    return 0;
  }
  std::ofstream out(opt.json_path);
  out << text;
  if (!out) {
    fmt::print(stderr, "rankscope hang: cannot write {}\n", opt.json_path);
    return 2;
  }
  std::cout << HangReportText(*analysis, opt.color);
  return 0;
}

void RegisterHangCommand(CLI::App& app, int* exit_code) {
  auto opt = std::make_shared<HangCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "hang", "Who is stuck, where and why: a snapshot's stacks and Flight Recorder dumps of every rank");
  cmd->add_option("paths", opt->paths, "Snapshot directories (rank<R>.stacks.txt, rank<R>.flightrecorder, "
                                       "nccl_trace_rank_<R>) or such files")->required();
  cmd->add_option("--json", opt->json_path, "Write the report as JSON to FILE ('-': stdout instead of the text)");
  cmd->add_option("--job", opt->analysis.job, "Only this job's files (when a directory holds several)");
  cmd->add_option("--stalled-after-s", opt->analysis.stalled_after_s,
                  "A rank or collective that has not moved for this long counts as stalled")->capture_default_str();
  cmd->callback([opt, exit_code] {
    opt->color = ::isatty(STDOUT_FILENO) && opt->json_path != "-";
    *exit_code = RunHangAnalysis(*opt);
  });
}

}  // namespace rankscope::cli

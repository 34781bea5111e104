// `rankscope hang <snapshot dir or files>...`: who is stuck, where, and why — from every rank's
// stacks and Flight Recorder dump (docs/hang.md).
#include "rankscope/cli/hang_command.h"

#include <unistd.h>

#include <fstream>
#include <iostream>

#include "rankscope/base/json_text.h"
#include "rankscope/cli/commands.h"
#include "rankscope/cli/snapshot_download.h"
#include "rankscope/report/hang_report.h"

namespace rankscope::cli {

namespace {

// --host/--hostfile: the snapshot's files from every daemon into one directory, then analysed
// with whatever paths were given too. Returns the exit status on failure, 0 when gathered.
int Gather(HangCommandOptions* opt) {
  auto client = DaemonClient::FromOptions(opt->hosts);
  if (!client.ok()) {
    fmt::print(stderr, "rankscope hang: {}\n", client.status().message());
    return 2;
  }
  std::string id = opt->id;
  if (id.empty()) {
    auto newest = NewestHangSnapshot(*client, opt->analysis.job);
    if (!newest.ok()) {
      fmt::print(stderr, "rankscope hang: {}\n", newest.status().message());
      return 2;
    }
    id = *newest;
  }
  const std::string dest = opt->out.empty() ? id : opt->out;
  auto got = DownloadSnapshot(*client, id, dest);
  if (!got.ok()) {
    fmt::print(stderr, "rankscope hang: {}\n", got.status().message());
    return 2;
  }
  // On stderr: stdout may be the JSON report.
  fmt::print(stderr, "snapshot {} gathered into {}: {} files\n", id, got->dir, got->files);
  for (const std::string& line : got->lines) fmt::print(stderr, "  {}\n", line);
  opt->paths.push_back(got->dir);
  return 0;
}

}  // namespace

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
  const std::string text = DumpJson(HangReportJson(*analysis));
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
                                       "nccl_trace_rank_<R>, pickled or JSON) or such files");
  opt->hosts.AddTo(cmd);
  cmd->add_option("--id", opt->id, "With --host/--hostfile: the snapshot to gather (default: the newest hang the "
                                   "daemons detected)");
  cmd->add_option("--out", opt->out, "With --host/--hostfile: where the gathered files go (default: ./<id>)");
  cmd->add_option("--json", opt->json_path, "Write the report as JSON to FILE ('-': stdout instead of the text)");
  cmd->add_option("--job", opt->analysis.job, "Only this job's files (when a directory holds several)");
  cmd->add_option("--stalled-after-s", opt->analysis.stalled_after_s,
                  "A rank or collective that has not moved for this long counts as stalled")->capture_default_str();
  cmd->callback([opt, exit_code] {
    opt->color = ::isatty(STDOUT_FILENO) && opt->json_path != "-";
    if (!opt->hosts.hosts.empty() || !opt->hosts.hostfile.empty()) {
      if (int rc = Gather(opt.get()); rc != 0) {
        *exit_code = rc;
        return;
      }
    } else if (opt->paths.empty()) {
      fmt::print(stderr, "rankscope hang: give snapshot directories or files, or daemons to gather from (--host, "
                         "--hostfile)\n");
      *exit_code = 2;
      return;
    }
    *exit_code = RunHangAnalysis(*opt);
  });
}

}  // namespace rankscope::cli

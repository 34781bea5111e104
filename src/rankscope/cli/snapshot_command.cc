// `rankscope snapshot`: every thread's Python stack of every rank, one file per rank
// (rank<R>.stacks.txt, format in docs/capture.md) — for a job that hangs.
#include <unistd.h>

#include <algorithm>
#include <iostream>

#include "rankscope/cli/capture_report.h"
#include "rankscope/cli/hang_command.h"
#include "rankscope/cli/snapshot_download.h"
#include "rankscope/cli/commands.h"
#include "rankscope/daemon/capture_spec.h"

namespace rankscope::cli {
namespace {

struct SnapshotOptions {
  HostOptions hosts;
  std::string job;
  std::vector<int32_t> ranks;
  bool no_wait = false, json = false, analyze = false;
  int timeout_s = 20;
  std::string id;
};

int RunSnapshot(const SnapshotOptions& opt) {
  auto client = DaemonClient::FromOptions(opt.hosts);
  if (!client.ok()) {
    fmt::print(stderr, "rankscope snapshot: {}\n", client.status().message());
    return 2;
  }
  daemon::SnapshotSpec spec;
  spec.snapshot_id = opt.id.empty() ? "snapshot-" + daemon::NewCaptureId() : opt.id;
  spec.selection.job = opt.job;
  spec.selection.ranks = opt.ranks;
  spec.timeout_s = opt.timeout_s;
  auto started = client->Call("/v1/snapshot", daemon::ToJson(spec));
  CaptureOutcome outcome = opt.no_wait ? Summarize(std::move(started))
                                       : WaitForCapture(*client, spec.snapshot_id, std::move(started), opt.timeout_s + 5);
  if (opt.json) {
    std::cout << CaptureOutcomeToJson(outcome).dump(2) << "\n";
  } else {
    PrintCaptureReport(outcome, "snapshot", !opt.no_wait);
  }
  if (outcome.expected == 0) return 1;
  int rc = opt.no_wait || outcome.produced == outcome.expected ? 0 : 1;
  if (opt.analyze && !outcome.dirs.empty()) {
    // All hosts' directories together: a hang is matched across every rank of the job. Those
    // not on this machine are fetched from their daemons into ./<id>.
    HangCommandOptions h;
    std::vector<size_t> remote;
    for (size_t i = 0; i < outcome.hosts.size(); ++i) {
      const HostReply& r = outcome.hosts[i];
      if (!r.status.ok() || !r.body.is_object() || !r.body.contains("dir") || !r.body["dir"].is_string()) continue;
      const std::string dir = r.body["dir"].get<std::string>();
      if (std::find(outcome.dirs.begin(), outcome.dirs.end(), dir) == outcome.dirs.end()) continue;
      if (::access(dir.c_str(), R_OK) == 0) {
        if (std::find(h.paths.begin(), h.paths.end(), dir) == h.paths.end()) h.paths.push_back(dir);
      } else {
        remote.push_back(i);
      }
    }
    if (!remote.empty()) {
      auto got = DownloadSnapshot(*client, spec.snapshot_id, spec.snapshot_id, remote);
      if (got.ok()) {
        fmt::print(stderr, "rankscope: the parts of {} host{} gathered into {}\n", remote.size(),
                   remote.size() == 1 ? "" : "s", got->dir);
        h.paths.push_back(got->dir);
      } else {
        fmt::print(stderr, "rankscope: {}\n", got.status().message());
      }
    }
    if (!h.paths.empty()) {
      if (!opt.json) fmt::print("\n$ rankscope hang {}\n", fmt::join(h.paths, " "));
      h.color = !opt.json && ::isatty(STDOUT_FILENO);
      rc |= RunHangAnalysis(h);
    }
  }
  return rc;
}

}  // namespace

void RegisterSnapshotCommand(CLI::App& app, int* exit_code) {
  auto opt = std::make_shared<SnapshotOptions>();
  CLI::App* cmd = app.add_subcommand("snapshot", "Dump every thread's Python stack of every rank (a hung job)");
  opt->hosts.AddTo(cmd);
  cmd->add_option("--job", opt->job, "Only this job");
  cmd->add_option("--ranks", opt->ranks, "Only these ranks")->delimiter(',');
  cmd->add_flag("--no-wait", opt->no_wait, "Return once the request is out");
  cmd->add_option("--timeout-s", opt->timeout_s, "Give up on a process after this long")->capture_default_str();
  cmd->add_option("--id", opt->id, "Snapshot id (default: snapshot-<UTC time>-<random>)");
  cmd->add_flag("--json", opt->json, "Print JSON");
  cmd->add_flag("--analyze", opt->analyze, "Then analyse the snapshot: who is stuck, where and why (rankscope hang)");
  cmd->callback([opt, exit_code] { *exit_code = RunSnapshot(*opt); });
}

}  // namespace rankscope::cli

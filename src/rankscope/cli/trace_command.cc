// `rankscope trace`: record a few steps of a live job on every rank, through the node daemons.
//
// Alignment: with --steps, the processes of every host are listed first and one absolute start
// step is chosen for all collectors (the furthest rank's step, extrapolated from its last
// heartbeat, plus a margin; rounded up to --roundup); Kineto clients, which report no step,
// start at the next multiple of --roundup. With --duration-ms, all start at one wall-clock time.
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <iostream>

#include "rankscope/cli/capture_report.h"
#include "rankscope/cli/commands.h"
#include "rankscope/cli/summary_download.h"
#include "rankscope/daemon/capture_spec.h"
#include "rankscope/daemon/step_alignment.h"

namespace rankscope::cli {
namespace {

struct TraceOptions {
  HostOptions hosts;
  std::string job;
  std::vector<int32_t> ranks;
  int32_t steps = 0;
  int64_t duration_ms = 0;
  int32_t roundup = 0;
  bool with_stack = false, record_shapes = false, profile_memory = false;
  bool wait = false, analyze = false, json = false, baseline = false;
  bool gather_summaries = false;  // --gather-summaries
  int timeout_s = 300;
  std::string trace_id;
};

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

struct Plan {
  int64_t start_step = -1;      // for collectors (steps mode)
  int64_t start_unix_ms = 0;    // duration mode
};

// One start for every rank on every host (see the comment at the top).
Plan PlanStart(const TraceOptions& opt, const std::vector<HostReply>& processes) {
  Plan plan;
  int64_t furthest = -1;
  bool any_kineto_only = false;
  for (const auto& r : processes) {
    if (!r.status.ok()) continue;
    for (const auto& p : r.body["processes"]) {
      if (!opt.job.empty() && p.value("job", "") != opt.job) continue;
      if (!p.contains("step")) {
        any_kineto_only = true;
        continue;
      }
      const int64_t step = p.value("step", int64_t{0});
      const double step_ms = p.value("step_ms", 0.0);
      const double age_ms = p.value("last_seen_ms_ago", 0.0);
      const int64_t est = step + (step_ms > 0 ? static_cast<int64_t>(std::ceil(age_ms / step_ms)) : 0);
      furthest = std::max(furthest, est);
    }
  }
  if (opt.steps > 0 && furthest >= 0) {
    // The margin also covers the round trip of the fan-out (a few ms to a few hundred).
    plan.start_step = daemon::RoundUp(furthest + 3, opt.roundup);
  }
  if (opt.duration_ms > 0) {
    // Kineto clients take their configuration at their next poll (every ~5 s).
    plan.start_unix_ms = NowMs() + (any_kineto_only ? 6000 : 1000);
  }
  return plan;
}

int AnalyzeDir(const std::string& dir) {
  fmt::print("\n$ rankscope analyze {}\n", dir);
  std::fflush(stdout);
  pid_t pid = ::fork();
  if (pid == 0) {
    execl("/proc/self/exe", "rankscope", "analyze", dir.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

// The capture's rank summaries, made by each node's daemon after the capture, gathered over
// HTTP into one local directory and analysed there: only summaries travel (docs/scale.md).
int AnalyzeGatheredSummaries(const DaemonClient& client, const std::string& id) {
  char dir_template[] = "/tmp/rankscope-summaries-XXXXXX";
  if (!::mkdtemp(dir_template)) {
    fmt::print(stderr, "rankscope: cannot create a directory for the summaries: {}\n", std::strerror(errno));
    return 1;
  }
  auto got = DownloadSummaries(client, id, dir_template);
  if (!got.ok()) {
    fmt::print(stderr, "rankscope: {}\n", got.status().message());
    return 1;
  }
  fmt::print("\nsummaries of capture {} gathered over HTTP into {}:\n", id, got->dir);
  for (const std::string& line : got->lines) fmt::print("  {}\n", line);
  return AnalyzeDir(got->dir);
}

int RunAnalyze(const DaemonClient& client, const std::string& id, const std::vector<std::string>& dirs,
               bool gather_summaries) {
  // `rankscope analyze` is another subcommand of this same binary; run it as a child process so
  // that capture does not depend on its code. Directories on this machine are analysed in place
  // (a current summary beside a trace stands for it); the others from their summaries.
  int rc = 0;
  bool remote = gather_summaries;
  for (const auto& dir : dirs) {
    if (gather_summaries || ::access(dir.c_str(), R_OK) != 0) {
      remote = true;
      continue;
    }
    rc |= AnalyzeDir(dir);
  }
  if (remote) rc |= AnalyzeGatheredSummaries(client, id);
  return rc;
}

int RunTrace(TraceOptions opt) {
  if ((opt.steps > 0) == (opt.duration_ms > 0)) {
    fmt::print(stderr, "rankscope trace: give --steps N or --duration-ms D\n");
    return 2;
  }
  auto client = DaemonClient::FromOptions(opt.hosts);
  if (!client.ok()) {
    fmt::print(stderr, "rankscope trace: {}\n", client.status().message());
    return 2;
  }
  if (opt.analyze || opt.baseline) opt.wait = true;
  const std::string id = opt.trace_id.empty() ? daemon::NewCaptureId() : opt.trace_id;
  const Plan plan = PlanStart(opt, client->Call("/v1/processes"));

  daemon::TraceSpec spec;
  spec.trace_id = id;
  spec.selection.job = opt.job;
  spec.selection.ranks = opt.ranks;
  spec.steps = opt.steps;
  spec.duration_ms = opt.duration_ms;
  spec.start_step = plan.start_step;
  spec.roundup = opt.roundup;
  spec.start_unix_ms = plan.start_unix_ms;
  spec.with_stack = opt.with_stack;
  spec.record_shapes = opt.record_shapes;
  spec.profile_memory = opt.profile_memory;
  spec.timeout_s = opt.timeout_s;
  spec.baseline = opt.baseline;
  auto started = client->Call("/v1/trace", daemon::ToJson(spec));

  CaptureOutcome outcome = opt.wait ? WaitForCapture(*client, id, std::move(started), opt.timeout_s + 5)
                                    : Summarize(std::move(started));
  if (opt.json) {
    std::cout << CaptureOutcomeToJson(outcome).dump(2) << "\n";
  } else {
    if (plan.start_step >= 0) fmt::print("aligned start: step {} on every rank with a collector\n", plan.start_step);
    PrintCaptureReport(outcome, "trace", opt.wait);
  }
  if (outcome.expected == 0) return 1;
  if (!opt.wait) return 0;
  int rc = outcome.produced == outcome.expected ? 0 : 1;
  if (opt.baseline && !opt.json) {
    fmt::print("{}\n", rc == 0 ? "kept as the job's baseline by each daemon (rankscope compare --baseline JOB NEW)"
                               : "not kept as the job's baseline: not every rank's trace is there");
  }
  if (opt.analyze && outcome.produced > 0) rc |= RunAnalyze(*client, id, outcome.dirs, opt.gather_summaries);
  return rc;
}

}  // namespace

void RegisterTraceCommand(CLI::App& app, int* exit_code) {
  auto opt = std::make_shared<TraceOptions>();
  CLI::App* cmd = app.add_subcommand("trace", "Record steps of a live job on every rank, through the node daemons");
  opt->hosts.AddTo(cmd);
  cmd->add_option("--job", opt->job, "Only this job (see `rankscope ps`)");
  cmd->add_option("--ranks", opt->ranks, "Only these ranks")->delimiter(',');
  auto* steps = cmd->add_option("--steps", opt->steps, "Record this many steps")->check(CLI::Range(1, 1000));
  auto* dur = cmd->add_option("--duration-ms", opt->duration_ms, "Record this long instead")->check(CLI::Range(1, 600000));
  steps->excludes(dur);
  cmd->add_option("--roundup", opt->roundup, "Start at a multiple of this step (Kineto clients: default 20)");
  cmd->add_flag("--with-stack", opt->with_stack, "Record Python call stacks (off by default: PyTorch's profiler has crashed ranks at its start with it; docs/capture.md)");
  cmd->add_flag("--record-shapes", opt->record_shapes, "Record operator input shapes");
  cmd->add_flag("--profile-memory", opt->profile_memory, "Record memory allocations");
  cmd->add_flag("--wait", opt->wait, "Wait until every file exists (or why not is known)");
  cmd->add_flag("--analyze", opt->analyze, "Then run `rankscope analyze` on the traces (implies --wait); capture "
                                          "directories on other machines are analysed from the rank summaries their "
                                          "daemons made, gathered over HTTP");
  cmd->add_flag("--gather-summaries", opt->gather_summaries, "With --analyze: gather the rank summaries over HTTP even "
                                                             "when the capture directories are on this machine");
  cmd->add_flag("--baseline", opt->baseline,
                "Keep the capture as the job's healthy baseline once every trace is there (implies --wait; "
                "docs/compare.md)");
  cmd->add_option("--timeout-s", opt->timeout_s, "Give up on a process after this long")->capture_default_str();
  cmd->add_option("--id", opt->trace_id, "Trace id (default: UTC time + random suffix)");
  cmd->add_flag("--json", opt->json, "Print JSON");
  cmd->callback([opt, exit_code] { *exit_code = RunTrace(*opt); });
}

}  // namespace rankscope::cli

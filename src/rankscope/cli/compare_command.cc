// `rankscope compare BASE NEW [--json FILE] [--xlsx FILE] [--csv DIR] [--html FILE] [--steps A:B] [--rank R]
//                   [--top N] [--use-input-shapes] [--op-map OLD=NEW]... [--max-kernels N]`:
// what changed between two runs and what it costs (docs/compare.md).
//
// BASE and NEW are trace files, directories of ranks or capture directories. Both runs' files
// are read in parallel, each reduced to a compare summary and dropped; the ranks are paired and
// compared; the terminal report leads with the step-time delta and the differences that add up
// to it.
#include <fmt/format.h>
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "rankscope/cli/commands.h"
#include "rankscope/cli/daemon_client.h"
#include "rankscope/compare/baseline_file.h"
#include "rankscope/compare/job_compare.h"
#include "rankscope/report/compare_report_files.h"
#include "rankscope/report/compare_report_json.h"
#include "rankscope/report/compare_report_text.h"
#include "rankscope/report/compare_view_json.h"
#include "rankscope/report/progress.h"
#include "rankscope/report/text_format.h"

namespace rankscope::cli {
namespace {

struct CompareFlags {
  std::vector<std::string> paths;
  std::string json_path, xlsx_path, csv_dir, html_path;
  std::string steps;
  std::optional<int64_t> rank;
  size_t top = 10;
  bool use_input_shapes = false;
  std::vector<std::string> op_map;
  std::optional<int64_t> max_kernels;
  bool keep_outlier_steps = false;
  std::vector<std::string> comm_patterns;
  unsigned threads = 0;
  std::string color = "auto";
  std::string baseline;  // --baseline JOB
  std::string out_dir;   // where the daemon keeps jobs (else asked from the local daemon)
};

bool UseColor(const std::string& mode) {
  if (mode == "always") return true;
  if (mode == "never") return false;
  return isatty(STDOUT_FILENO) != 0 && std::getenv("NO_COLOR") == nullptr;
}

int Fail(const Status& s) {
  fmt::print(stderr, "rankscope: error: {}\n", s.message());
  return 1;
}

// Writes to `path` ("-": stdout); 1 with a message when the file cannot be written.
template <typename Write>
int WriteOutput(const std::string& path, Write write) {
  if (path == "-") {
    write(std::cout);
    return 0;
  }
  std::ofstream out(path, std::ios::binary);
  write(out);
  out.close();
  if (!out) {
    fmt::print(stderr, "rankscope: error: cannot write {}\n", path);
    return 1;
  }
  return 0;
}

// The local daemon's output directory, or "" when none answers.
std::string LocalDaemonOutDir() {
  HostOptions hosts;
  hosts.hosts = {"127.0.0.1"};
  hosts.timeout_s = 2;
  auto client = DaemonClient::FromOptions(hosts);
  if (!client.ok()) return "";
  const std::vector<HostReply> replies = client->Call("/v1/status");
  if (replies.empty() || !replies.front().status.ok()) return "";
  return replies.front().body.value("out_dir", "");
}


// The rank pairs' own warnings (too few steps, slow steps left out, derived steps, ...), once per
// message with the ranks that have it; the JSON has them all.
void PrintRankWarnings(const compare::JobComparison& job) {
  std::map<std::string, std::vector<int64_t>> ranks_of;
  std::vector<std::string> order;
  for (const compare::RankComparison& r : job.ranks) {
    for (const std::string& w : r.warnings) {
      auto [it, inserted] = ranks_of.try_emplace(w);
      if (inserted) order.push_back(w);
      it->second.push_back(r.new_rank);
    }
  }
  constexpr size_t kMaxShown = 20;
  for (size_t k = 0; k < order.size() && k < kMaxShown; ++k) {
    const std::vector<int64_t>& ranks = ranks_of[order[k]];
    fmt::print(stderr, "rankscope: warning: rank {}{}: {}\n", ranks.front(),
               ranks.size() > 1 ? fmt::format(" (and {} more)", ranks.size() - 1) : "", order[k]);
  }
  if (order.size() > kMaxShown) {
    fmt::print(stderr, "rankscope: warning: {} more warning(s) of the rank pairs in the JSON report\n",
               order.size() - kMaxShown);
  }
}
int RunCompare(const CompareFlags& f) {
  std::vector<std::string> base, neu;
  std::string baseline_note;
  if (!f.baseline.empty()) {
    if (f.paths.size() != 1) {
      return Fail(InvalidArgument("with --baseline JOB, give only NEW: rankscope compare --baseline JOB NEW"));
    }
    auto found = compare::FindBaseline(f.baseline, f.out_dir.empty() ? LocalDaemonOutDir() : f.out_dir);
    if (!found.ok()) return Fail(found.status());
    base = {found->capture_dir};
    neu = {f.paths[0]};
    baseline_note = fmt::format("BASE is the baseline of job {}: capture {} ({}{})", found->job, found->capture,
                                found->reason.empty() ? "kept" : found->reason,
                                found->kept_unix_ms > 0 ? ", " + FormatUtcTime(found->kept_unix_ms * 1'000'000) : "");
  } else if (f.paths.size() != 2) {
    return Fail(InvalidArgument("compare needs two runs: rankscope compare BASE NEW (trace files, directories of ranks "
                                "or capture directories), or rankscope compare --baseline JOB NEW"));
  } else {
    base = {f.paths[0]};
    neu = {f.paths[1]};
  }
  compare::CompareOptions opt;
  opt.steps = f.steps;
  opt.comm_patterns = f.comm_patterns;
  opt.rank = f.rank;
  opt.use_input_shapes = f.use_input_shapes;
  opt.op_map = f.op_map;
  opt.max_kernels = f.max_kernels;
  opt.keep_outlier_steps = f.keep_outlier_steps;
  opt.threads = f.threads;
  ProgressLine progress("trace files", compare::CountTraceFiles(base) + compare::CountTraceFiles(neu),
                        isatty(STDERR_FILENO) != 0);
  opt.file_done = [&progress] { progress.ItemDone(); };
  auto job = compare::CompareJobs(base, neu, opt);
  if (!job.ok()) return Fail(job.status());
  job->baseline_note = baseline_note;
  int rc = 0;
  if (!f.json_path.empty()) rc |= WriteOutput(f.json_path, [&](std::ostream& out) { WriteCompareJson(*job, out); });
  if (!f.xlsx_path.empty()) {
    if (Status s = WriteCompareXlsx(*job, f.xlsx_path); !s.ok()) rc |= Fail(s);
  }
  if (!f.csv_dir.empty()) {
    if (Status s = WriteCompareCsv(*job, f.csv_dir); !s.ok()) rc |= Fail(s);
  }
  if (!f.html_path.empty()) {  // the web UI's Compare view, drawn from the same JSON
    if (Status s = WriteCompareHtml(CompareToJson(*job), f.html_path); !s.ok()) rc |= Fail(s);
  }
  if (f.json_path != "-") std::cout << RenderCompareReport(*job, {f.top, UseColor(f.color)});
  for (const std::string& w : job->warnings) fmt::print(stderr, "rankscope: warning: {}\n", w);
  PrintRankWarnings(*job);
  return rc;
}

}  // namespace

void RegisterCompareCommand(CLI::App& app, int* exit_code) {
  auto f = std::make_shared<CompareFlags>();
  CLI::App* cmd = app.add_subcommand(
      "compare", "What changed between two runs (BASE and NEW: trace files, directories of ranks or capture "
                 "directories) and what it costs: the step-time delta split into ranked differences that add up to it");
  cmd->add_option("runs", f->paths, "BASE NEW (NEW alone with --baseline)")->required()->expected(1, 2);
  cmd->add_option("--baseline", f->baseline,
                  "JOB: compare NEW with the job's baseline capture (a job name, or its directory <out>/<job>)");
  cmd->add_option("--out-dir", f->out_dir, "Where the daemon keeps jobs (default: ask the local rankscoped)");
  cmd->add_option("--json", f->json_path, "Also write the comparison as JSON (schema rankscope.compare/1) to FILE ('-': stdout only)");
  cmd->add_option("--xlsx", f->xlsx_path, "Also write an Excel workbook (one sheet per comparison) to FILE");
  cmd->add_option("--csv", f->csv_dir, "Also write one CSV file per table into DIR");
  cmd->add_option("--html", f->html_path,
                  "Also write the web UI's Compare view with this comparison as one self-contained HTML file");
  cmd->add_option("--steps", f->steps,
                  "Compare the A-th to B-th profiled step of each run (0 = its first; A:B, A:, :B or A): two runs "
                  "rarely share step numbers");
  cmd->add_option("--rank", f->rank, "Compare only this rank (full tables for it)");
  cmd->add_option("--top", f->top, "Rows per table in the terminal report (default 10)")->check(CLI::Range(1, 100000));
  cmd->add_flag("--use-input-shapes", f->use_input_shapes,
                "Align operators on name and input shapes/types (record_shapes=True), not on name only");
  cmd->add_option("--op-map", f->op_map, "OLD=NEW: BASE's operator OLD is NEW's operator NEW (repeatable)");
  cmd->add_option("--max-kernels", f->max_kernels,
                  "Operator table: show the children of operators that launch more than N GPU kernels per step")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40));
  cmd->add_flag("--keep-outlier-steps", f->keep_outlier_steps,
                "Keep steps that are slow outliers (by default a one-time stall is left out)");
  cmd->add_option("--comm-pattern", f->comm_patterns,
                  "Regular expression: kernels whose name contains a match count as communication (repeatable)");
  cmd->add_option("--threads", f->threads, "Files read in parallel (default: all cores)")->check(CLI::Range(1u, 1024u));
  cmd->add_option("--color", f->color, "auto (on a terminal), always or never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  cmd->callback([f, exit_code] { *exit_code = RunCompare(*f); });
}

}  // namespace rankscope::cli

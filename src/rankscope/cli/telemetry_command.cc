// `rankscope telemetry <capture-dir> [--json]`: the node telemetry of a capture's traced window,
// per node and per rank, and the findings it supports. The window is each rank's analysis window
// W, from the same AnalyzeJob as `rankscope analyze` (engine/analyze_job.h), so the two commands
// always join a sidecar against the same window; --start-ns/--end-ns give one explicitly instead.
#include <algorithm>
#include <climits>
#include <iostream>

#include "rankscope/analysis/telemetry_join.h"
#include "rankscope/cli/commands.h"
#include "rankscope/engine/analyze_job.h"
#include "rankscope/findings/finding_kind.h"
#include "rankscope/report/finding_json.h"
#include "rankscope/report/findings_report_text.h"
#include "rankscope/report/telemetry_report_text.h"
#include "rankscope/telemetry/sidecar.h"

namespace rankscope::cli {
namespace {

struct TelemetryOptions {
  std::string dir;
  bool json = false;
  int64_t start_ns = 0, end_ns = 0;  // an explicit window instead of the traces'
};

struct TelemetryView {
  std::vector<analysis::NodeWindowTelemetry> nodes;
  std::vector<Finding> findings;
  std::vector<const RankSummary*> ranks;  // whose windows were used (empty for an explicit window)
  std::vector<std::string> warnings;
  JobReport job;  // owns the ranks
};

// The telemetry over the traces' windows, as `rankscope analyze` joins it.
Status ViewOverTraces(const std::string& dir, TelemetryView* v) {
  AnalyzeOptions options;
  RANKSCOPE_ASSIGN_OR_RETURN(v->job, AnalyzeJob(JobInputs{{dir}, "", ""}, options));
  v->nodes = v->job.telemetry;
  for (const Finding& f : v->job.findings) {
    if (KindInfo(f.kind).source == "telemetry") v->findings.push_back(f);
  }
  for (const RankSummary& r : v->job.ranks) {
    if (r.window_ns() > 0) v->ranks.push_back(&r);
  }
  v->warnings = v->job.warnings;
  for (const FileError& e : v->job.errors) v->warnings.push_back(e.message);
  return OkStatus();
}

// `windows` empty: each sidecar over the capture's span it records.
void ViewOverWindows(const std::vector<std::string>& sidecars, const std::vector<analysis::RankWindow>& windows,
                     TelemetryView* v) {
  v->nodes = analysis::JoinTelemetry(sidecars, windows, &v->warnings);
  v->findings = analysis::FindTelemetryIssues(v->nodes);
}

void PrintJson(const TelemetryOptions& opt, const TelemetryView& v) {
  nlohmann::json j = {{"dir", opt.dir}, {"nodes", nlohmann::json::array()}, {"findings", FindingsToJson(v.findings)},
                      {"ranks", nlohmann::json::array()}, {"warnings", v.warnings}};
  for (const auto& n : v.nodes) j["nodes"].push_back(analysis::ToJson(n));
  for (const RankSummary* r : v.ranks) {
    j["ranks"].push_back({{"rank", r->rank.rank}, {"start_unix_ns", r->window_start_ns},
                          {"end_unix_ns", r->window_end_ns}, {"window", WindowModeName(r->window_mode)}});
  }
  std::cout << j.dump(2) << "\n";
}

void PrintText(const TelemetryOptions& opt, const TelemetryView& v) {
  fmt::print("telemetry of {}\n", opt.dir);
  if (!v.ranks.empty()) {
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (const RankSummary* r : v.ranks) {
      lo = std::min(lo, r->window_start_ns);
      hi = std::max(hi, r->window_end_ns);
    }
    fmt::print("window: {:.3f} s of {} ({} traces)\n", double(hi - lo) / 1e9, WindowModeName(v.ranks.front()->window_mode),
               v.ranks.size());
  }
  for (const auto& n : v.nodes) std::cout << RenderNodeTelemetry(n);
  FindingsSectionContext context;
  context.none = "none: no node was CPU-, memory- or GPU-bound in the window";
  std::cout << RenderFindingsSection(v.findings, context, TextOptions{});
  for (const auto& w : v.warnings) fmt::print("warning: {}\n", w);
}

int RunTelemetry(const TelemetryOptions& opt) {
  const auto sidecars = telemetry::FindSidecars(opt.dir);
  if (sidecars.empty()) {
    fmt::print(stderr, "rankscope telemetry: no telemetry.<host>.tsv in {} (the daemon saves it when a capture "
                       "finishes; was it started with --no-telemetry?)\n", opt.dir);
    return 1;
  }
  TelemetryView view;
  if (opt.end_ns > opt.start_ns) {
    ViewOverWindows(sidecars, {{-1, opt.start_ns, opt.end_ns}}, &view);
  } else if (Status s = ViewOverTraces(opt.dir, &view); !s.ok()) {
    view.warnings.push_back(s.message() + "; using the span each telemetry file records");
    ViewOverWindows(sidecars, {}, &view);
  }
  if (opt.json) {
    PrintJson(opt, view);
  } else {
    PrintText(opt, view);
  }
  return view.nodes.empty() ? 1 : 0;
}

}  // namespace

void RegisterTelemetryCommand(CLI::App& app, int* exit_code) {
  auto opt = std::make_shared<TelemetryOptions>();
  CLI::App* cmd = app.add_subcommand("telemetry", "Node telemetry of a capture's traced window, per node and rank, with findings");
  cmd->add_option("capture_dir", opt->dir, "A capture directory (<out>/<job>/<capture-id>)")->required()->check(CLI::ExistingDirectory);
  cmd->add_flag("--json", opt->json, "Print JSON");
  cmd->add_option("--start-ns", opt->start_ns, "Window start (unix ns) instead of the traces'");
  cmd->add_option("--end-ns", opt->end_ns, "Window end (unix ns)");
  cmd->callback([opt, exit_code] { *exit_code = RunTelemetry(*opt); });
}

}  // namespace rankscope::cli

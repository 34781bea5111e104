// `rankscope telemetry <capture-dir> [--json]`: the node telemetry of a capture's traced window,
// per node and per rank, and the findings it supports. The window is taken from the traces
// (ProfilerStep spans, else every event; absolute time) and intersected with the telemetry the
// daemons saved beside them (telemetry.<host>.tsv). `rankscope analyze` reports the same
// through analysis/telemetry_join.h; this command is the standalone view.
#include <algorithm>
#include <climits>
#include <cstdlib>
#include <iostream>
#include <map>
#include <set>

#include "rankscope/analysis/telemetry_join.h"
#include "rankscope/cli/commands.h"
#include "rankscope/ingest/read_trace.h"
#include "rankscope/ingest/trace_set.h"
#include "rankscope/report/telemetry_report_text.h"

namespace rankscope::cli {
namespace {

struct TelemetryOptions {
  std::string dir;
  bool json = false;
  int64_t start_ns = 0, end_ns = 0;  // an explicit window instead of the traces'
};

struct RankWindow {
  int64_t rank = -1;
  int64_t start_ns = 0, end_ns = 0;
  std::string source;  // "ProfilerStep" or "all events"
};

// The traced window of one rank in absolute time: its ProfilerStep#N spans, else all its slices.
std::optional<RankWindow> TraceWindow(const TraceModel& m) {
  int64_t steps_lo = INT64_MAX, steps_hi = INT64_MIN, all_lo = INT64_MAX, all_hi = INT64_MIN;
  for (size_t i = 0; i < m.slices.size(); ++i) {
    const int64_t lo = m.slices.ts[i], hi = lo + m.slices.dur[i];
    all_lo = std::min(all_lo, lo);
    all_hi = std::max(all_hi, hi);
    if (m.Str(m.slices.name[i]).rfind("ProfilerStep#", 0) == 0) {
      steps_lo = std::min(steps_lo, lo);
      steps_hi = std::max(steps_hi, hi);
    }
  }
  if (all_lo > all_hi) return std::nullopt;
  RankWindow w;
  w.rank = m.info.distributed.rank.value_or(-1);
  const bool steps = steps_lo <= steps_hi;
  w.start_ns = m.AbsoluteNs(steps ? steps_lo : all_lo);
  w.end_ns = m.AbsoluteNs(steps ? steps_hi : all_hi);
  w.source = steps ? "ProfilerStep spans" : "all events";
  return w;
}

std::vector<RankWindow> TraceWindows(const std::string& dir, std::vector<std::string>* warnings) {
  std::vector<RankWindow> out;
  auto files = DiscoverTraceFiles({dir});
  if (!files.ok()) {
    warnings->push_back(files.status().message());
    return out;
  }
  for (const std::string& f : *files) {
    auto model = ReadTrace(f);
    if (!model.ok()) {
      warnings->push_back(model.status().message());
      continue;
    }
    if (auto w = TraceWindow(*model)) {
      if (w->rank < 0) w->rank = model->info.distributed.rank.value_or(-1);
      out.push_back(*w);
    }
  }
  return out;
}

int RunTelemetry(const TelemetryOptions& opt) {
  const auto sidecars = telemetry::FindSidecars(opt.dir);
  if (sidecars.empty()) {
    fmt::print(stderr, "rankscope telemetry: no telemetry.<host>.tsv in {} (the daemon saves it when a capture "
                       "finishes; was it started with --no-telemetry?)\n", opt.dir);
    return 1;
  }
  std::vector<std::string> warnings;
  std::vector<RankWindow> ranks;
  if (opt.end_ns <= opt.start_ns) ranks = TraceWindows(opt.dir, &warnings);
  std::vector<analysis::RankWindow> windows;
  for (const RankWindow& r : ranks) windows.push_back({r.rank, r.start_ns, r.end_ns});
  if (opt.end_ns > opt.start_ns) windows = {{-1, opt.start_ns, opt.end_ns}};
  int64_t all_lo = INT64_MAX, all_hi = INT64_MIN;
  for (const auto& w : windows) {
    all_lo = std::min(all_lo, w.start_ns);
    all_hi = std::max(all_hi, w.end_ns);
  }
  const std::vector<analysis::NodeWindowTelemetry> nodes = analysis::JoinTelemetry(sidecars, windows, &warnings);
  const auto findings = analysis::FindTelemetryIssues(nodes);
  if (opt.json) {
    nlohmann::json j = {{"dir", opt.dir}, {"nodes", nlohmann::json::array()}, {"findings", nlohmann::json::array()},
                        {"ranks", nlohmann::json::array()}, {"warnings", warnings}};
    for (const auto& n : nodes) j["nodes"].push_back(analysis::ToJson(n));
    for (const auto& f : findings) j["findings"].push_back(analysis::ToJson(f));
    for (const auto& r : ranks) {
      j["ranks"].push_back({{"rank", r.rank}, {"start_unix_ns", r.start_ns}, {"end_unix_ns", r.end_ns}, {"window", r.source}});
    }
    std::cout << j.dump(2) << "\n";
    return nodes.empty() ? 1 : 0;
  }
  fmt::print("telemetry of {}\n", opt.dir);
  if (!ranks.empty()) {
    fmt::print("window: {:.3f} s of {} ({} traces)\n", double(all_hi - all_lo) / 1e9, ranks.front().source, ranks.size());
  }
  for (const auto& n : nodes) std::cout << RenderNodeTelemetry(n);
  fmt::print("\nfindings\n");
  if (findings.empty()) fmt::print("  none: no node was CPU-, memory- or GPU-bound in the window\n");
  std::cout << RenderTelemetryFindings(findings);
  for (const auto& w : warnings) fmt::print("warning: {}\n", w);
  return nodes.empty() ? 1 : 0;
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

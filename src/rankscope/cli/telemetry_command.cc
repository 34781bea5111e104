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
#include "rankscope/ingest/kineto_reader.h"
#include "rankscope/ingest/trace_set.h"

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
    auto model = ReadKinetoTrace(f);
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

std::string Pct(const telemetry::Figure& f) { return f ? fmt::format("{:.1f}%", *f * 100) : "-"; }
std::string Cores(const telemetry::Figure& f) { return f ? fmt::format("{:.2f}", *f) : "-"; }
std::string Bytes(const telemetry::Figure& f) {
  if (!f) return "-";
  const double b = *f;
  if (b >= double(1ull << 30)) return fmt::format("{:.2f} GiB", b / double(1ull << 30));
  if (b >= double(1ull << 20)) return fmt::format("{:.1f} MiB", b / double(1ull << 20));
  return fmt::format("{:.0f} KiB", b / 1024.0);
}
std::string Rate(const telemetry::Figure& f) { return f ? fmt::format("{:.2f} MB/s", *f / 1e6) : "-"; }

void PrintNode(const analysis::NodeWindowTelemetry& n) {
  const auto& m = n.mean;
  const auto& p = n.peak;
  fmt::print("\nnode {}  ({}; interval ms {}; {:.0f}% of the window sampled)\n", n.host, n.source, n.interval_ms, n.coverage * 100);
  fmt::print("  CPU      {} busy of {} cores (user {}, system {}, iowait {}, steal {}); peak {}\n", Pct(m.cpu_busy),
             m.cpu_count ? fmt::format("{:.0f}", *m.cpu_count) : "-", Pct(m.cpu_user), Pct(m.cpu_system), Pct(m.cpu_iowait),
             Pct(m.cpu_steal), Pct(p.cpu_busy));
  fmt::print("  memory   {} used of {} (peak {}), swap {}\n", Bytes(m.mem_used), Bytes(m.mem_total), Bytes(p.mem_used),
             Bytes(m.swap_used));
  fmt::print("  network  rx {} tx {}   disk read {} write {}", Rate(m.net_rx), Rate(m.net_tx), Rate(m.disk_read), Rate(m.disk_write));
  if (m.ib_rx || m.ib_tx) fmt::print("   InfiniBand rx {} tx {}", Rate(m.ib_rx), Rate(m.ib_tx));
  fmt::print("\n");
  if (m.gpus.empty()) fmt::print("  GPU      {}\n", n.gpu_status.empty() ? "no GPU telemetry" : n.gpu_status);
  for (size_t i = 0; i < m.gpus.size(); ++i) {
    const auto& g = m.gpus[i];
    const telemetry::Figure peak_util = i < p.gpus.size() ? p.gpus[i].util : std::nullopt;
    fmt::print("  GPU {:<4} {} util {} (peak {}), memory {} of {}, {:.0f} W, SM {:.0f} MHz, {:.0f} C, PCIe rx {} tx {}, NVLink rx {} tx {}\n",
               g.device, g.name, Pct(g.util), Pct(peak_util),
               Bytes(g.mem_used), Bytes(g.mem_total), g.power_w.value_or(0), g.sm_hz.value_or(0) / 1e6, g.temp_c.value_or(0),
               Rate(g.pcie_rx), Rate(g.pcie_tx), Rate(g.nvlink_rx), Rate(g.nvlink_tx));
  }
  if (!m.processes.empty()) {
    fmt::print("  {:>5} {:>8} {:>10} {:>16} {:>11} {:>8}  {}\n", "rank", "pid", "cpu cores", "loader cores", "rss", "threads", "gpu memory");
    for (const auto& r : m.processes) {
      std::string gpu;
      for (const auto& [dev, bytes] : r.gpu_memory) gpu += fmt::format("gpu{} {} ", dev, Bytes(bytes));
      fmt::print("  {:>5} {:>8} {:>10} {:>16} {:>11} {:>8}  {}\n", r.rank, r.pid, Cores(r.cpu_cores),
                 fmt::format("{} ({:.0f} procs)", Cores(r.children_cpu_cores), r.children.value_or(0)), Bytes(r.rss),
                 r.threads ? fmt::format("{:.0f}", *r.threads) : "-", gpu.empty() ? "-" : gpu);
    }
  }
  for (const auto& w : n.warnings) fmt::print("  warning: {}\n", w);
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
  std::vector<analysis::NodeWindowTelemetry> nodes;
  int64_t all_lo = INT64_MAX, all_hi = INT64_MIN;
  for (const std::string& path : sidecars) {
    auto table = telemetry::ReadSidecar(path);
    if (!table.ok()) {
      warnings.push_back(table.status().message());
      continue;
    }
    // The node's window: the union of the windows of its own ranks (their process series say
    // which ranks ran there), else of every rank, else the capture's span from the file.
    std::set<int64_t> here;
    for (const auto& s : table->series) {
      if (s.key.metric == "rankscope_process_cpu_seconds_total" || s.key.metric == "rankscope_process_resident_bytes") {
        here.insert(std::atoll(std::string(telemetry::LabelValue(s.key.labels, "rank")).c_str()));
      }
    }
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (int pass = 0; pass < 2 && lo > hi; ++pass) {
      for (const auto& r : ranks) {
        if (pass == 0 && !here.count(r.rank)) continue;
        lo = std::min(lo, r.start_ns);
        hi = std::max(hi, r.end_ns);
      }
    }
    if (opt.end_ns > opt.start_ns) {
      lo = opt.start_ns;
      hi = opt.end_ns;
    } else if (lo > hi) {
      lo = table->header.window_start_ns;
      hi = table->header.window_end_ns;
      warnings.push_back(fmt::format("{}: no trace window found; using the capture's span", path));
    }
    all_lo = std::min(all_lo, lo);
    all_hi = std::max(all_hi, hi);
    nodes.push_back(analysis::SummarizeWindow(*table, lo, hi));
  }
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
  for (const auto& n : nodes) PrintNode(n);
  fmt::print("\nfindings\n");
  if (findings.empty()) fmt::print("  none: no node was CPU-, memory- or GPU-bound in the window\n");
  for (const auto& f : findings) {
    fmt::print("  [{}] {}: {}\n      evidence: {}\n      next: {}\n", f.kind, f.host, f.summary, f.evidence, f.next);
  }
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

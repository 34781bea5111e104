#include "rankscope/analysis/telemetry_join.h"

#include <climits>
#include <cstdlib>
#include <set>

#include <algorithm>

#include <fmt/format.h>

namespace rankscope::analysis {
namespace {

using telemetry::Figure;
using telemetry::FigureInput;
using telemetry::NodeFigures;

// The gap before the first sample of a series is unknown: take its next gap.
int64_t FirstGap(const std::vector<telemetry::Sample>& s) {
  return s.size() > 1 ? s[1].unix_ns - s[0].unix_ns : 0;
}

double Share(const Figure& part, const Figure& whole) {
  return part && whole && *whole > 0 ? *part / *whole : 0.0;
}

// CPU of all DataLoader workers (descendants) and of the rank processes, in cores.
std::pair<double, double> LoaderAndRankCores(const NodeFigures& f) {
  double loader = 0, ranks = 0;
  for (const auto& p : f.processes) {
    loader += p.children_cpu_cores.value_or(0);
    ranks += p.cpu_cores.value_or(0);
  }
  return {loader, ranks};
}

Finding NodeFinding(FindingKind kind, const NodeWindowTelemetry& n, double weight, Evidence evidence) {
  Finding f;
  f.kind = kind;
  f.severity = static_cast<Severity>(KindInfo(kind).default_severity);
  f.hosts = {n.host};
  f.subject = std::string(FindingKindId(kind));
  f.subject_kind = "node";
  f.cost.method = CostMethod::kNone;
  f.cost.unit = "window";
  f.weight = weight;
  evidence.kind = EvidenceKind::kTelemetry;
  evidence.host = n.host;
  evidence.subject = f.subject;
  f.evidence.push_back(std::move(evidence));
  f.next = {NextStepKind::kNodeCondition, f.subject, ""};
  return f;
}

void CpuFindings(const NodeWindowTelemetry& n, const TelemetryThresholds& t, std::vector<Finding>* out) {
  const NodeFigures& m = n.mean;
  if (!m.cpu_busy) return;
  const double busy = *m.cpu_busy, cores = m.cpu_count.value_or(0);
  const auto [loader, ranks] = LoaderAndRankCores(m);
  double gpu_util = 0;
  for (const auto& g : m.gpus) gpu_util += g.util.value_or(0) / static_cast<double>(m.gpus.size());
  const bool have_gpu = !m.gpus.empty() && std::any_of(m.gpus.begin(), m.gpus.end(), [](const auto& g) { return g.util.has_value(); });
  const bool saturated = busy >= t.cpu_saturated;
  const double busy_cores = busy * cores;
  const bool loader_heavy = busy_cores > 0 && loader / busy_cores >= t.loader_share;
  Evidence cpu;
  cpu.Set("cpu_busy_share", busy).Set("cpu_cores", cores).Set("cpu_user_share", m.cpu_user.value_or(0))
      .Set("cpu_system_share", m.cpu_system.value_or(0)).Set("loader_cores", loader).Set("rank_cores", ranks);
  if (have_gpu) cpu.Set("gpu_util_share", gpu_util);
  if (busy_cores > 0) cpu.Set("loader_share", loader / busy_cores);
  if (have_gpu && gpu_util < t.gpu_idle && saturated) {
    out->push_back(NodeFinding(FindingKind::kInputPipelineBound, n, 1.0 - gpu_util, cpu));
  } else if (saturated) {
    out->push_back(NodeFinding(loader_heavy ? FindingKind::kInputPipelineCpuBound : FindingKind::kHostCpuSaturated, n, busy, cpu));
  } else if (have_gpu && gpu_util < t.gpu_idle) {
    out->push_back(NodeFinding(FindingKind::kGpuMostlyIdle, n, 1.0 - gpu_util, cpu));
  }
  if (m.cpu_steal && *m.cpu_steal >= t.steal) {
    Evidence e = cpu;
    e.Set("steal_share", *m.cpu_steal);
    out->push_back(NodeFinding(FindingKind::kCpuSteal, n, *m.cpu_steal, e));
  }
  if (m.cpu_iowait && *m.cpu_iowait >= t.iowait) {
    Evidence e;
    e.Set("iowait_share", *m.cpu_iowait).Set("disk_read_bytes_per_s", m.disk_read.value_or(0))
        .Set("disk_write_bytes_per_s", m.disk_write.value_or(0));
    out->push_back(NodeFinding(FindingKind::kIoWait, n, *m.cpu_iowait, e));
  }
}

void MemoryFindings(const NodeWindowTelemetry& n, const TelemetryThresholds& t, std::vector<Finding>* out) {
  const NodeFigures& p = n.peak;
  if (p.mem_used && p.mem_total && Share(p.mem_used, p.mem_total) >= t.memory_full) {
    Evidence e;
    e.Set("used_share", Share(p.mem_used, p.mem_total)).Set("used_bytes", *p.mem_used).Set("total_bytes", *p.mem_total)
        .Set("swap_bytes", p.swap_used.value_or(0));
    out->push_back(NodeFinding(FindingKind::kHostMemoryFull, n, Share(p.mem_used, p.mem_total), e));
  }
  for (const auto& g : p.gpus) {
    const double share = Share(g.mem_used, g.mem_total);
    if (share >= t.gpu_memory_full) {
      Evidence e;
      e.detail = fmt::format("{}", g.device);
      e.Set("used_share", share).Set("used_bytes", *g.mem_used).Set("total_bytes", *g.mem_total);
      out->push_back(NodeFinding(FindingKind::kGpuMemoryFull, n, share, e));
    }
  }
}

}  // namespace

WindowStat SeriesOverWindow(const std::vector<telemetry::Sample>& samples, int64_t start_ns, int64_t end_ns) {
  WindowStat w;
  if (end_ns <= start_ns || samples.empty()) return w;
  double weighted = 0, covered = 0;
  bool any = false;
  for (size_t i = 0; i < samples.size(); ++i) {
    const int64_t to = samples[i].unix_ns;
    const int64_t from = i > 0 ? samples[i - 1].unix_ns : to - FirstGap(samples);
    const int64_t overlap = std::min(to, end_ns) - std::max(from, start_ns);
    // An instantaneous sample (no known interval) inside the window still counts, minimally.
    const bool inside = overlap > 0 || (from == to && to >= start_ns && to <= end_ns);
    if (!inside) continue;
    const double weight = std::max<double>(static_cast<double>(overlap), 1.0);
    weighted += samples[i].value * weight;
    covered += weight;
    w.peak = any ? std::max(w.peak, samples[i].value) : samples[i].value;
    any = true;
    ++w.samples;
  }
  if (covered > 0) w.mean = weighted / covered;
  w.coverage = std::min(1.0, covered / static_cast<double>(end_ns - start_ns));
  return w;
}

NodeWindowTelemetry SummarizeWindow(const telemetry::TelemetryTable& table, int64_t start_ns, int64_t end_ns) {
  NodeWindowTelemetry n;
  n.host = table.header.host;
  n.source = table.path;
  n.gpu_status = table.header.gpu;
  n.interval_ms = table.header.interval_ms;
  n.start_ns = start_ns;
  n.end_ns = end_ns;
  n.warnings = table.warnings;
  std::vector<FigureInput> means, peaks;
  for (const auto& s : table.series) {
    const WindowStat w = SeriesOverWindow(s.samples, start_ns, end_ns);
    if (w.samples == 0) continue;
    means.push_back({s.key.metric, &s.key.labels, w.mean});
    peaks.push_back({s.key.metric, &s.key.labels, w.peak});
    if (s.key.metric == "rankscope_cpu_busy_ratio") n.coverage = w.coverage;
  }
  n.mean = telemetry::BuildNodeFigures(means);
  n.peak = telemetry::BuildNodeFigures(peaks);
  if (table.header.coverage_start_ns > start_ns && table.header.coverage_start_ns > 0) {
    n.warnings.push_back("the daemon's telemetry history started after the window began (--telemetry-retention-s, "
                         "--telemetry-ring-mb)");
  }
  if (means.empty()) {
    n.warnings.push_back(fmt::format("no telemetry sample in the window [{}, {}] (the file covers [{}, {}]): a clock "
                                     "problem, or telemetry saved for another capture",
                                     start_ns, end_ns, table.header.window_start_ns, table.header.window_end_ns));
  }
  return n;
}

std::vector<Finding> FindTelemetryIssues(const std::vector<NodeWindowTelemetry>& nodes, const TelemetryThresholds& t) {
  std::vector<Finding> out;
  for (const auto& n : nodes) {
    if (n.coverage < t.min_coverage) continue;  // too little of the window sampled to judge
    CpuFindings(n, t, &out);
    MemoryFindings(n, t, &out);
  }
  RankFindings(&out);
  return out;
}

std::vector<NodeWindowTelemetry> JoinTelemetry(const std::vector<std::string>& sidecar_paths,
                                               const std::vector<RankWindow>& ranks,
                                               std::vector<std::string>* warnings) {
  std::vector<NodeWindowTelemetry> nodes;
  for (const std::string& path : sidecar_paths) {
    auto table = telemetry::ReadSidecar(path);
    if (!table.ok()) {
      warnings->push_back(table.status().message());
      continue;
    }
    std::set<int64_t> here;
    for (const auto& s : table->series) {
      if (s.key.metric == "rankscope_process_cpu_seconds_total" || s.key.metric == "rankscope_process_resident_bytes") {
        here.insert(std::atoll(std::string(telemetry::LabelValue(s.key.labels, "rank")).c_str()));
      }
    }
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (int pass = 0; pass < 2 && lo > hi; ++pass) {  // pass 0: this node's ranks; pass 1: all
      for (const RankWindow& r : ranks) {
        if (pass == 0 && here.count(r.rank) == 0) continue;
        lo = std::min(lo, r.start_ns);
        hi = std::max(hi, r.end_ns);
      }
    }
    if (lo > hi) {
      lo = table->header.window_start_ns;
      hi = table->header.window_end_ns;
      warnings->push_back(fmt::format("{}: no trace window for this node; using the capture's span", path));
    }
    nodes.push_back(SummarizeWindow(*table, lo, hi));
  }
  return nodes;
}

nlohmann::json ToJson(const NodeWindowTelemetry& n) {
  return {{"host", n.host}, {"source", n.source}, {"gpu_status", n.gpu_status}, {"interval_ms", n.interval_ms},
          {"start_unix_ns", n.start_ns}, {"end_unix_ns", n.end_ns}, {"coverage", n.coverage},
          {"mean", telemetry::ToJson(n.mean)}, {"peak", telemetry::ToJson(n.peak)}, {"warnings", n.warnings}};
}


}  // namespace rankscope::analysis

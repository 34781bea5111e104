#include "rankscope/report/analysis_report_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "rankscope/analysis/stats.h"
#include "rankscope/report/text_format.h"

namespace rankscope {
namespace {

constexpr size_t kWidth = 100;

double Share(double part, int64_t whole) { return whole > 0 ? part / static_cast<double>(whole) : 0.0; }

std::string Ms(int64_t ns) { return fmt::format("{:.2f}", ns / 1e6); }

class Writer {
 public:
  Writer(const RankSummary& r, const TextOptions& o) : r_(r), o_(o), s_(o.color) {}
  std::string Render();

 private:
  void Section(std::string_view title, std::string_view note = "") {
    out_ += "\n" + s_.Bold(std::string(title));
    if (!note.empty()) out_ += "  " + s_.Dim(std::string(note));
    out_ += "\n";
  }
  void Line(const std::string& text) { out_ += text + "\n"; }
  bool Flagged(double bottleneck_ns) const { return Share(bottleneck_ns, r_.window_ns()) > o_.flag_share; }

  void Header();
  void Highlights();
  void Steps();
  void GpuClasses();
  enum class Names { kCode, kVerbatim, kPaths, kGaps };
  void Functions(std::string_view title, const FunctionTable& t, Names names);
  void Communication();
  void Idle();
  void Launch();
  void Memory();
  void Warnings();

  const RankSummary& r_;
  const TextOptions& o_;
  Style s_;
  std::string out_;
};

void Writer::Header() {
  const std::string rank = r_.rank_resolved ? fmt::format("rank {}", r_.rank.rank) : "rank ?";
  const std::string world = r_.world_size ? fmt::format(" of {}", *r_.world_size) : "";
  const std::string backend = r_.backend.empty() ? "" : fmt::format(" ({})", r_.backend);
  Line(s_.Bold(fmt::format("== {}{}{} ==", rank, world, backend)));
  Line("  file     " + CellPath(r_.path, kWidth - 11));
  std::string window;
  if (r_.window_mode == WindowMode::kSteps && !r_.steps.empty()) {
    window = fmt::format("steps #{}..#{} ({} of {} profiled), ", r_.steps.front().number, r_.steps.back().number,
                         r_.steps.size(), r_.steps_in_trace);
  } else {
    window = fmt::format("{}, ", WindowModeName(r_.window_mode));
  }
  Line(fmt::format("  window   {}{} from {}", window, FormatNs(r_.window_ns()), FormatUtcTime(r_.window_start_ns)));
  if (!r_.device_names.empty()) {
    Line(fmt::format("  devices  {} x {}", r_.device_names.size(), r_.device_names.front()));
  }
  if (r_.has_gpu) {
    Line(fmt::format("  gpu      {} activities on device(s) [{}], {} stream(s)", r_.gpu.activities,
                     fmt::join(r_.gpu.devices, ", "), r_.idle_by_stream.size()));
  } else {
    Line("  gpu      no GPU activity in this trace (CPU-only report)");
  }
}

// The flagged functions of every table together, worst first.
void Writer::Highlights() {
  struct Item {
    double ns;
    std::string kind, name;
  };
  std::vector<Item> items;
  // A wait (a sleep, a lock, a GPU synchronisation) is named as one: the fix is what it waits for.
  auto label = [](std::string_view kind, const FunctionStat& f) {
    return f.wait ? fmt::format("{} wait", kind == "runtime call" ? "runtime" : kind) : std::string(kind);
  };
  auto add = [&](std::string_view kind, const FunctionTable& t, bool path) {
    for (const FunctionStat& f : t.rows) {
      if (Flagged(f.bottleneck_ns)) items.push_back({f.bottleneck_ns, label(kind, f), path ? CellPath(f.name, 68) : CellName(f.name, 68)});
    }
  };
  add("kernel", r_.kernels, false);
  add("memory op", r_.memory_ops, false);
  add("runtime call", r_.runtime_calls, false);
  add("cpu op", r_.cpu_ops, false);
  // A Python frame's time includes its callees': show a path only when no flagged deeper path
  // of the same thread accounts for most (90 %) of it, so "<module>|main" does not crowd out
  // the frame where the time goes.
  for (const FunctionStat& f : r_.python_paths.rows) {
    if (!Flagged(f.bottleneck_ns)) continue;
    const bool covered = std::any_of(r_.python_paths.rows.begin(), r_.python_paths.rows.end(), [&](const FunctionStat& g) {
      return &g != &f && g.detail == f.detail && g.name.size() > f.name.size() && g.name.starts_with(f.name + "|") &&
             g.bottleneck_ns >= 0.9 * f.bottleneck_ns;
    });
    if (!covered) items.push_back({f.bottleneck_ns, label("python", f), CellPath(f.name, 68)});
  }
  for (const CollectiveType& t : r_.collective_types) {
    if (Flagged(t.exposed_ns)) items.push_back({t.exposed_ns, "collective", fmt::format("{} (exposed)", t.op)});
  }
  if (r_.has_gpu && Share(static_cast<double>(r_.gpu.idle_ns), r_.window_ns()) > o_.flag_share) {
    items.push_back({static_cast<double>(r_.gpu.idle_ns), "gpu", "idle (nothing runs on the GPU)"});
  }
  if (items.empty()) return;
  std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.ns > b.ns; });
  Section("Bottlenecks", fmt::format("share of the window, above {}", FormatShare(o_.flag_share)));
  for (size_t i = 0; i < items.size() && i < o_.top; ++i) {
    Line(fmt::format("  {:>6}  {:<13} {}", FormatShare(Share(items[i].ns, r_.window_ns())), items[i].kind, items[i].name));
  }
}

void Writer::Steps() {
  if (r_.steps.empty()) return;
  Section("Steps", "CPU phases from the profiler's annotations; GPU = work each step launched (ms)");
  Line(fmt::format("  {:>7} {:>9} {:>8} {:>8} {:>8} {:>9} {:>8} {:>9} {:>9} {:>9}", "step", "duration", "data",
                   "forward", "backward", "optimizer", "other", "gpu busy", "compute", "comm"));
  std::vector<int64_t> durations;
  for (const StepSummary& st : r_.steps) {
    const auto& p = st.cpu_phase_ns;
    Line(fmt::format("  {:>7} {:>9} {:>8} {:>8} {:>8} {:>9} {:>8} {:>9} {:>9} {:>9}", fmt::format("#{}", st.number),
                     Ms(st.duration_ns()), Ms(p[0]), Ms(p[1]), Ms(p[2]), Ms(p[3]), Ms(p[4]),
                     r_.has_gpu ? Ms(st.gpu_busy_ns) : "-", r_.has_gpu ? Ms(st.compute_ns) : "-",
                     r_.has_gpu ? Ms(st.communication_ns) : "-"));
    durations.push_back(st.duration_ns());
  }
  if (durations.size() > 1) {
    const int64_t med = Quantile(durations, 0.5);
    const int64_t max = *std::max_element(durations.begin(), durations.end());
    Line(fmt::format("  median step {}, slowest {} ({:+.1f}%)", FormatNs(med), FormatNs(max),
                     med > 0 ? 100.0 * (max - med) / med : 0.0));
  }
}

void Writer::GpuClasses() {
  if (!r_.has_gpu) return;
  const GpuSummary& g = r_.gpu;
  const int64_t w = r_.window_ns();
  Section("GPU time by class", fmt::format("utilization {} of {}", FormatShare(Share(g.busy_ns_all, w)), FormatNs(w)));
  Line(fmt::format("  {:<15} {:>12} {:>12} {:>8}", "class", "busy", "exposed", "share"));
  for (int c = 0; c < kNumActivityClasses; ++c) {
    Line(fmt::format("  {:<15} {:>12} {:>12} {:>8}", ActivityClassName(static_cast<ActivityClass>(c)),
                     FormatNs(g.busy_ns[c]), FormatNs(g.exposed_ns[c]), FormatShare(Share(g.exposed_ns[c], w))));
  }
  Line(fmt::format("  {:<15} {:>12} {:>12} {:>8}", "idle", "", FormatNs(g.idle_ns), FormatShare(Share(g.idle_ns, w))));
  const int64_t comm = g.busy_ns[static_cast<int>(ActivityClass::kCommunication)];
  if (comm > 0) {
    Line(fmt::format("  communication overlapped by compute: {} of its {}",
                     FormatShare(Share(g.comm_compute_overlap_ns, comm)), FormatNs(comm)));
  }
}

// "between A and B" (analysis/untraced_time.h) as "A .. B", each side cut to half the width: the
// two ends are what tells one place from another.
std::string GapCell(std::string_view name, size_t width) {
  constexpr std::string_view kBetween = "between ", kAnd = " and ";
  const size_t and_at = name.find(kAnd);
  if (!name.starts_with(kBetween) || and_at == std::string_view::npos) return CellName(name, width);
  const size_t half = (width - 4) / 2;
  auto cut = [&](std::string_view s) {
    return s.size() <= half ? std::string(s) : std::string(s.substr(0, half - 3)) + "...";
  };
  return cut(name.substr(kBetween.size(), and_at - kBetween.size())) + " .. " + cut(name.substr(and_at + kAnd.size()));
}

void Writer::Functions(std::string_view title, const FunctionTable& t, Names names) {
  if (t.rows.empty()) return;
  const bool paths = names == Names::kPaths;
  // grid|block is shown only for names that more than one shown row shares.
  std::map<std::string_view, int> name_rows;
  for (size_t i = 0; i < t.rows.size() && i < o_.top; ++i) ++name_rows[t.rows[i].name];
  const size_t shown = std::min(o_.top, t.rows.size());
  Section(title, fmt::format("top {} of {} by bottleneck ratio; ! = above {}", shown,
                             t.rows.size() + t.omitted_rows, FormatShare(o_.flag_share)));
  Line(fmt::format("   {:>7} {:>7} {:>7} {:>10} {:>10} {:>10}  {}", "bneck", "prop", "count", "total", "median", "p99",
                   paths ? "call path (innermost frames) [thread]" : "name"));
  const int64_t w = r_.window_ns();
  for (size_t i = 0; i < shown; ++i) {
    const FunctionStat& f = t.rows[i];
    const bool flag = Flagged(f.bottleneck_ns);
    std::string name;
    constexpr size_t kNameWidth = kWidth - 63;
    if (paths) {
      const std::string thread = f.detail.substr(0, f.detail.find(' '));
      name = CellPath(f.name, kNameWidth - thread.size() - 3) + " [" + thread + "]";
    } else if (names == Names::kGaps) {
      name = GapCell(f.name, kNameWidth);
    } else if (names == Names::kVerbatim) {
      name = f.name.size() <= kNameWidth ? f.name : f.name.substr(0, kNameWidth - 3) + "...";
    } else if (!f.detail.empty() && name_rows[f.name] > 1) {
      const size_t room = kNameWidth - f.detail.size() - 1;
      name = CellName(f.name, room) + " " + s_.Dim(f.detail);
    } else {
      name = CellName(f.name, kNameWidth);
    }
    const std::string bneck = fmt::format("{:>7}", FormatShare(Share(f.bottleneck_ns, w)));
    Line(fmt::format("  {}{} {:>7} {:>7} {:>10} {:>10} {:>10}  {}", flag ? s_.Red("!") : " ",
                     flag ? s_.Red(bneck) : bneck, FormatShare(Share(f.in_window_ns, w)), f.count, FormatNs(f.total_ns),
                     FormatNs(f.median_ns), FormatNs(f.p99_ns), name));
  }
}

void Writer::Communication() {
  if (r_.collective_types.empty()) return;
  const int64_t w = r_.window_ns();
  std::vector<const CollectiveType*> types;
  for (const CollectiveType& t : r_.collective_types) types.push_back(&t);
  std::sort(types.begin(), types.end(), [](auto* a, auto* b) { return a->exposed_ns > b->exposed_ns; });
  const bool gpu = types.front()->on_gpu;
  Section("Communication", fmt::format("{} instances; exposed = not hidden by {} compute; bandwidth GB/s (median)",
                                       r_.collectives.size() + r_.omitted_collectives, gpu ? "GPU" : "host"));
  Line(fmt::format("  {:<21} {:>4} {:>6} {:>10} {:>10} {:>10} {:>7} {:>7} {:>7} {:>7}", "op algo proto dtype",
                   "n", "count", "total", "median", "bytes", "algbw", "busbw", "exposed", "overlap"));
  for (size_t i = 0; i < types.size() && i < o_.top; ++i) {
    const CollectiveType& t = *types[i];
    std::string label = t.op;
    for (const std::string* part : {&t.algorithm, &t.protocol, &t.dtype}) {
      if (!part->empty()) label += " " + *part;
    }
    Line(fmt::format("  {:<21} {:>4} {:>6} {:>10} {:>10} {:>10} {:>7} {:>7} {:>7} {:>7}", CellName(label, 21),
                     t.group_size > 0 ? std::to_string(t.group_size) : "?", t.count, FormatNs(t.total_ns),
                     FormatNs(t.median_ns), FormatByteCount(t.bytes),
                     t.algbw_gbps > 0 ? fmt::format("{:.2f}", t.algbw_gbps) : "-",
                     t.busbw_gbps > 0 ? fmt::format("{:.2f}", t.busbw_gbps) : "-",
                     FormatShare(Share(t.exposed_ns, w)),
                     t.busy_ns > 0 ? FormatShare(Share(t.overlap_ns, t.busy_ns)) : "-"));
  }
  if (!gpu) {
    Line(fmt::format("  host compute (CPU ops of the training threads) overlaps {} of the collectives' {}",
                     FormatShare(Share(r_.comm_host_overlap_ns, r_.comm_busy_ns)), FormatNs(r_.comm_busy_ns)));
  }
}

void Writer::Idle() {
  if (r_.idle_by_stream.empty()) return;
  Section("GPU idle per stream", fmt::format("host wait: launched late; kernel wait: gap < {}; edge: outside "
                                             "activity", FormatNs(r_.kernel_wait_threshold_ns)));
  Line(fmt::format("  {:>6} {:>7} {:>10} {:>11} {:>11} {:>11} {:>11} {:>8}", "device", "stream", "busy", "host wait",
                   "kernel wait", "other", "edge", "gaps"));
  for (const StreamIdle& s : r_.idle_by_stream) {
    Line(fmt::format("  {:>6} {:>7} {:>10} {:>11} {:>11} {:>11} {:>11} {:>8}", s.device, s.stream, FormatNs(s.busy_ns),
                     FormatNs(s.host_wait_ns), FormatNs(s.kernel_wait_ns), FormatNs(s.other_ns), FormatNs(s.edge_ns),
                     s.gaps));
  }
}

void Writer::Launch() {
  const LaunchSummary& l = r_.launch;
  if (l.all.count == 0) return;
  Section("Launch delay", "GPU start - end of the launch call");
  Line(fmt::format("  {:<24} {:>8} {:>10} {:>10} {:>10} {:>10} {:>10}", "launch call", "count", "mean", "median", "p99",
                   "max", "call mean"));
  auto row = [&](std::string_view name, const LaunchDelayStats& s) {
    Line(fmt::format("  {:<24} {:>8} {:>10} {:>10} {:>10} {:>10} {:>10}", CellName(name, 24), s.count,
                     FormatNs(s.mean_ns), FormatNs(s.median_ns), FormatNs(s.p99_ns), FormatNs(s.max_ns),
                     FormatNs(s.launch_call_mean_ns)));
  };
  row("all", l.all);
  for (const LaunchDelayStats& s : l.by_api) row(s.api, s);
  static constexpr const char* kBounds[] = {"<10us", "<100us", "<1ms", "<10ms", "<100ms", ">=100ms"};
  static_assert(std::size(kBounds) == kLaunchDelayBuckets.size() + 1);
  std::string hist;
  for (size_t b = 0; b < l.histogram.size(); ++b) hist += fmt::format("  {} {}", kBounds[b], l.histogram[b]);
  Line("  distribution:" + hist);
  for (const QueueDepth& q : l.queues) {
    Line(fmt::format("  queue depth device {} stream {}: max {}, mean {:.1f}, empty {} of the window", q.device,
                     q.stream, q.max_depth, q.mean_depth, FormatShare(Share(q.empty_ns, r_.window_ns()))));
  }
}

void Writer::Memory() {
  if (r_.memory.devices.empty()) return;
  Section("Memory", "from [memory] events");
  for (const MemoryPeak& p : r_.memory.devices) {
    const std::string device = p.device_type == 0 ? "cpu" : fmt::format("device type {} id {}", p.device_type, p.device_id);
    Line(fmt::format("  {:<22} peak allocated {} (trace {}), peak reserved {}, {} events", device,
                     FormatByteCount(p.peak_allocated), FormatByteCount(p.trace_peak_allocated),
                     FormatByteCount(p.peak_reserved), p.events));
  }
  for (size_t i = 0; i < r_.memory.top_allocators.size() && i < o_.top; ++i) {
    const OpAllocation& a = r_.memory.top_allocators[i];
    Line(fmt::format("  {:>10} in {:>6} allocations  {}", FormatByteCount(a.bytes), a.count, CellName(a.op, 60)));
  }
}

void Writer::Warnings() {
  if (r_.warnings.empty()) return;
  Section("Warnings");
  for (const std::string& w : r_.warnings) {
    const std::string wrapped = WrapText(w, kWidth - 11, std::string(11, ' '));
    Line("  " + s_.Yellow("warning:") + " " + wrapped.substr(11));
  }
}

std::string Writer::Render() {
  Header();
  Highlights();
  Steps();
  GpuClasses();
  Functions("Kernels", r_.kernels, Names::kCode);
  Functions("Memory operations", r_.memory_ops, Names::kVerbatim);
  Communication();
  Functions("CUDA/HIP runtime calls", r_.runtime_calls, Names::kCode);
  Functions("CPU ops", r_.cpu_ops, Names::kCode);
  Functions("Python call paths", r_.python_paths, Names::kPaths);
  Functions("Untraced time (nothing recorded there)", r_.untraced, Names::kGaps);
  Idle();
  Launch();
  Memory();
  Warnings();
  return out_;
}

}  // namespace

std::string RenderRankReport(const RankSummary& rank, const TextOptions& options) {
  return Writer(rank, options).Render();
}

namespace {

// Jobs up to this many ranks get one line per rank; larger ones the distribution over the ranks
// and the slowest ranks (a 4,096-line table says less than five quantiles and a shortlist).
constexpr size_t kOverviewAllRanksUpTo = 16;

struct OverviewRow {
  const RankSummary* r;
  int64_t median_step_ns = -1;  // -1: no steps
  double gpu_util = -1, compute = -1, comm = 0, idle = -1;  // shares of W; -1: no GPU
  const FunctionStat* worst = nullptr;
};

OverviewRow RowOf(const RankSummary& r) {
  OverviewRow row{&r};
  std::vector<int64_t> d;
  for (const StepSummary& st : r.steps) d.push_back(st.duration_ns());
  if (!d.empty()) row.median_step_ns = Quantile(d, 0.5);
  const int64_t w = r.window_ns();
  if (r.has_gpu) {
    row.gpu_util = Share(r.gpu.busy_ns_all, w);
    row.compute = Share(r.gpu.exposed_ns[0], w);
    row.idle = Share(r.gpu.idle_ns, w);
  }
  row.comm = Share(CommunicationExposedNs(r), w);
  // Python call paths are left out: their roots ("threading.py: _bootstrap") cover the whole
  // window and would name nothing.
  for (const FunctionTable* t : {&r.kernels, &r.memory_ops, &r.runtime_calls, &r.cpu_ops}) {
    if (!t->rows.empty() && (!row.worst || t->rows.front().bottleneck_ns > row.worst->bottleneck_ns)) {
      row.worst = &t->rows.front();
    }
  }
  return row;
}

std::string ShareOrDash(double v) { return v < 0 ? "-" : FormatShare(v); }

std::string RowHeader() {
  return fmt::format("  {:>5} {:>6} {:>11} {:>8} {:>8} {:>9} {:>8}  {}\n", "rank", "steps", "median step", "gpu util",
                     "compute", "comm exp", "idle", "worst function (bottleneck)");
}

std::string RowLine(const OverviewRow& row) {
  const RankSummary& r = *row.r;
  return fmt::format("  {:>5} {:>6} {:>11} {:>8} {:>8} {:>9} {:>8}  {}\n",
                     r.rank_resolved ? std::to_string(r.rank.rank) : "?", r.steps.size(),
                     row.median_step_ns < 0 ? "-" : FormatNs(static_cast<double>(row.median_step_ns)),
                     ShareOrDash(row.gpu_util), ShareOrDash(row.compute), FormatShare(row.comm), ShareOrDash(row.idle),
                     row.worst ? fmt::format("{} {}", FormatShare(Share(row.worst->bottleneck_ns, r.window_ns())),
                                             CellName(row.worst->name, 28))
                               : "-");
}

// min, p25, median, p75, max of one figure over the ranks that have it.
template <class Get, class Format>
std::string DistributionLine(std::string_view name, const std::vector<OverviewRow>& rows, Get get, Format format) {
  std::vector<double> v;
  for (const OverviewRow& row : rows) {
    if (const double x = get(row); x >= 0) v.push_back(x);
  }
  if (v.empty()) return "";
  std::sort(v.begin(), v.end());
  auto q = [&](double p) { return v[static_cast<size_t>(std::llround(p * static_cast<double>(v.size() - 1)))]; };
  return fmt::format("  {:<13} {:>10} {:>10} {:>10} {:>10} {:>10}  {} ranks\n", name, format(q(0)), format(q(0.25)),
                     format(q(0.5)), format(q(0.75)), format(q(1)), v.size());
}

std::string RenderDistribution(const std::vector<OverviewRow>& rows, const TextOptions& o) {
  Style s(o.color);
  std::string out = s.Bold(fmt::format("{} ranks", rows.size())) + "  " +
                    s.Dim("distribution over the ranks; the slowest ranks below; `--rank R` prints one rank in full") +
                    "\n";
  out += fmt::format("  {:<13} {:>10} {:>10} {:>10} {:>10} {:>10}\n", "", "min", "p25", "median", "p75", "max");
  auto ns = [](double v) { return FormatNs(v); };
  auto share = [](double v) { return FormatShare(v); };
  out += DistributionLine("median step", rows, [](const OverviewRow& r) { return static_cast<double>(r.median_step_ns); }, ns);
  out += DistributionLine("gpu util", rows, [](const OverviewRow& r) { return r.gpu_util; }, share);
  out += DistributionLine("compute", rows, [](const OverviewRow& r) { return r.compute; }, share);
  out += DistributionLine("comm exposed", rows, [](const OverviewRow& r) { return r.comm; }, share);
  out += DistributionLine("idle", rows, [](const OverviewRow& r) { return r.idle; }, share);
  std::vector<const OverviewRow*> slowest;
  for (const OverviewRow& row : rows) slowest.push_back(&row);
  std::stable_sort(slowest.begin(), slowest.end(),
                   [](const OverviewRow* a, const OverviewRow* b) { return a->median_step_ns > b->median_step_ns; });
  slowest.resize(std::min(slowest.size(), std::max<size_t>(o.top, 1)));
  out += "\n" + s.Bold("Slowest ranks") + "  " +
         s.Dim(fmt::format("the {} with the longest median step; every rank is in the JSON report", slowest.size())) +
         "\n";
  out += RowHeader();
  for (const OverviewRow* row : slowest) out += RowLine(*row);
  return out;
}

}  // namespace

std::string RenderRankOverview(const std::vector<RankSummary>& ranks, const TextOptions& o) {
  std::vector<OverviewRow> rows;
  rows.reserve(ranks.size());
  for (const RankSummary& r : ranks) rows.push_back(RowOf(r));
  if (rows.size() > kOverviewAllRanksUpTo) return RenderDistribution(rows, o);
  Style s(o.color);
  std::string out = s.Bold(fmt::format("{} ranks", ranks.size())) + "  " +
                    s.Dim("shares of each rank's window; `--rank R` prints one rank in full") + "\n";
  out += RowHeader();
  for (const OverviewRow& row : rows) out += RowLine(row);
  return out;
}

}  // namespace rankscope

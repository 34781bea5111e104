#include "rankscope/analysis/analyze_rank.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <set>

#include "rankscope/analysis/collectives.h"
#include "rankscope/analysis/cpu_functions.h"
#include "rankscope/analysis/derived_steps.h"
#include "rankscope/analysis/gpu_functions.h"
#include "rankscope/analysis/gpu_timeline.h"
#include "rankscope/analysis/host_gpu_waits.h"
#include "rankscope/analysis/idle_breakdown.h"
#include "rankscope/analysis/launch_analysis.h"
#include "rankscope/analysis/memory_usage.h"
#include "rankscope/analysis/slice_order.h"
#include "rankscope/analysis/step_phases.h"
#include "rankscope/analysis/untraced_time.h"

namespace rankscope {
namespace {

void FillIdentity(const TraceModel& m, RankSummary* r) {
  r->path = m.path;
  r->distributed_rank = m.info.distributed.rank;
  r->world_size = m.info.distributed.world_size;
  r->backend = m.info.distributed.backend;
  for (const ProcessGroupConfig& pg : m.info.distributed.pg_config) {
    std::string ranks = "[";
    for (size_t i = 0; i < pg.ranks.size(); ++i) ranks += (i ? ", " : "") + std::to_string(pg.ranks[i]);
    r->pg_config.push_back({pg.name, pg.desc, ranks + "]", pg.size});
  }
  r->host_name = m.info.host_name;
  r->cpu_sched = m.info.cpu_sched;
  for (const DeviceProperties& d : m.info.devices) r->device_names.push_back(d.name);
  r->time_origin_ns = m.info.time_origin_ns;
  r->skipped_events = m.stats.skipped.total();
  r->trace_events = m.stats.elements;
}

// Union of the CPU ops of the training threads (threads that run no CPU collective): the host's
// compute, against which CPU collectives are exposed or hidden.
IntervalSet HostCompute(const TraceModel& m, const std::vector<uint32_t>& order) {
  const std::vector<uint32_t> comm_tracks = CollectiveTracks(m);
  IntervalSet set;
  const SliceTable& s = m.slices;
  // At most one interval per CPU op: reserved pages that are never filled cost no memory.
  set.reserve(static_cast<size_t>(std::count(s.kind.begin(), s.kind.end(), ActivityKind::kHostOp)));
  for (const uint32_t i : order) {  // in start order, so Append builds the union
    if (s.kind[i] != ActivityKind::kHostOp) continue;
    if (std::binary_search(comm_tracks.begin(), comm_tracks.end(), s.track[i])) continue;
    set.Append(s.ts[i], s.ts[i] + s.dur[i]);
  }
  return set;
}

void FillGpu(const std::vector<GpuActivity>& acts, const GpuTimeline& t, GpuSummary* g) {
  g->busy_ns = t.class_busy_ns;
  g->exposed_ns = t.exposed_ns;
  g->busy_ns_all = t.busy.Length();
  g->idle_ns = t.idle_ns;
  g->comm_compute_overlap_ns = t.comm_compute_overlap_ns;
  g->activities = acts.size();
  std::set<int32_t> devices;
  for (const GpuActivity& a : acts) devices.insert(a.device);
  g->devices.assign(devices.begin(), devices.end());
}

void AddWarnings(const std::vector<GpuActivity>& acts, RankSummary* r) {
  if (r->skipped_events > 0) {
    r->warnings.push_back(fmt::format("{} malformed events were skipped while reading (see `rankscope info`)",
                                      r->skipped_events));
  }
  if (r->launch.unlinked_activities > 0) {
    r->warnings.push_back(fmt::format(
        "{} GPU activities in the window have no launch call with their correlation id: they are left out of "
        "launch delay, queue depth, host-wait attribution and step phases",
        r->launch.unlinked_activities));
  }
  if (!acts.empty() && r->gpu.busy_ns_all == 0) r->warnings.push_back("the trace has GPU activity, but none inside the window");
  if (r->step_source != "profiler_step" && r->step_source != "none") {
    const std::string from =
        r->step_source == "optimizer_step" ? "its Optimizer.step#... annotations (an iteration ends where one ends)"
        : r->step_source == "dataloader"   ? "its enumerate(DataLoader)#... annotations (an iteration begins with one)"
                                           : "its repeating top-level '" + r->step_marker + "' (an iteration begins with one)";
    r->warnings.push_back(fmt::format("no ProfilerStep#N annotations: {} iterations derived from {}, numbered from 0",
                                      r->steps_in_trace, from));
  }
  if (r->window_mode == WindowMode::kGpuSpan || r->window_mode == WindowMode::kCpuSpan) {
    r->warnings.push_back(fmt::format("no ProfilerStep#N annotations: the window is the {} of the trace",
                                      r->window_mode == WindowMode::kGpuSpan ? "span of GPU activity" : "span of CPU events"));
  }
}

}  // namespace

StatusOr<RankSummary> AnalyzeRank(const TraceModel& m, const AnalysisOptions& opt, RankIntermediates* keep) {
  const auto started = std::chrono::steady_clock::now();
  static const CommPatterns kNoPatterns;
  ActivityClassifier classifier(m, opt.comm_patterns ? *opt.comm_patterns : kNoPatterns);
  StepDetection detected = FindSteps(m);
  std::vector<ProfilerStep>& steps = detected.steps;  // moved into `keep` at the end
  auto window = SelectWindow(m, steps, opt.window);
  if (!window.ok()) return window.status().WithContext(m.path);
  const Window& w = *window;

  RankSummary r;
  FillIdentity(m, &r);
  r.window_mode = w.mode;
  r.window_start_ns = m.AbsoluteNs(w.start);
  r.window_end_ns = m.AbsoluteNs(w.end);
  r.steps_in_trace = steps.size();
  r.step_source = StepSourceName(detected.source);
  r.step_marker = detected.marker;
  r.kernel_wait_threshold_ns = opt.kernel_wait_threshold_ns;

  std::vector<GpuActivity> acts = CollectGpuActivities(m, classifier);
  const GpuTimeline timeline = SweepGpuTimeline(acts, w);
  std::vector<uint32_t> order = SlicesByStart(m);  // moved into `keep` at the end
  r.has_gpu = !acts.empty();
  FillGpu(acts, timeline, &r.gpu);
  // The CPU tables first: their per-instance memory is gone before the host compute set (up to
  // one interval per CPU op) is built, so the two never peak together.
  if (opt.function_tables) {
    r.runtime_calls = BuildRuntimeCallTable(m, order, w, timeline.busy, opt.max_rows);
    r.cpu_ops = BuildCpuOpTable(m, order, w, timeline.busy, opt.max_rows);
    r.python_paths = BuildPythonPathTable(m, order, w, timeline.busy, opt.max_rows, &r.collector_threads);
    r.untraced = BuildUntracedTable(m, order, w, timeline.busy, opt.max_rows);
  }
  const IntervalSet host_compute = HostCompute(m, order);
  r.steps = AnalyzeSteps(m, order, steps, w, acts, host_compute, HostGpuWaits(m, acts));
  if (opt.function_tables) {
    r.kernels = BuildKernelTable(m, acts, timeline, w, opt.max_rows);
    r.kernel_names = BuildKernelNameTable(m, acts, timeline, w, opt.max_rows);
    r.kernels_by_op = BuildKernelsByOpTable(m, acts, timeline, w, opt.max_rows);
    r.memory_ops = BuildMemoryOpTable(m, acts, timeline, w, opt.max_rows);
  }
  r.host_compute_ns = host_compute.CoveredIn(w.start, w.end);
  AnalyzeCollectives(m, w, {&acts, &timeline, &steps, &host_compute, opt.max_collective_instances}, &r);
  if (opt.stream_analyses) {
    r.idle_by_stream = AnalyzeIdleByStream(m, acts, w, opt.kernel_wait_threshold_ns);
    r.launch = AnalyzeLaunches(m, acts, w);
  }
  r.memory = AnalyzeMemory(m, w, opt.top_allocators);
  AddWarnings(acts, &r);
  if (keep) {
    keep->order = std::move(order);
    keep->activities = std::move(acts);
    keep->steps = std::move(steps);
  }
  r.analysis_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - started).count();
  return r;
}

}  // namespace rankscope

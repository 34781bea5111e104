#include "rankscope/compare/compare_summary.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <unordered_map>

#include "rankscope/analysis/collectives.h"
#include "rankscope/analysis/gpu_activity.h"
#include "rankscope/analysis/slice_order.h"
#include "rankscope/analysis/stats.h"
#include "rankscope/analysis/step_phases.h"
#include "rankscope/analysis/window.h"
#include "rankscope/cluster/robust_rule.h"
#include "rankscope/compare/module_tree.h"
#include "rankscope/compare/op_tree.h"
#include "rankscope/compare/step_attribution.h"

namespace rankscope::compare {
namespace {

// Slow outlier steps: longer than median + max(3 x 1.4826 x MAD, 10 % of the median). Needs four
// steps to tell an outlier from the rest.
// The selected steps (by position), minus slow outliers among them.
std::vector<bool> KeptSteps(const std::vector<StepSummary>& steps, const SummaryOptions& options) {
  std::vector<bool> kept(steps.size(), true);
  for (size_t i = 0; i < steps.size(); ++i) {
    const auto pos = static_cast<int64_t>(i);
    if ((options.first_step && pos < *options.first_step) || (options.last_step && pos > *options.last_step)) kept[i] = false;
  }
  std::vector<size_t> selected;
  for (size_t i = 0; i < steps.size(); ++i) {
    if (kept[i]) selected.push_back(i);
  }
  if (options.keep_outlier_steps || selected.size() < 4) return kept;
  std::vector<double> d;
  for (size_t i : selected) d.push_back(static_cast<double>(steps[i].duration_ns()));
  const RobustStats stats = ComputeRobustStats(d);
  const OutlierRule rule{3.0, 0.10};
  for (size_t k = 0; k < selected.size(); ++k) kept[selected[k]] = !rule.IsHigh(d[k], stats);
  return kept;
}

StepPhase PhaseAt(const std::vector<PhasePiece>& pieces, int64_t t) {
  auto it = std::upper_bound(pieces.begin(), pieces.end(), t, [](int64_t x, const PhasePiece& p) { return x < p.end; });
  return it != pieces.end() && it->start <= t ? it->phase : StepPhase::kOther;
}

// Kept steps on the trace clock, for "is t in a kept step".
struct KeptSpans {
  std::vector<std::pair<int64_t, int64_t>> spans;  // sorted
  int Find(int64_t t) const {
    auto it = std::upper_bound(spans.begin(), spans.end(), t, [](int64_t x, const auto& s) { return x < s.first; });
    if (it == spans.begin()) return -1;
    --it;
    return t < it->second ? static_cast<int>(it - spans.begin()) : -1;
  }
};

void AddKernelUse(OpNode& node, uint32_t name, KernelClass cls, int64_t ns, size_t cap) {
  auto it = std::find_if(node.kernels.begin(), node.kernels.end(), [&](const KernelUse& k) { return k.name == name; });
  if (it != node.kernels.end()) {
    ++it->count;
    it->ns += ns;
  } else if (node.kernels.size() < cap) {
    node.kernels.push_back({name, cls, 1, ns});
  }
}

// Backward operators belong to the forward operator that recorded their autograd node: the
// fwdbwd flow starts at the forward op and ends at the backward one.
void LinkBackward(const TraceModel& m, const OpTreeBuilder& ops, CompareSummary* out) {
  std::unordered_map<int64_t, std::pair<const FlowEvent*, const FlowEvent*>> flows;
  for (const FlowEvent& f : m.flows) {
    if (f.kind != FlowKind::kForwardToBackward) continue;
    auto& pair = flows[f.id];
    (f.phase == 's' ? pair.first : pair.second) = &f;
  }
  for (const auto& [id, pair] : flows) {
    if (!pair.first || !pair.second) continue;
    const uint32_t fwd = ops.OutermostStartingAt(pair.first->track, pair.first->ts);
    const uint32_t bwd = ops.OutermostStartingAt(pair.second->track, pair.second->ts);
    if (fwd == kNoIndex || bwd == kNoIndex) continue;
    // The flow ends at the backward function (AddmmBackward0); the autograd engine's
    // evaluate_function op around it belongs to the same forward op.
    const uint32_t forward = ops.instance(fwd).node;
    for (uint32_t i = bwd; i != kNoIndex; i = ops.instance(i).parent) {
      OpNode& node = out->ops[ops.instance(i).node];
      if (node.forward == kNoIndex) node.forward = forward;
      if (out->names.Get(node.name).rfind("autograd::engine::evaluate_function: ", 0) == 0) break;
      const uint32_t parent = ops.instance(i).parent;
      if (parent == kNoIndex ||
          out->names.Get(out->ops[ops.instance(parent).node].name).rfind("autograd::engine::evaluate_function: ", 0) != 0) {
        break;
      }
    }
  }
}

// The operator's module: that of its first instance.
void LinkModules(const OpTreeBuilder& ops, const ModuleTreeBuilder& modules, CompareSummary* out) {
  std::vector<bool> done(out->ops.size(), false);
  for (uint32_t track : ops.tracks()) {
    for (uint32_t i : ops.TrackInstances(track)) {
      const OpInstance& inst = ops.instance(i);
      if (done[inst.node]) continue;
      done[inst.node] = true;
      out->ops[inst.node].module = modules.ModuleAt(track, inst.start);
    }
  }
}

void FinishTotals(CompareSummary* out) {
  std::vector<OpNode>& ops = out->ops;
  for (size_t k = ops.size(); k-- > 0;) {  // children have larger indices than their parents
    OpNode& n = ops[k];
    n.device_total_ns += n.device_ns;
    n.launches_total += n.launches;
    n.attributed_total_ns += n.attributed_host_ns + n.attributed_device_ns;
    if (n.parent != kNoIndex) {
      ops[n.parent].device_total_ns += n.device_total_ns;
      ops[n.parent].launches_total += n.launches_total;
      ops[n.parent].attributed_total_ns += n.attributed_total_ns;
    }
  }
  for (OpNode& n : ops) {
    std::sort(n.kernels.begin(), n.kernels.end(), [](const KernelUse& a, const KernelUse& b) { return a.ns > b.ns; });
  }
  // Modules: each operator adds to its module (forward) or to its forward op's module (backward).
  std::vector<ModuleNode>& mods = out->modules;
  for (const OpNode& n : ops) {
    const bool backward = n.forward != kNoIndex;
    const uint32_t module = backward ? ops[n.forward].module : n.module;
    if (module == kNoIndex || module == 0) continue;
    // Only operators directly under the module's frame (not nested in another op of it).
    const bool top = n.parent == kNoIndex ||
                     (backward ? ops[n.parent].forward == kNoIndex || ops[ops[n.parent].forward].module != module
                               : ops[n.parent].module != module);
    ModuleNode& mod = mods[module];
    mod.attributed_self_ns += n.attributed_host_ns + n.attributed_device_ns;
    if (backward) {
      mod.backward_device_ns += n.device_ns;
      if (top) mod.backward_host_ns += n.host_ns;
    } else {
      mod.device_self_ns += n.device_ns;
    }
  }
  for (size_t k = mods.size(); k-- > 0;) {
    ModuleNode& m = mods[k];
    m.device_total_ns += m.device_self_ns;
    m.attributed_total_ns += m.attributed_self_ns;
    if (m.parent != kNoIndex) {
      mods[m.parent].device_total_ns += m.device_total_ns;
      mods[m.parent].attributed_total_ns += m.attributed_total_ns;
    }
  }
}

// Communication rows: RankSummary's collective instances of the kept steps by type and size.
void BuildCommRows(const RankSummary& r, const KeptSpans& kept, const std::vector<double>& exposed,
                   CompareSummary* out) {
  std::map<std::pair<uint32_t, int>, size_t> index;
  std::vector<std::vector<int64_t>> algbw;
  for (size_t k = 0; k < r.collectives.size(); ++k) {
    const CollectiveInstance& c = r.collectives[k];
    if (kept.Find(c.start_ns - r.time_origin_ns) < 0) continue;
    const int bucket = c.bytes >= 0 ? SizeBucket(c.bytes) : -1;
    auto [it, inserted] = index.try_emplace({c.type, bucket}, out->comm.size());
    if (inserted) {
      const CollectiveType& t = r.collective_types[c.type];
      CommRow row;
      row.op = t.op;
      row.algorithm = t.algorithm;
      row.protocol = t.protocol;
      row.dtype = t.dtype;
      row.group_size = t.group_size;
      row.on_gpu = t.on_gpu;
      row.bucket = bucket;
      out->comm.push_back(row);
      algbw.emplace_back();
    }
    CommRow& row = out->comm[it->second];
    ++row.count;
    row.time_ns += c.end_ns - c.start_ns;
    row.exposed_ns += exposed[k];
    if (c.bytes >= 0) {
      row.bytes += c.bytes;
      if (c.end_ns > c.start_ns) {
        algbw[it->second].push_back(static_cast<int64_t>(static_cast<double>(c.bytes) * 1e9 / static_cast<double>(c.end_ns - c.start_ns)));
      }
    }
  }
  for (size_t k = 0; k < out->comm.size(); ++k) {
    CommRow& row = out->comm[k];
    row.algbw_gbps = static_cast<double>(Quantile(algbw[k], 0.5)) / 1e9;
    row.busbw_gbps = row.algbw_gbps * BusBandwidthFactor(row.op, row.group_size);
  }
}

// The kept steps with their phase timelines, on the trace clock.
struct KeptStep {
  size_t w_index;  // index among the analysis window's steps (RankSummary::steps)
  const ProfilerStep* step;
};

struct StepContext {
  std::vector<KeptStep> kept;
  KeptSpans spans;
  std::vector<std::vector<PhasePiece>> phases;  // per window step

  StepPhase PhaseAt(int kept_index, int64_t t) const {
    return compare::PhaseAt(phases[kept[kept_index].w_index], t);
  }
};

bool Selected(const SummaryOptions& options, size_t position) {
  const auto pos = static_cast<int64_t>(position);
  return !(options.first_step && pos < *options.first_step) && !(options.last_step && pos > *options.last_step);
}

// Picks the kept steps, records their numbers, durations and host phases in `out`, and builds
// their phase timelines.
StatusOr<StepContext> SelectSteps(const TraceModel& m, const RankSummary& r, const std::vector<ProfilerStep>& all_steps,
                                  const std::vector<uint32_t>& order, const SummaryOptions& options,
                                  CompareSummary* out) {
  std::map<int64_t, size_t> step_index;
  for (size_t i = 0; i < all_steps.size(); ++i) step_index.emplace(all_steps[i].number, i);
  Window window;
  window.mode = WindowMode::kSteps;
  window.start = r.window_start_ns - r.time_origin_ns;
  window.end = r.window_end_ns - r.time_origin_ns;
  window.first_step_index = step_index.at(r.steps.front().number);
  window.end_step_index = step_index.at(r.steps.back().number) + 1;

  StepContext ctx;
  const std::vector<bool> kept = KeptSteps(r.steps, options);
  for (size_t i = 0; i < r.steps.size(); ++i) {
    if (!kept[i]) {
      if (Selected(options, i)) out->steps.dropped.push_back(r.steps[i].number);
      continue;
    }
    ctx.kept.push_back({i, &all_steps[step_index.at(r.steps[i].number)]});
    out->steps.numbers.push_back(r.steps[i].number);
    out->steps.durations.push_back(r.steps[i].duration_ns());
    for (int p = 0; p < kNumStepPhases; ++p) out->breakdown.phase_ns[p] += static_cast<double>(r.steps[i].cpu_phase_ns[p]);
  }
  if (ctx.kept.empty()) {
    return InvalidArgument("{}: no profiler step at positions {}..{} (the trace has {} steps)", m.path,
                           options.first_step.value_or(0), options.last_step ? fmt::format("{}", *options.last_step) : "",
                           r.steps.size());
  }
  for (const KeptStep& k : ctx.kept) ctx.spans.spans.emplace_back(k.step->start, k.step->end);
  ctx.phases = StepPhaseTimelines(m, order, all_steps, window);
  return ctx;
}

// The operator template of the kept steps, their modules, and which forward op each backward op
// belongs to.
void BuildTrees(const TraceModel& m, const StepContext& ctx, const std::vector<uint32_t>& order, OpTreeBuilder& ops,
                CompareSummary* out) {
  ModuleTreeBuilder modules(m, out);
  for (uint32_t k = 0; k < ctx.kept.size(); ++k) {
    const ProfilerStep& st = *ctx.kept[k].step;
    ops.AddStep(k, st.start, st.end, st.track, order, ctx.phases[ctx.kept[k].w_index]);
    modules.AddStep(st.start, st.end, order);
  }
  out->folded_instances = ops.folded();
  if (out->modules.size() == 1) out->modules.clear();
  if (!out->modules.empty()) LinkModules(ops, modules, out);
  LinkBackward(m, ops, out);
}

// Classifies GPU activities (who launched them, their class, their collective instance) and adds
// those of the kept steps to their operators and to the kernel rows. Returns the longest activity.
class ActivityPass {
 public:
  ActivityPass(const TraceModel& m, const RankSummary& r, const OpTreeBuilder& ops, const StepContext& ctx,
               const SummaryOptions& options, CompareSummary* out)
      : m_(m), ops_(ops), ctx_(ctx), options_(options), out_(out) {
    for (uint32_t k = 0; k < r.collectives.size(); ++k) {
      if (r.collectives[k].stream >= 0) gpu_collectives_.emplace_back(r.collectives[k].start_ns, r.collectives[k].stream, k);
    }
    std::sort(gpu_collectives_.begin(), gpu_collectives_.end());
  }

  int64_t Run(const std::vector<GpuActivity>& acts, std::vector<ActivityFacts>* facts) {
    facts->assign(acts.size(), ActivityFacts{});
    int64_t longest = 0;
    for (size_t i = 0; i < acts.size(); ++i) {
      longest = std::max(longest, acts[i].end - acts[i].start);
      const int step = Classify(acts[i], &(*facts)[i]);
      if (step >= 0) Add(acts[i], (*facts)[i]);  // else launched outside the kept steps
    }
    return longest;
  }

 private:
  // Fills the facts; returns the kept step the activity was launched in, or -1.
  int Classify(const GpuActivity& a, ActivityFacts* f) {
    const SliceTable& s = m_.slices;
    uint32_t node = kNoIndex;
    int step = -1;
    StepPhase phase = StepPhase::kOther;
    if (a.launch != kNoSlice) {
      const uint32_t inst = ops_.InstanceAt(s.track[a.launch], s.ts[a.launch]);
      if (inst != kNoIndex) node = ops_.instance(inst).node;
      step = ctx_.spans.Find(s.ts[a.launch]);
      if (step >= 0) phase = ctx_.PhaseAt(step, s.ts[a.launch]);
    } else {
      step = ctx_.spans.Find(a.start);
    }
    f->node = node;
    f->cls = ClassOf(a, node == kNoIndex ? 0 : out_->ops[node].name, phase);
    if (a.cls == ActivityClass::kCommunication) f->collective = CollectiveOf(a);
    return step;
  }

  KernelClass ClassOf(const GpuActivity& a, uint32_t op_name, StepPhase phase) {
    const SliceTable& s = m_.slices;
    const uint64_t key = (static_cast<uint64_t>(s.name[a.slice]) << 32) ^ (static_cast<uint64_t>(op_name) << 4) ^
                         (static_cast<uint64_t>(phase) << 1) ^ static_cast<uint64_t>(a.cls);
    auto [memo, inserted] = class_memo_.try_emplace(key, KernelClass::kElementwise);
    if (inserted) {
      memo->second = ClassifyActivity(a.cls, s.kind[a.slice] == ActivityKind::kDeviceMemset,
                                      {m_.Str(s.name[a.slice]), op_name ? std::string_view(out_->names.Get(op_name)) : "",
                                       phase == StepPhase::kBackward, phase == StepPhase::kOptimizer});
    }
    return memo->second;
  }

  // The GPU collective instance that starts with this kernel on its stream.
  uint32_t CollectiveOf(const GpuActivity& a) const {
    const int64_t start = m_.AbsoluteNs(a.start);
    auto it = std::lower_bound(gpu_collectives_.begin(), gpu_collectives_.end(), std::make_tuple(start, a.stream, 0u));
    if (it != gpu_collectives_.end() && std::get<0>(*it) == start && std::get<1>(*it) == a.stream) return std::get<2>(*it);
    return kNoIndex;
  }

  void Add(const GpuActivity& a, const ActivityFacts& f) {
    const uint32_t kname = out_->names.Intern(m_.Str(m_.slices.name[a.slice]));
    if (f.node != kNoIndex) {
      OpNode& n = out_->ops[f.node];
      ++n.launches;
      n.device_ns += a.end - a.start;
      AddKernelUse(n, kname, f.cls, a.end - a.start, options_.max_kernels_per_node);
    }
    auto [row, fresh] = kernel_rows_.try_emplace(kname, out_->kernels.size());
    if (fresh) out_->kernels.push_back({kname, f.cls, 0, 0});
    ++out_->kernels[row->second].count;
    out_->kernels[row->second].ns += a.end - a.start;
  }

  const TraceModel& m_;
  const OpTreeBuilder& ops_;
  const StepContext& ctx_;
  const SummaryOptions& options_;
  CompareSummary* out_;
  std::vector<std::tuple<int64_t, int32_t, uint32_t>> gpu_collectives_;  // (absolute start, stream, index)
  std::unordered_map<uint64_t, KernelClass> class_memo_;
  std::unordered_map<uint32_t, size_t> kernel_rows_;  // NameTable id -> out->kernels index
};

// Splits every kept step's time between GPU work, operators, collectives and gaps (see
// step_attribution.h), then builds the communication rows with the exposed time it found.
void AttributeSteps(const TraceModel& m, const RankSummary& r, const OpTreeBuilder& ops, const StepContext& ctx,
                    const std::vector<GpuActivity>& acts, const std::vector<ActivityFacts>& facts,
                    int64_t longest_activity, const SummaryOptions& options, CompareSummary* out) {
  AttributionInputs in;
  in.model = &m;
  in.ops = &ops;
  in.activities = &acts;
  in.facts = &facts;
  const std::vector<uint32_t> comm_tracks = CollectiveTracks(m);
  for (uint32_t track : ops.tracks()) {
    if (!std::binary_search(comm_tracks.begin(), comm_tracks.end(), track)) in.training_tracks.push_back(track);
  }
  for (uint32_t k = 0; k < r.collectives.size(); ++k) {
    const CollectiveInstance& c = r.collectives[k];
    if (c.stream >= 0 || r.collective_types[c.type].on_gpu) continue;
    in.cpu_collectives.push_back({c.start_ns - r.time_origin_ns, c.end_ns - r.time_origin_ns, k});
    longest_activity = std::max(longest_activity, c.end_ns - c.start_ns);
  }
  std::sort(in.cpu_collectives.begin(), in.cpu_collectives.end(),
            [](const CpuCollective& a, const CpuCollective& b) { return a.start < b.start; });
  in.max_activity_ns = longest_activity;
  const size_t kept_count = ctx.kept.size();
  std::vector<double> collective_exposed(r.collectives.size(), 0.0);
  for (uint32_t k = 0; k < kept_count; ++k) {
    const ProfilerStep& st = *ctx.kept[k].step;
    AttributeStep(in, {k, st.start, st.end, st.track, &ctx.phases[ctx.kept[k].w_index]}, out, &collective_exposed);
  }
  BuildCommRows(r, ctx.spans, collective_exposed, out);
}

// Memory events of the kept steps, added to the operator they happened in.
void AddMemoryEvents(const TraceModel& m, const OpTreeBuilder& ops, const KeptSpans& spans, CompareSummary* out) {
  for (const MemoryEvent& e : m.memory) {
    if (spans.Find(e.ts) < 0) continue;
    out->has_memory = true;
    const uint32_t inst = ops.InstanceAt(e.track, e.ts);
    if (inst == kNoIndex) continue;
    OpNode& n = out->ops[ops.instance(inst).node];
    ++n.allocs;
    if (e.bytes > 0) n.alloc_bytes += e.bytes;
    if (e.bytes < 0) n.freed_bytes -= e.bytes;
    n.peak_allocated = std::max(n.peak_allocated, e.total_allocated);
  }
}

// Kernel names: the heaviest kept, the rest summed.
void TrimKernelNames(size_t max_names, CompareSummary* out) {
  std::sort(out->kernels.begin(), out->kernels.end(), [](const KernelRow& a, const KernelRow& b) { return a.ns > b.ns; });
  if (out->kernels.size() <= max_names) return;
  for (size_t k = max_names; k < out->kernels.size(); ++k) {
    out->other_kernels.count += out->kernels[k].count;
    out->other_kernels.ns += out->kernels[k].ns;
  }
  out->kernels.resize(max_names);
}

void AddWarnings(const SummaryOptions& options, CompareSummary* out) {
  if (out->folded_instances > 0) {
    out->warnings.push_back(fmt::format(
        "{} operator instances beyond the first {} template nodes were folded into their parents", out->folded_instances,
        options.max_nodes));
  }
  if (!out->steps.dropped.empty()) {
    out->warnings.push_back(fmt::format("{} of {} steps left out as slow outliers (steps {})", out->steps.dropped.size(),
                                        out->steps.dropped.size() + out->steps.kept(), fmt::join(out->steps.dropped, ", ")));
  }
}

}  // namespace

std::string SizeBucketLabel(int bucket) {
  if (bucket < 0) return "size unknown";
  static const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  auto at = [](int power16) -> std::string {  // 1 KiB x 16^power16
    const int log2 = 10 + 4 * power16;
    return fmt::format("{} {}", 1 << (log2 % 10), kUnits[log2 / 10 - 1]);
  };
  if (bucket == 0) return "< 1 KiB";
  return fmt::format("{} - {}", at(bucket - 1), at(bucket));
}

int SizeBucket(int64_t bytes) {
  int bucket = 0;
  for (int64_t limit = 1024; bytes >= limit && bucket < 8; limit *= 16) ++bucket;
  return bucket;
}

StatusOr<CompareSummary> BuildCompareSummary(const TraceModel& m, const RankSummary& r, const CommPatterns* patterns,
                                             const SummaryOptions& options, RankIntermediates* intermediates) {
  const auto started = std::chrono::steady_clock::now();
  if (r.window_mode != WindowMode::kSteps || r.steps.empty()) {
    return InvalidArgument(
        "{}: the trace has no profiler steps (ProfilerStep#N), and no iterations could be derived from optimizer "
        "steps, DataLoader or a repeating operator: compare needs steps to compare like with like (record with "
        "torch.profiler's schedule and call prof.step() every iteration, or trace with rankscope)",
        m.path);
  }
  CompareSummary out;
  const std::vector<ProfilerStep> all_steps = intermediates ? std::move(intermediates->steps) : FindProfilerSteps(m);
  const std::vector<uint32_t> order = intermediates ? std::move(intermediates->order) : SlicesByStart(m);
  StatusOr<StepContext> ctx = SelectSteps(m, r, all_steps, order, options, &out);
  if (!ctx.ok()) return ctx.status();

  OpTreeBuilder ops(m, &out, options.max_nodes);
  BuildTrees(m, *ctx, order, ops, &out);

  std::vector<GpuActivity> acts;
  if (intermediates) {
    acts = std::move(intermediates->activities);
  } else {
    static const CommPatterns kNoPatterns;
    ActivityClassifier classifier(m, patterns ? *patterns : kNoPatterns);
    acts = CollectGpuActivities(m, classifier);
  }
  std::vector<ActivityFacts> facts;
  const int64_t longest = ActivityPass(m, r, ops, *ctx, options, &out).Run(acts, &facts);
  AttributeSteps(m, r, ops, *ctx, acts, facts, longest, options, &out);
  AddMemoryEvents(m, ops, ctx->spans, &out);
  TrimKernelNames(options.max_kernel_names, &out);
  FinishTotals(&out);
  AddWarnings(options, &out);
  out.rank = {r.path, r.rank.rank, r.has_gpu, r.device_names, r.memory.devices, r.warnings};
  out.build_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - started).count();
  return out;
}

}  // namespace rankscope::compare

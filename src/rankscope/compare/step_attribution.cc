#include "rankscope/compare/step_attribution.h"

#include <algorithm>

#include "rankscope/analysis/interval_set.h"
#include "rankscope/compare/priority_sweep.h"

namespace rankscope::compare {
namespace {

// Levels of SweepClaims, highest priority first (CompareSummary's file comment).
enum Level : uint8_t {
  kGpuCompute = 0,  // = ActivityClass values 0..3
  kGpuCommunication = 1,
  kGpuMemory = 2,
  kGpuSync = 3,
  kStepThreadOp = 4,
  kOtherThreadOp = 5,
  kCpuCollective = 6,
  kStepThreadAnnotation = 7,
  kStepThreadGap = 8,
  kNumLevels = 9,
};

// The instances of `track` that start in [start, end), in start order.
std::pair<size_t, size_t> InstancesIn(const OpTreeBuilder& ops, uint32_t track, int64_t start, int64_t end) {
  const std::vector<uint32_t>& list = ops.TrackInstances(track);
  auto lo = std::lower_bound(list.begin(), list.end(), start,
                             [&](uint32_t i, int64_t t) { return ops.instance(i).start < t; });
  auto hi = std::lower_bound(lo, list.end(), end, [&](uint32_t i, int64_t t) { return ops.instance(i).start < t; });
  return {static_cast<size_t>(lo - list.begin()), static_cast<size_t>(hi - list.begin())};
}

// Self segments of a thread's instances within [lo, hi): each instant goes to the innermost
// instance covering it; `emit(a, b, instance)` gets kNoIndex where no instance runs.
template <typename Emit>
void SelfSegments(const OpTreeBuilder& ops, uint32_t track, int64_t lo, int64_t hi, Emit emit) {
  const auto [first, last] = InstancesIn(ops, track, lo, hi);
  const std::vector<uint32_t>& list = ops.TrackInstances(track);
  std::vector<uint32_t> stack;
  int64_t cursor = lo;
  auto out = [&](int64_t a, int64_t b, uint32_t inst) {
    a = std::max(a, lo);
    b = std::min(b, hi);
    if (b > a) emit(a, b, inst);
  };
  for (size_t k = first; k < last; ++k) {
    const OpInstance& inst = ops.instance(list[k]);
    while (!stack.empty() && ops.instance(stack.back()).end <= inst.start) {
      const int64_t end = ops.instance(stack.back()).end;
      out(cursor, end, stack.back());
      cursor = std::max(cursor, end);
      stack.pop_back();
    }
    out(cursor, inst.start, stack.empty() ? kNoIndex : stack.back());
    cursor = std::max(cursor, inst.start);
    stack.push_back(list[k]);
  }
  while (!stack.empty()) {
    const int64_t end = ops.instance(stack.back()).end;
    out(cursor, end, stack.back());
    cursor = std::max(cursor, end);
    stack.pop_back();
  }
  out(cursor, hi, kNoIndex);
}

// Busy union of the step's activities and the GPU idle split: an idle gap is host-bound when
// the activity that ends it was launched after the gap began (the GPU waited for the host).
void GpuIdleSplit(const AttributionInputs& in, const std::vector<uint32_t>& acts, const StepSpan& st, Breakdown* b) {
  const std::vector<GpuActivity>& all = *in.activities;
  std::vector<Interval> spans;
  for (uint32_t i : acts) spans.push_back({std::max(all[i].start, st.start), std::min(all[i].end, st.end)});
  const IntervalSet busy = IntervalSet::Union(spans);
  b->gpu_busy_ns += static_cast<double>(busy.Length());
  b->gpu_idle_ns += static_cast<double>((st.end - st.start) - busy.Length());
  int64_t cursor = st.start;
  auto gap = [&](int64_t a, int64_t e) {
    if (e <= a) return;
    // The first activity starting at or after the gap's end.
    auto it = std::lower_bound(all.begin(), all.end(), e, [](const GpuActivity& x, int64_t t) { return x.start < t; });
    bool host_bound = false;
    if (it != all.end() && it->launch != kNoSlice) host_bound = in.model->slices.ts[it->launch] >= a;
    (host_bound ? b->idle_host_bound_ns : b->idle_other_ns) += static_cast<double>(e - a);
  };
  for (const Interval& iv : busy.intervals()) {
    gap(cursor, iv.start);
    cursor = iv.end;
  }
  gap(cursor, st.end);
}

}  // namespace

void AttributeStep(const AttributionInputs& in, const StepSpan& st, CompareSummary* out,
                   std::vector<double>* collective_exposed) {
  const OpTreeBuilder& ops = *in.ops;
  const std::vector<GpuActivity>& all = *in.activities;
  const std::vector<ActivityFacts>& facts = *in.facts;
  Breakdown& b = out->breakdown;
  std::vector<Claim> claims;

  // GPU activities overlapping the step.
  std::vector<uint32_t> acts;
  auto first = std::lower_bound(all.begin(), all.end(), st.start - in.max_activity_ns,
                                [](const GpuActivity& a, int64_t t) { return a.start < t; });
  std::vector<Interval> comm_spans;
  for (auto it = first; it != all.end() && it->start < st.end; ++it) {
    if (it->end <= st.start) continue;
    const auto i = static_cast<uint32_t>(it - all.begin());
    acts.push_back(i);
    claims.push_back({it->start, it->end, i, static_cast<uint8_t>(it->cls)});
    const int c = static_cast<int>(facts[i].cls);
    b.class_ns[c] += static_cast<double>(std::min(it->end, st.end) - std::max(it->start, st.start));
    if (it->start >= st.start) b.class_count[c] += 1;
    if (it->cls == ActivityClass::kCommunication) comm_spans.push_back({it->start, it->end});
  }
  if (!all.empty()) GpuIdleSplit(in, acts, st, &b);

  // The step thread: innermost operator, annotation, or a gap (split by phase).
  SelfSegments(ops, st.track, st.start, st.end, [&](int64_t a, int64_t e, uint32_t inst) {
    if (inst != kNoIndex) {
      const OpInstance& x = ops.instance(inst);
      claims.push_back({a, e, x.node, x.in_cpu_op ? kStepThreadOp : kStepThreadAnnotation});
      return;
    }
    for (const PhasePiece& p : *st.phases) {
      const int64_t lo = std::max(a, p.start), hi = std::min(e, p.end);
      if (hi > lo) claims.push_back({lo, hi, static_cast<uint32_t>(p.phase), kStepThreadGap});
    }
  });
  // Other training threads: only their CPU ops count (host compute).
  for (uint32_t track : in.training_tracks) {
    if (track == st.track) continue;
    SelfSegments(ops, track, st.start, st.end, [&](int64_t a, int64_t e, uint32_t inst) {
      if (inst != kNoIndex && ops.instance(inst).in_cpu_op) claims.push_back({a, e, ops.instance(inst).node, kOtherThreadOp});
    });
  }
  // CPU collectives in flight.
  auto c0 = std::lower_bound(in.cpu_collectives.begin(), in.cpu_collectives.end(), st.start - in.max_activity_ns,
                             [](const CpuCollective& c, int64_t t) { return c.start < t; });
  for (auto it = c0; it != in.cpu_collectives.end() && it->start < st.end; ++it) {
    if (it->end <= st.start) continue;
    claims.push_back({it->start, it->end, it->index, kCpuCollective});
    comm_spans.push_back({it->start, it->end});
  }
  {
    std::vector<Interval> clipped;
    for (const Interval& iv : comm_spans) clipped.push_back({std::max(iv.start, st.start), std::min(iv.end, st.end)});
    b.comm_busy_ns += static_cast<double>(IntervalSet::Union(clipped).Length());
  }

  const std::vector<double> owned = SweepClaims(claims, st.start, st.end, kNumLevels);
  const size_t steps = out->steps.kept();
  const bool per_step = out->has_step_cells();
  auto step_cell = [&](std::vector<float>& cells, size_t index, double t) {
    if (per_step) cells[index * steps + st.index] += static_cast<float>(t);
  };
  for (size_t k = 0; k < claims.size(); ++k) {
    const double t = owned[k];
    if (t <= 0) continue;
    const Claim& c = claims[k];
    switch (c.level) {
      case kGpuCommunication:
        b.comm_exposed_ns += t;
        if (facts[c.owner].collective != kNoIndex) (*collective_exposed)[facts[c.owner].collective] += t;
        break;
      case kGpuCompute:
      case kGpuMemory:
      case kGpuSync:
        if (c.level == kGpuMemory) b.memory_exposed_ns += t;
        if (facts[c.owner].node != kNoIndex) {
          out->ops[facts[c.owner].node].attributed_device_ns += t;
          step_cell(out->op_step_cells, facts[c.owner].node, t);
        } else {
          out->unlinked_ns[static_cast<int>(facts[c.owner].cls)] += t;
          step_cell(out->unlinked_step_cells, static_cast<size_t>(facts[c.owner].cls), t);
          b.unlinked_gpu_ns += t;
        }
        break;
      case kStepThreadOp:
      case kOtherThreadOp:
      case kStepThreadAnnotation:
        out->ops[c.owner].attributed_host_ns += t;
        step_cell(out->op_step_cells, c.owner, t);
        break;
      case kCpuCollective:
        b.comm_exposed_ns += t;
        (*collective_exposed)[c.owner] += t;
        break;
      case kStepThreadGap:
        out->gap_ns[c.owner] += t;
        step_cell(out->gap_step_cells, c.owner, t);
        b.host_outside_ops_ns += t;
        break;
      default:
        break;
    }
  }
}

}  // namespace rankscope::compare

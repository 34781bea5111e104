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

// What the step's time is claimed by, before the priority sweep.
struct StepClaims {
  std::vector<Claim> claims;
  std::vector<uint32_t> activities;  // indices of the GPU activities overlapping the step
  std::vector<Interval> comm_spans;  // GPU and CPU collectives in flight
};

// GPU activities overlapping the step, with the per-class time and count of the breakdown.
void AddGpuClaims(const AttributionInputs& in, const StepSpan& st, StepClaims* sc, Breakdown* b) {
  const std::vector<GpuActivity>& all = *in.activities;
  auto first = std::lower_bound(all.begin(), all.end(), st.start - in.max_activity_ns,
                                [](const GpuActivity& a, int64_t t) { return a.start < t; });
  for (auto it = first; it != all.end() && it->start < st.end; ++it) {
    if (it->end <= st.start) continue;
    const auto i = static_cast<uint32_t>(it - all.begin());
    sc->activities.push_back(i);
    sc->claims.push_back({it->start, it->end, i, static_cast<uint8_t>(it->cls)});
    const int c = static_cast<int>((*in.facts)[i].cls);
    b->class_ns[c] += static_cast<double>(std::min(it->end, st.end) - std::max(it->start, st.start));
    if (it->start >= st.start) b->class_count[c] += 1;
    if (it->cls == ActivityClass::kCommunication) sc->comm_spans.push_back({it->start, it->end});
  }
}

// The step thread: innermost operator, annotation, or a gap (split by phase). Other training
// threads: only their CPU ops count (host compute).
void AddThreadClaims(const AttributionInputs& in, const StepSpan& st, StepClaims* sc) {
  const OpTreeBuilder& ops = *in.ops;
  SelfSegments(ops, st.track, st.start, st.end, [&](int64_t a, int64_t e, uint32_t inst) {
    if (inst != kNoIndex) {
      const OpInstance& x = ops.instance(inst);
      sc->claims.push_back({a, e, x.node, x.in_cpu_op ? kStepThreadOp : kStepThreadAnnotation});
      return;
    }
    for (const PhasePiece& p : *st.phases) {
      const int64_t lo = std::max(a, p.start), hi = std::min(e, p.end);
      if (hi > lo) sc->claims.push_back({lo, hi, static_cast<uint32_t>(p.phase), kStepThreadGap});
    }
  });
  for (uint32_t track : in.training_tracks) {
    if (track == st.track) continue;
    SelfSegments(ops, track, st.start, st.end, [&](int64_t a, int64_t e, uint32_t inst) {
      if (inst != kNoIndex && ops.instance(inst).in_cpu_op) {
        sc->claims.push_back({a, e, ops.instance(inst).node, kOtherThreadOp});
      }
    });
  }
}

// CPU collectives in flight.
void AddCpuCollectiveClaims(const AttributionInputs& in, const StepSpan& st, StepClaims* sc) {
  auto c0 = std::lower_bound(in.cpu_collectives.begin(), in.cpu_collectives.end(), st.start - in.max_activity_ns,
                             [](const CpuCollective& c, int64_t t) { return c.start < t; });
  for (auto it = c0; it != in.cpu_collectives.end() && it->start < st.end; ++it) {
    if (it->end <= st.start) continue;
    sc->claims.push_back({it->start, it->end, it->index, kCpuCollective});
    sc->comm_spans.push_back({it->start, it->end});
  }
}

// Adds what each claim owns after the sweep to the breakdown, operators, gaps and collectives.
class OwnedTime {
 public:
  OwnedTime(const AttributionInputs& in, CompareSummary* out, std::vector<double>* exposed)
      : facts_(*in.facts), out_(out), b_(out->breakdown), exposed_(*exposed) {}

  void Add(const Claim& c, double t) {
    switch (c.level) {
      case kGpuCommunication:
        b_.comm_exposed_ns += t;
        if (facts_[c.owner].collective != kNoIndex) exposed_[facts_[c.owner].collective] += t;
        break;
      case kGpuCompute:
      case kGpuMemory:
      case kGpuSync:
        if (c.level == kGpuMemory) b_.memory_exposed_ns += t;
        AddDevice(facts_[c.owner], t);
        break;
      case kStepThreadOp:
      case kOtherThreadOp:
      case kStepThreadAnnotation:
        out_->ops[c.owner].attributed_host_ns += t;
        break;
      case kCpuCollective:
        b_.comm_exposed_ns += t;
        exposed_[c.owner] += t;
        break;
      case kStepThreadGap:
        out_->gap_ns[c.owner] += t;
        b_.host_outside_ops_ns += t;
        break;
      default:
        break;
    }
  }

 private:
  void AddDevice(const ActivityFacts& f, double t) {
    if (f.node != kNoIndex) {
      out_->ops[f.node].attributed_device_ns += t;
      return;
    }
    out_->unlinked_ns[static_cast<int>(f.cls)] += t;
    b_.unlinked_gpu_ns += t;
  }

  const std::vector<ActivityFacts>& facts_;
  CompareSummary* out_;
  Breakdown& b_;
  std::vector<double>& exposed_;
};

}  // namespace

void AttributeStep(const AttributionInputs& in, const StepSpan& st, CompareSummary* out,
                   std::vector<double>* collective_exposed) {
  Breakdown& b = out->breakdown;
  StepClaims sc;
  AddGpuClaims(in, st, &sc, &b);
  if (!in.activities->empty()) GpuIdleSplit(in, sc.activities, st, &b);
  AddThreadClaims(in, st, &sc);
  AddCpuCollectiveClaims(in, st, &sc);
  std::vector<Interval> clipped;
  for (const Interval& iv : sc.comm_spans) clipped.push_back({std::max(iv.start, st.start), std::min(iv.end, st.end)});
  b.comm_busy_ns += static_cast<double>(IntervalSet::Union(clipped).Length());

  const std::vector<double> owned = SweepClaims(sc.claims, st.start, st.end, kNumLevels);
  OwnedTime add(in, out, collective_exposed);
  for (size_t k = 0; k < sc.claims.size(); ++k) {
    if (owned[k] > 0) add.Add(sc.claims[k], owned[k]);
  }
}

}  // namespace rankscope::compare

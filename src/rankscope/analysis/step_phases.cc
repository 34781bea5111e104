#include "rankscope/analysis/step_phases.h"

#include <algorithm>

#include "rankscope/analysis/work_signature.h"

namespace rankscope {
namespace {

enum class Marker : uint8_t { kOptimizer, kData, kBackward, kForward, kNone };

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool EndsWith(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

Marker MarkerOf(ActivityKind c, std::string_view name) {
  if (c == ActivityKind::kPythonFrame) return StartsWith(name, "nn.Module: ") ? Marker::kForward : Marker::kNone;
  if (c != ActivityKind::kAnnotation && c != ActivityKind::kHostOp) return Marker::kNone;
  if (StartsWith(name, "Optimizer.step#") || StartsWith(name, "Optimizer.zero_grad#")) return Marker::kOptimizer;
  if (StartsWith(name, "enumerate(DataLoader)#")) return Marker::kData;
  if (StartsWith(name, "autograd::engine::evaluate_function: ") || name == "## backward ##") return Marker::kBackward;
  if (name == "## forward ##" || (c == ActivityKind::kAnnotation && EndsWith(name, ".forward"))) return Marker::kForward;
  return Marker::kNone;
}

struct MarkerSpan {
  int64_t start, end;
  Marker kind;
};

using PhaseSpan = PhasePiece;

// Marker spans in start order (`order` is the slices in start order).
std::vector<MarkerSpan> CollectMarkers(const TraceModel& m, const std::vector<uint32_t>& order) {
  std::vector<MarkerSpan> out;
  const SliceTable& s = m.slices;
  // Autograd's own tags: "Fwd thread id" is 0 on forward ops and the forward thread on backward
  // ops (older traces have no evaluate_function ops, only these).
  std::vector<Marker> autograd(s.size(), Marker::kNone);
  for (uint32_t i : m.forward_ops) autograd[i] = Marker::kForward;
  for (uint32_t i : m.backward_ops) autograd[i] = Marker::kBackward;
  for (const uint32_t i : order) {
    Marker k = MarkerOf(s.kind[i], m.Str(s.name[i]));
    if (k == Marker::kNone) k = autograd[i];
    if (k != Marker::kNone) out.push_back({s.ts[i], s.ts[i] + s.dur[i], k});
  }
  return out;
}

// The phase spans of one step [s, e), lowest priority first (later spans win).
void StepPhaseSpans(const std::vector<MarkerSpan>& markers, int64_t s, int64_t e, std::vector<PhaseSpan>* out) {
  out->clear();
  auto first = std::lower_bound(markers.begin(), markers.end(), s, [](const MarkerSpan& m, int64_t t) { return m.start < t; });
  int64_t bwd_lo = INT64_MAX, bwd_hi = INT64_MIN, fwd_lo = INT64_MAX, fwd_hi = INT64_MIN;
  std::vector<PhaseSpan> data_opt;
  for (auto it = first; it != markers.end() && it->start < e; ++it) {
    const int64_t end = std::min(it->end, e);
    switch (it->kind) {
      case Marker::kBackward: bwd_lo = std::min(bwd_lo, it->start); bwd_hi = std::max(bwd_hi, end); break;
      case Marker::kForward: fwd_lo = std::min(fwd_lo, it->start); fwd_hi = std::max(fwd_hi, end); break;
      case Marker::kData: data_opt.push_back({it->start, end, StepPhase::kDataLoading}); break;
      case Marker::kOptimizer: data_opt.push_back({it->start, end, StepPhase::kOptimizer}); break;
      case Marker::kNone: break;
    }
  }
  const bool has_bwd = bwd_lo < bwd_hi;
  int64_t f_start = fwd_lo, f_end = has_bwd ? bwd_lo : fwd_hi;
  if (fwd_lo > fwd_hi) {
    // No forward markers: forward is what lies between the data loading / zero_grad before it
    // and the backward pass (without one: the last optimizer span, e.g. Optimizer.step).
    int64_t limit = has_bwd ? bwd_lo : e;
    if (!has_bwd) {
      for (const PhaseSpan& p : data_opt) {
        if (p.phase == StepPhase::kOptimizer && p.start > s) limit = p.start;  // spans are in start order
      }
    }
    f_start = s;
    for (const PhaseSpan& p : data_opt) {
      if (p.end <= limit) f_start = std::max(f_start, p.end);
    }
    f_end = limit;
  }
  if (f_end > f_start) out->push_back({f_start, f_end, StepPhase::kForward});
  if (has_bwd) out->push_back({bwd_lo, bwd_hi, StepPhase::kBackward});
  for (const PhaseSpan& p : data_opt) {
    if (p.phase == StepPhase::kDataLoading) out->push_back(p);
  }
  for (const PhaseSpan& p : data_opt) {
    if (p.phase == StepPhase::kOptimizer) out->push_back(p);
  }
}

// Splits [s, e) into pieces with one phase each (the highest-priority span covering it).
void Flatten(const std::vector<PhaseSpan>& spans, int64_t s, int64_t e, std::vector<PhaseSpan>* pieces) {
  pieces->clear();
  std::vector<int64_t> cuts = {s, e};
  for (const PhaseSpan& p : spans) {
    cuts.push_back(std::clamp(p.start, s, e));
    cuts.push_back(std::clamp(p.end, s, e));
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  for (size_t i = 0; i + 1 < cuts.size(); ++i) {
    StepPhase phase = StepPhase::kOther;
    for (const PhaseSpan& p : spans) {  // later spans have higher priority
      if (p.start <= cuts[i] && cuts[i + 1] <= p.end) phase = p.phase;
    }
    pieces->push_back({cuts[i], cuts[i + 1], phase});
  }
}

StepPhase PhaseAt(const std::vector<PhaseSpan>& pieces, int64_t t) {
  auto it = std::upper_bound(pieces.begin(), pieces.end(), t, [](int64_t x, const PhaseSpan& p) { return x < p.end; });
  return it != pieces.end() && it->start <= t ? it->phase : StepPhase::kOther;
}

}  // namespace

std::string_view StepPhaseName(StepPhase p) {
  switch (p) {
    case StepPhase::kDataLoading: return "data_loading";
    case StepPhase::kForward: return "forward";
    case StepPhase::kBackward: return "backward";
    case StepPhase::kOptimizer: return "optimizer";
    case StepPhase::kOther: return "other";
  }
  return "?";
}

std::vector<std::vector<PhasePiece>> StepPhaseTimelines(const TraceModel& m, const std::vector<uint32_t>& order,
                                                        const std::vector<ProfilerStep>& steps, const Window& w) {
  std::vector<std::vector<PhasePiece>> out;
  if (w.mode != WindowMode::kSteps) return out;
  const std::vector<MarkerSpan> markers = CollectMarkers(m, order);
  std::vector<PhaseSpan> spans;
  for (size_t k = w.first_step_index; k < w.end_step_index; ++k) {
    StepPhaseSpans(markers, steps[k].start, steps[k].end, &spans);
    Flatten(spans, steps[k].start, steps[k].end, &out.emplace_back());
  }
  return out;
}

std::vector<StepSummary> AnalyzeSteps(const TraceModel& m, const std::vector<uint32_t>& order,
                                      const std::vector<ProfilerStep>& steps, const Window& w,
                                      const std::vector<GpuActivity>& acts, const IntervalSet& host_compute,
                                      const IntervalSet& host_gpu_waits) {
  std::vector<StepSummary> out;
  if (w.mode != WindowMode::kSteps) return out;
  const std::vector<MarkerSpan> markers = CollectMarkers(m, order);
  // Linked activities by launch time, to hand each to the step that launched it.
  std::vector<std::pair<int64_t, uint32_t>> launched;
  for (uint32_t i = 0; i < acts.size(); ++i) {
    if (acts[i].launch != kNoSlice) launched.emplace_back(m.slices.ts[acts[i].launch], i);
  }
  std::sort(launched.begin(), launched.end());
  const int64_t origin = m.info.time_origin_ns;
  std::vector<PhaseSpan> spans, pieces;
  std::array<std::vector<Interval>, kNumStepPhases> by_phase;
  std::vector<Interval> all, compute, comm;
  const std::vector<WorkSignature> work = StepWorkSignatures(m, steps, w.first_step_index, w.end_step_index);
  for (size_t k = w.first_step_index; k < w.end_step_index; ++k) {
    const ProfilerStep& st = steps[k];
    StepSummary r;
    r.number = st.number;
    r.start_ns = origin + st.start;
    r.end_ns = origin + st.end;
    StepPhaseSpans(markers, st.start, st.end, &spans);
    Flatten(spans, st.start, st.end, &pieces);
    for (const PhaseSpan& p : pieces) r.cpu_phase_ns[static_cast<int>(p.phase)] += p.end - p.start;
    for (auto& v : by_phase) v.clear();
    all.clear();
    compute.clear();
    comm.clear();
    auto it = std::lower_bound(launched.begin(), launched.end(), std::make_pair(st.start, 0u));
    for (; it != launched.end() && it->first < st.end; ++it) {
      const GpuActivity& a = acts[it->second];
      by_phase[static_cast<int>(PhaseAt(pieces, it->first))].push_back({a.start, a.end});
      all.push_back({a.start, a.end});
      if (a.cls == ActivityClass::kCompute) compute.push_back({a.start, a.end});
      if (a.cls == ActivityClass::kCommunication) comm.push_back({a.start, a.end});
      r.gpu_start_ns = r.gpu_start_ns < 0 ? origin + a.start : std::min(r.gpu_start_ns, origin + a.start);
      r.gpu_end_ns = std::max(r.gpu_end_ns, origin + a.end);
    }
    for (int p = 0; p < kNumStepPhases; ++p) r.gpu_phase_ns[p] = IntervalSet::Union(by_phase[p]).Length();
    r.gpu_busy_ns = IntervalSet::Union(all).Length();
    r.compute_ns = IntervalSet::Union(compute).Length();
    r.communication_ns = IntervalSet::Union(comm).Length();
    r.host_compute_ns = host_compute.CoveredIn(st.start, st.end);
    r.host_gpu_wait_ns = host_gpu_waits.CoveredIn(st.start, st.end);
    r.work_signature = work[k - w.first_step_index].value;
    r.shaped_ops = work[k - w.first_step_index].shaped_ops;
    out.push_back(r);
  }
  return out;
}

}  // namespace rankscope

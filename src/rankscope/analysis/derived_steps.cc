#include "rankscope/analysis/derived_steps.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

namespace rankscope {
namespace {

constexpr size_t kMinDerivedSteps = 2;

bool IsCpuMarker(ActivityKind k) { return k == ActivityKind::kAnnotation || k == ActivityKind::kHostOp; }

// The CPU-side slices whose name starts with `prefix`, on the track that has most of them.
std::vector<uint32_t> MarkersOnMainTrack(const TraceModel& m, std::string_view prefix) {
  const SliceTable& s = m.slices;
  std::map<uint32_t, std::vector<uint32_t>> by_track;
  for (uint32_t i = 0; i < s.size(); ++i) {
    if (IsCpuMarker(s.kind[i]) && m.Str(s.name[i]).starts_with(prefix)) by_track[s.track[i]].push_back(i);
  }
  std::vector<uint32_t> best;
  for (auto& [track, v] : by_track) {
    if (v.size() > best.size()) best = std::move(v);
  }
  std::sort(best.begin(), best.end(), [&](uint32_t a, uint32_t b) { return s.ts[a] < s.ts[b]; });
  return best;
}

// Kineto's "Iteration Start: PyTorch Profiler" instant, when present.
std::optional<int64_t> IterationStart(const TraceModel& m) {
  for (size_t i = 0; i < m.instants.size(); ++i) {
    if (m.Str(m.instants.name[i]).starts_with("Iteration Start")) return m.instants.ts[i];
  }
  return std::nullopt;
}

std::vector<ProfilerStep> Between(const std::vector<int64_t>& bounds, uint32_t track) {
  std::vector<ProfilerStep> steps;
  for (size_t k = 1; k < bounds.size(); ++k) {
    if (bounds[k] > bounds[k - 1]) {
      steps.push_back({static_cast<int64_t>(steps.size()), bounds[k - 1], bounds[k], track});
    }
  }
  return steps;
}

std::vector<ProfilerStep> FromOptimizerSteps(const TraceModel& m) {
  const std::vector<uint32_t> opt = MarkersOnMainTrack(m, "Optimizer.step#");
  if (opt.empty()) return {};
  std::vector<int64_t> bounds;
  if (auto start = IterationStart(m); start && *start < m.slices.ts[opt.front()]) bounds.push_back(*start);
  for (uint32_t i : opt) bounds.push_back(m.slices.ts[i] + m.slices.dur[i]);
  return Between(bounds, m.slices.track[opt.front()]);
}

std::vector<ProfilerStep> FromStarts(const TraceModel& m, const std::vector<uint32_t>& markers) {
  if (markers.empty()) return {};
  std::vector<int64_t> bounds;
  for (uint32_t i : markers) bounds.push_back(m.slices.ts[i]);
  return Between(bounds, m.slices.track[markers.front()]);
}

// The most regular repeating top-level name of the track with the most CPU ops.
std::vector<uint32_t> RepeatingPattern(const TraceModel& m, std::string* name) {
  const SliceTable& s = m.slices;
  std::map<uint32_t, size_t> ops_per_track;
  for (uint32_t i = 0; i < s.size(); ++i) {
    if (s.kind[i] == ActivityKind::kHostOp) ++ops_per_track[s.track[i]];
  }
  if (ops_per_track.empty()) return {};
  const uint32_t track =
      std::max_element(ops_per_track.begin(), ops_per_track.end(), [](auto& a, auto& b) { return a.second < b.second; })
          ->first;
  std::vector<uint32_t> on_track;
  for (uint32_t i = 0; i < s.size(); ++i) {
    if (s.track[i] == track && IsCpuMarker(s.kind[i])) on_track.push_back(i);
  }
  std::sort(on_track.begin(), on_track.end(), [&](uint32_t a, uint32_t b) {
    return s.ts[a] != s.ts[b] ? s.ts[a] < s.ts[b] : s.dur[a] > s.dur[b];
  });
  std::map<StringId, std::vector<uint32_t>> top_level;
  int64_t covered_until = INT64_MIN;
  for (uint32_t i : on_track) {
    if (s.ts[i] < covered_until) continue;  // inside an earlier top-level slice
    covered_until = s.ts[i] + s.dur[i];
    top_level[s.name[i]].push_back(i);
  }
  double best_spread = INFINITY;
  std::vector<uint32_t> best;
  for (auto& [id, v] : top_level) {
    if (v.size() < kMinDerivedSteps + 1) continue;
    std::vector<double> gaps;
    for (size_t k = 1; k < v.size(); ++k) gaps.push_back(static_cast<double>(s.ts[v[k]] - s.ts[v[k - 1]]));
    double mean = 0, var = 0;
    for (double g : gaps) mean += g / static_cast<double>(gaps.size());
    for (double g : gaps) var += (g - mean) * (g - mean) / static_cast<double>(gaps.size());
    const double spread = mean > 0 ? std::sqrt(var) / mean : INFINITY;
    if (spread < best_spread || (spread == best_spread && v.size() > best.size())) {
      best_spread = spread;
      best = v;
      *name = std::string(m.Str(id));
    }
  }
  return best;
}

}  // namespace

const char* StepSourceName(StepSource s) {
  switch (s) {
    case StepSource::kProfilerStep: return "profiler_step";
    case StepSource::kOptimizerStep: return "optimizer_step";
    case StepSource::kDataLoader: return "dataloader";
    case StepSource::kPattern: return "repeating_pattern";
    case StepSource::kNone: return "none";
  }
  return "none";
}

StepDetection FindSteps(const TraceModel& m) {
  StepDetection d;
  d.steps = FindProfilerSteps(m);
  if (!d.steps.empty()) {
    d.source = StepSource::kProfilerStep;
    return d;
  }
  if (auto steps = FromOptimizerSteps(m); steps.size() >= kMinDerivedSteps) {
    d.steps = std::move(steps);
    d.source = StepSource::kOptimizerStep;
    return d;
  }
  if (auto steps = FromStarts(m, MarkersOnMainTrack(m, "enumerate(DataLoader)#")); steps.size() >= kMinDerivedSteps) {
    d.steps = std::move(steps);
    d.source = StepSource::kDataLoader;
    return d;
  }
  std::string name;
  if (auto steps = FromStarts(m, RepeatingPattern(m, &name)); steps.size() >= kMinDerivedSteps) {
    d.steps = std::move(steps);
    d.source = StepSource::kPattern;
    d.marker = std::move(name);
    return d;
  }
  return d;
}

}  // namespace rankscope

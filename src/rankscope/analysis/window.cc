#include "rankscope/analysis/window.h"

#include <algorithm>
#include <unordered_set>

#include "rankscope/base/parse_int.h"

namespace rankscope {
namespace {

// The CPU span falls back on every host event, and on events of no or unknown kind: a trace
// without steps or device activity may have little else.
bool InCpuSpan(ActivityKind k) { return IsHostActivity(k) || k == ActivityKind::kNone || k == ActivityKind::kOther; }

// Span of the slices `pick` accepts; nullopt when there are none.
template <typename Pick>
std::optional<std::pair<int64_t, int64_t>> SpanOf(const TraceModel& m, Pick pick) {
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (size_t i = 0; i < m.slices.size(); ++i) {
    if (!pick(i)) continue;
    lo = std::min(lo, m.slices.ts[i]);
    hi = std::max(hi, m.slices.ts[i] + m.slices.dur[i]);
  }
  if (lo > hi) return std::nullopt;
  return std::make_pair(lo, hi);
}

StatusOr<Window> StepsWindow(const std::vector<ProfilerStep>& steps, const WindowRequest& r) {
  Window w;
  w.mode = WindowMode::kSteps;
  size_t first = steps.size(), end = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    if (r.first_step && steps[i].number < *r.first_step) continue;
    if (r.last_step && steps[i].number > *r.last_step) continue;
    first = std::min(first, i);
    end = i + 1;
  }
  if (first >= end) {
    if (steps.empty()) return InvalidArgument("the trace has no ProfilerStep#N annotations to select steps from");
    return InvalidArgument("no profiler step in the requested range; the trace has steps {}..{}",
                           steps.front().number, steps.back().number);
  }
  w.first_step_index = first;
  w.end_step_index = end;
  w.start = steps[first].start;
  w.end = steps[first].end;
  for (size_t i = first; i < end; ++i) w.end = std::max(w.end, steps[i].end);
  if (w.end <= w.start) return InvalidArgument("the selected profiler steps have no duration");
  return w;
}

}  // namespace

std::optional<int64_t> ProfilerStepNumber(std::string_view name) {
  constexpr std::string_view kPrefix = "ProfilerStep#";
  if (name.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  return ParseInt(name.substr(kPrefix.size()));
}

std::vector<ProfilerStep> FindProfilerSteps(const TraceModel& m) {
  std::vector<ProfilerStep> steps;
  const SliceTable& s = m.slices;
  for (size_t i = 0; i < s.size(); ++i) {
    const ActivityKind c = s.kind[i];
    if (c != ActivityKind::kAnnotation && c != ActivityKind::kHostOp) continue;  // 2021 traces: Operator
    if (auto n = ProfilerStepNumber(m.Str(s.name[i]))) {
      steps.push_back({*n, s.ts[i], s.ts[i] + s.dur[i], s.track[i]});
    }
  }
  std::stable_sort(steps.begin(), steps.end(),
                   [](const ProfilerStep& a, const ProfilerStep& b) { return a.start < b.start; });
  std::unordered_set<int64_t> seen;
  std::erase_if(steps, [&](const ProfilerStep& st) { return !seen.insert(st.number).second; });
  return steps;
}

std::string_view WindowModeName(WindowMode mode) {
  switch (mode) {
    case WindowMode::kSteps: return "steps";
    case WindowMode::kGpuSpan: return "gpu_span";
    case WindowMode::kCpuSpan: return "cpu_span";
    case WindowMode::kExplicit: return "explicit";
  }
  return "?";
}

Status ParseStepRange(std::string_view text, WindowRequest* r) {
  const size_t colon = text.find(':');
  const std::string_view a = text.substr(0, colon);
  const std::string_view b = colon == std::string_view::npos ? a : text.substr(colon + 1);
  auto side = [&](std::string_view t, std::optional<int64_t>* out) -> bool {
    if (t.empty()) return colon != std::string_view::npos;  // "A:" and ":B" leave a side open
    *out = ParseInt(t);
    return out->has_value();
  };
  if (text.empty() || !side(a, &r->first_step) || !side(b, &r->last_step)) {
    return InvalidArgument("--steps {}: expected A:B, A:, :B or A (profiler step numbers)", text);
  }
  if (r->first_step && r->last_step && *r->first_step > *r->last_step) {
    return InvalidArgument("--steps {}: the first step is after the last", text);
  }
  r->kind = WindowRequest::Kind::kSteps;
  return OkStatus();
}

StatusOr<Window> SelectWindow(const TraceModel& m, const std::vector<ProfilerStep>& steps,
                              const WindowRequest& r) {
  using Kind = WindowRequest::Kind;
  if (r.kind == Kind::kExplicit) {
    if (r.explicit_end <= r.explicit_start) return InvalidArgument("the window is empty");
    Window w;
    w.mode = WindowMode::kExplicit;
    w.start = r.explicit_start;
    w.end = r.explicit_end;
    return w;
  }
  if (r.kind == Kind::kSteps || (r.kind == Kind::kAuto && !steps.empty())) return StepsWindow(steps, r);
  const SliceTable& s = m.slices;
  auto gpu = SpanOf(m, [&](size_t i) {
    const GpuActivityInfo* g = m.GpuInfo(i);
    return g != nullptr && g->stream >= 0;
  });
  if (r.kind == Kind::kGpu && !gpu) return InvalidArgument("the trace has no GPU activity");
  if (r.kind != Kind::kCpu && gpu && gpu->second > gpu->first) {
    return Window{gpu->first, gpu->second, WindowMode::kGpuSpan};
  }
  auto cpu = SpanOf(m, [&](size_t i) { return InCpuSpan(s.kind[i]); });
  if (!cpu || cpu->second <= cpu->first) return InvalidArgument("the trace has no timed events to analyse");
  return Window{cpu->first, cpu->second, WindowMode::kCpuSpan};
}

}  // namespace rankscope

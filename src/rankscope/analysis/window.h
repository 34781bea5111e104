// Profiler steps and the analysis window W.
//
// W is, by default, the profiled steps: from the start of the first CPU-side ProfilerStep#N to
// the end of the last (a selection A:B keeps steps A..B). A trace without steps falls back to
// the span of its GPU activity, and a trace without GPU activity to the span of its CPU events.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rankscope/base/status.h"
#include "rankscope/ingest/trace_model.h"

namespace rankscope {

struct ProfilerStep {
  int64_t number = -1;  // N of ProfilerStep#N
  int64_t start = 0;    // trace clock, ns
  int64_t end = 0;
  uint32_t track = 0;   // the thread that ran the training loop
};

// "ProfilerStep#12" -> 12.
std::optional<int64_t> ProfilerStepNumber(std::string_view name);

// CPU-side ProfilerStep#N spans, by start time. The GPU-side copies (gpu_user_annotation) are
// not steps. A step number seen twice keeps its first span.
std::vector<ProfilerStep> FindProfilerSteps(const TraceModel& model);

enum class WindowMode : uint8_t { kSteps, kGpuSpan, kCpuSpan, kExplicit };
std::string_view WindowModeName(WindowMode mode);  // "steps", "gpu_span", "cpu_span", "explicit"

struct Window {
  int64_t start = 0;
  int64_t end = 0;  // exclusive
  WindowMode mode = WindowMode::kCpuSpan;
  // Steps inside W (indices into the FindProfilerSteps vector), when mode == kSteps.
  size_t first_step_index = 0;
  size_t end_step_index = 0;
  int64_t length() const { return end - start; }
  bool Contains(int64_t t) const { return t >= start && t < end; }
  // True when [a, b) matters for W: it overlaps W or starts in it (zero-length instances).
  bool Touches(int64_t a, int64_t b) const { return (b > start && a < end) || Contains(a); }
  // |[a, b) ∩ W|
  int64_t Clip(int64_t a, int64_t b) const {
    const int64_t lo = a > start ? a : start;
    const int64_t hi = b < end ? b : end;
    return hi > lo ? hi - lo : 0;
  }
};

// Which window the user asked for.
struct WindowRequest {
  enum class Kind : uint8_t { kAuto, kSteps, kGpu, kCpu, kExplicit };
  Kind kind = Kind::kAuto;
  std::optional<int64_t> first_step;  // --steps A:B (inclusive), either side optional
  std::optional<int64_t> last_step;
  int64_t explicit_start = 0;  // kExplicit, trace clock ns
  int64_t explicit_end = 0;
};

// Parses "A:B", "A:", ":B" or "A" into the request's step range.
Status ParseStepRange(std::string_view text, WindowRequest* request);

StatusOr<Window> SelectWindow(const TraceModel& model, const std::vector<ProfilerStep>& steps,
                              const WindowRequest& request);

}  // namespace rankscope

#include "rankscope/daemon/step_alignment.h"

#include <algorithm>
#include <cmath>

namespace rankscope::daemon {

int64_t EstimateCurrentStep(const ProcessInfo& p, Clock::time_point now) {
  if (p.step < 0) return 0;
  if (p.step_ms <= 0) return p.step;
  const double age_ms = std::chrono::duration<double, std::milli>(now - p.last_seen).count();
  // Bounded: step_ms comes from the collector (validated > 0, but it may be tiny).
  return p.step + static_cast<int64_t>(std::min(std::ceil(age_ms / p.step_ms), 1e12));
}

int64_t RoundUp(int64_t value, int64_t multiple) {
  if (multiple <= 1) return value;
  return (value + multiple - 1) / multiple * multiple;
}

int64_t AlignedStartStep(const std::vector<ProcessInfo>& procs, Clock::time_point now, int32_t roundup,
                         int64_t margin_steps) {
  int64_t furthest = 0;
  for (const auto& p : procs) furthest = std::max(furthest, EstimateCurrentStep(p, now));
  return RoundUp(furthest + margin_steps, roundup);
}

}  // namespace rankscope::daemon

#include "rankscope/daemon/hang_rule.h"

#include <algorithm>

#include <fmt/format.h>

namespace rankscope::daemon {

double StallThresholdS(double median_step_ms, const HangThresholds& t) {
  return std::max(t.min_stall_s, t.step_factor * median_step_ms / 1000.0);
}

std::optional<std::string> HangReason(const JobProgress& p, std::chrono::steady_clock::time_point now,
                                      const HangThresholds& t) {
  if (p.step < 1) return std::nullopt;
  const double stalled_s = std::chrono::duration<double>(now - p.last_progress).count();
  const double threshold = StallThresholdS(p.median_step_ms, t);
  if (stalled_s >= threshold) {
    return fmt::format("no step for {:.0f} s (threshold {:.0f} s: the larger of {:.0f} s and {:.0f} x the median step "
                       "of {:.0f} ms), at step {}", stalled_s, threshold, t.min_stall_s, t.step_factor, p.median_step_ms,
                       p.step);
  }
  if (p.max_fr_pending_s >= t.fr_pending_s) {
    return fmt::format("rank {} has had a collective open for {:.0f} s (threshold {:.0f} s; Flight Recorder), at "
                       "step {}", p.fr_pending_rank, p.max_fr_pending_s, t.fr_pending_s, p.step);
  }
  return std::nullopt;
}

}  // namespace rankscope::daemon

// When the daemon calls a job hung (docs/hang.md): no rank has completed a step for
// max(min_stall_s, step_factor x the median step time) — 5 minutes and 20 steps by default —
// or a rank has had a collective open (entered, not completed; from its Flight Recorder, sent
// with the heartbeat while steps have stopped) for fr_pending_s. A job that never completed a
// step is not judged: there is no step time to judge it by.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace rankscope::daemon {

struct HangThresholds {
  double min_stall_s = 300;
  double step_factor = 20;
  double fr_pending_s = 300;
};

struct JobProgress {
  int64_t step = -1;                                  // the furthest rank's completed steps
  std::chrono::steady_clock::time_point last_progress{};  // when some rank last completed a step
  double median_step_ms = 0;                          // over the job's ranks
  double max_fr_pending_s = -1;                       // the oldest open collective of any rank
  int32_t fr_pending_rank = -1;
};

double StallThresholdS(double median_step_ms, const HangThresholds& t);

// Why the job counts as hung at `now`, or nullopt.
std::optional<std::string> HangReason(const JobProgress& p, std::chrono::steady_clock::time_point now,
                                      const HangThresholds& t);

}  // namespace rankscope::daemon

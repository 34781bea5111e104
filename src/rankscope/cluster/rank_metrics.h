// The per-rank numbers cluster diagnosis compares, each normalised per step (or per window when
// some rank has no profiled steps), from a rank's summary alone.
//
// In synchronous training every rank's step takes as long as the slowest rank's, because the
// others wait for it inside collectives. What differs between ranks is how the step splits into
// waiting and everything else:
//  - communication wait = exposed communication: the time communication owns (GPU: instants in
//    which a communication kernel runs and no compute kernel does; CPU backends: instants in
//    which a CPU collective runs and the training threads run no CPU op). A rank that waits for
//    a late peer waits here.
//  - local time = step time - communication wait: the time the rank spends on its own work
//    (compute, data loading, host overheads, sleeping before a collective, ...). The slowest
//    local time sets the pace of the job; a rank whose local time stands out is the straggler.
// With steps, each number is the median over the rank's steps (of the step's duration, of the
// exposed time of the collectives it launched, of their difference, of each phase): a one-time
// stall in one step (first-call initialisation, the OS descheduling a process once) does not
// make a rank look slow. Without steps they are the window's totals.
#pragma once

#include <array>
#include <optional>
#include <vector>

#include "rankscope/analysis/rank_summary.h"

namespace rankscope {

struct RankMetrics {
  uint64_t steps = 0;          // steps in W (0: per-window numbers)
  double step_ns = 0;          // median step duration (|W| without steps)
  double mean_step_ns = 0;     // |W| / steps
  double comm_wait_ns = 0;     // median over steps of the step's exposed communication
  double local_ns = 0;         // median over steps of duration - exposed communication
  double compute_ns = 0;       // GPU compute busy per step (mean); CPU-only traces: host compute
  std::array<double, kNumStepPhases> cpu_phase_ns{};  // median per step
  std::array<double, kNumStepPhases> gpu_phase_ns{};  // median per step (GPU traces)
  std::optional<double> gpu_utilization;              // busy(all GPU activity) / |W|
};

// Whether every rank has steps: then numbers are per step, else per window.
bool PerStep(const std::vector<RankSummary>& ranks);

RankMetrics ComputeRankMetrics(const RankSummary& r, bool per_step);

}  // namespace rankscope

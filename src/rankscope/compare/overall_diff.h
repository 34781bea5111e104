// The overall breakdown of two runs of one rank, per step: the step, GPU compute by kernel
// class, communication, memory operations, GPU idle (host-bound / other) and the host phases;
// the noise band both runs' step-to-step variation allows; and what the numbers say together
// (the GPU changed but the step did not, or the other way round).
#pragma once

#include <vector>

#include "rankscope/compare/compare_result.h"
#include "rankscope/compare/compare_summary.h"

namespace rankscope::compare {

StepStats ComputeStepStats(const CompareSummary& s);

// Noise band of the difference of two runs' mean step times (docs/compare.md "Noise"): the
// standard error of the difference of means, sqrt(sd_b^2 / n_b + sd_n^2 / n_n), from each run's
// step-to-step variation (sample standard deviation over its kept steps), times Student's t with
// the normal's three-sigma tail at Welch's degrees of freedom (3.0 with many steps, 4.1 with
// ten a side of which one varies).
double NoiseBand(const StepStats& base, const StepStats& neu);

std::vector<OverallRow> BuildOverall(const CompareSummary& base, const CompareSummary& neu, double noise_ns);

std::vector<Observation> Observe(const CompareSummary& base, const CompareSummary& neu,
                                 const std::vector<OverallRow>& overall, double noise_ns);

}  // namespace rankscope::compare

// Is a rank's excess over its peers the same extra work in every step, or the steps' draws?
//
// A slow worker carries its extra work into every step: its per-step excess over its peers is
// about the same each time. A per-step imbalance (variable batch or sequence lengths) makes
// the slowest rank change from step to step; over a few profiled steps one rank's median can
// still come out above its peers' by chance — with two data ranks and four steps, one rank is
// slower in three of them about a third of the time. Counting the steps a rank is slower in does
// not tell the two apart; the size of the excess against its step-to-step variation does. The
// test is Student's one-sample t-test of the per-step excess against zero (one-sided, 2.5 %):
// an imbalance's excess has expectation zero, a slow worker's does not.
#pragma once

#include <cstddef>
#include <vector>

namespace rankscope {

struct ConsistentExcess {
  size_t steps = 0;
  double mean_ns = 0;
  double sd_ns = 0;       // sample standard deviation over the steps
  double t = 0;           // mean / (sd / sqrt(steps)); infinite when every step has the same positive excess
  double t_critical = 0;  // Student's t, one-sided 2.5 %, steps - 1 degrees of freedom
  bool consistent = false;
};

// `excess_ns`: per step, the rank's value minus its peers' median in that step. Fewer than two
// steps: not consistent (nothing to test against).
ConsistentExcess TestConsistentExcess(const std::vector<double>& excess_ns);

}  // namespace rankscope

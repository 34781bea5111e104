// A sweep that gives every instant of a range to the claims of the highest priority covering
// it (k claims of that priority share it 1/k each). The GPU timeline's ownership rule
// (analysis/gpu_timeline.h) generalised to any number of levels, for compare's attribution of a
// step's time to GPU work, host operators, collectives and host gaps.
#pragma once

#include <cstdint>
#include <vector>

namespace rankscope::compare {

struct Claim {
  int64_t start = 0, end = 0;  // [start, end)
  uint32_t owner = 0;          // the caller's id
  uint8_t level = 0;           // 0 = highest priority
};

// Owned time per claim (same order as `claims`), within [lo, hi). Instants no claim covers are
// returned in *unclaimed_ns (may be null).
std::vector<double> SweepClaims(const std::vector<Claim>& claims, int64_t lo, int64_t hi, int levels,
                                int64_t* unclaimed_ns = nullptr);

}  // namespace rankscope::compare

// Order statistics of durations, computed the way pandas/numpy do (linear interpolation between
// closest ranks), so medians can be compared with HTA's and TraceLens's directly.
#pragma once

#include <cstdint>
#include <vector>

namespace rankscope {

// The q-quantile (0 <= q <= 1) of `values`, rounded to the nearest ns. Reorders `values`.
// Returns 0 for an empty vector.
int64_t Quantile(std::vector<int64_t>& values, double q);

struct DurationStats {
  uint64_t count = 0;
  int64_t total = 0;
  int64_t median = 0;
  int64_t p99 = 0;
  int64_t max = 0;
};

// Count, total, median, p99 and max of `values` (reordered).
DurationStats Summarize(std::vector<int64_t>& values);

}  // namespace rankscope

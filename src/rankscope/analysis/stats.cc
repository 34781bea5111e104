#include "rankscope/analysis/stats.h"

#include <algorithm>
#include <cmath>

namespace rankscope {

int64_t Quantile(std::vector<int64_t>& values, double q) {
  if (values.empty()) return 0;
  const double pos = q * static_cast<double>(values.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const double frac = pos - static_cast<double>(lo);
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(lo), values.end());
  const int64_t a = values[lo];
  if (frac == 0.0 || lo + 1 >= values.size()) return a;
  // The next order statistic is the minimum of the upper part.
  const int64_t b = *std::min_element(values.begin() + static_cast<std::ptrdiff_t>(lo) + 1, values.end());
  return static_cast<int64_t>(std::llround(static_cast<double>(a) + frac * static_cast<double>(b - a)));
}

DurationStats Summarize(std::vector<int64_t>& values) {
  DurationStats s;
  s.count = values.size();
  if (values.empty()) return s;
  for (int64_t v : values) {
    s.total += v;
    s.max = std::max(s.max, v);
  }
  s.median = Quantile(values, 0.5);
  s.p99 = Quantile(values, 0.99);
  return s;
}

}  // namespace rankscope

#include "rankscope/cluster/consistent_excess.h"

#include <cmath>
#include <limits>
#include <utility>

namespace rankscope {

double StudentT975(size_t degrees_of_freedom) {
  // The 0.975 quantile of Student's t distribution (standard tables).
  static constexpr std::pair<size_t, double> kTable[] = {
      {1, 12.706}, {2, 4.303}, {3, 3.182}, {4, 2.776}, {5, 2.571}, {6, 2.447}, {7, 2.365},
      {8, 2.306},  {9, 2.262}, {10, 2.228}, {12, 2.179}, {15, 2.131}, {20, 2.086}, {30, 2.042},
      {60, 2.000}, {120, 1.980}};
  double q = kTable[0].second;
  for (const auto& [df, value] : kTable) {
    if (df > degrees_of_freedom) break;
    q = value;
  }
  return degrees_of_freedom > 120 ? 1.960 : q;
}

ConsistentExcess TestConsistentExcess(const std::vector<double>& excess_ns) {
  ConsistentExcess c;
  c.steps = excess_ns.size();
  if (c.steps < 2) return c;
  double sum = 0;
  for (double e : excess_ns) sum += e;
  c.mean_ns = sum / static_cast<double>(c.steps);
  double squares = 0;
  for (double e : excess_ns) squares += (e - c.mean_ns) * (e - c.mean_ns);
  c.sd_ns = std::sqrt(squares / static_cast<double>(c.steps - 1));
  const double standard_error = c.sd_ns / std::sqrt(static_cast<double>(c.steps));
  // Identical excesses (synthetic or exactly repeated work): any positive mean is consistent.
  c.t = standard_error > 0 ? c.mean_ns / standard_error
                           : (c.mean_ns > 0 ? std::numeric_limits<double>::infinity() : 0.0);
  c.t_critical = StudentT975(c.steps - 1);
  c.consistent = c.mean_ns > 0 && c.t > c.t_critical;
  return c;
}

}  // namespace rankscope

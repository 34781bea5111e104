#include "rankscope/cluster/consistent_excess.h"

#include <cmath>
#include <limits>

#include "rankscope/base/student_t.h"

namespace rankscope {

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

// The robust cross-rank outlier rule of docs/cluster.md: median and MAD of a
// metric over ranks, and "abnormal" = more than k·1.4826·MAD and more than a relative margin
// above (or, for two-sided metrics, away from) the median.
//
// Why both conditions: MAD alone flags tiny deviations when the peers agree to the nanosecond
// (MAD = 0, e.g. identical kernels on identical GPUs); the margin alone flags normal spread on
// noisy metrics. 1.4826 makes k·1.4826·MAD comparable to k standard deviations for normal data.
// Against one other value (the other rank of two, ComparedWith) there is no spread: the margin
// alone decides.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace rankscope {

inline constexpr double kMadToSigma = 1.4826;

struct RobustStats {
  double median = 0;
  double mad = 0;  // median absolute deviation from the median (not scaled)
  size_t count = 0;
};

// The median of integer times, exactly (the lower middle plus half the gap, rounded down, for
// an even count): absolute times in ns since 1970 do not survive a trip through a double.
// Reorders `values`; 0 for an empty vector.
int64_t ExactMedian(std::vector<int64_t>& values);

// Median (mean of the two middle values for an even count) and MAD of `values`.
RobustStats ComputeRobustStats(std::vector<double> values);

// ComputeRobustStats of a set of values with one of them left out, for each value in turn, from
// one sort instead of one pass over the others per value (comparing each of N ranks with its N-1
// peers). Gives exactly ComputeRobustStats's numbers: the same order statistics, the same sums.
class LeaveOneOutStats {
 public:
  explicit LeaveOneOutStats(std::vector<double> values);
  // The stats of the values without one occurrence of `value` (which must be one of them).
  RobustStats Without(double value);

 private:
  std::vector<double> sorted_;
  // Per median of the rest (at most three distinct ones): every value's absolute deviation
  // from it, sorted.
  std::vector<std::pair<double, std::vector<double>>> deviations_;
};

// ComputeRobustStats(rest).median, where rest is `sorted` (ascending) without one occurrence of
// each of `removed` (values of it, any order): the median of the others from one sort of all.
double MedianWithout(const std::vector<double>& sorted, std::vector<double> removed);

// What values[i] is compared with: the stats of all the values, or, of two, the other value alone
// (count 1; the median of two would sit halfway to the one being tested, and two have no spread).
RobustStats ComparedWith(const std::vector<double>& values, size_t i, const RobustStats& all);

struct OutlierRule {
  double k = 3.0;
  double margin = 0.10;

  // The smallest excess over the median that counts as abnormal.
  double Threshold(const RobustStats& s) const;
  // value - median > Threshold (slower / bigger than the peers), against at least three values or
  // against one other (by the margin alone: a pair).
  bool IsHigh(double value, const RobustStats& s) const;
  // value - median < -Threshold (lower than the peers).
  bool IsLow(double value, const RobustStats& s) const;
};

}  // namespace rankscope

#include "rankscope/cluster/robust_rule.h"

#include <algorithm>
#include <cmath>

namespace rankscope {
namespace {

double Median(std::vector<double>& v) {
  const size_t n = v.size();
  if (n == 0) return 0;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(n / 2);
  std::nth_element(v.begin(), mid, v.end());
  if (n % 2 == 1) return *mid;
  const double below = *std::max_element(v.begin(), mid);
  return (below + *mid) / 2;
}

}  // namespace

int64_t ExactMedian(std::vector<int64_t>& v) {
  const size_t n = v.size();
  if (n == 0) return 0;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(n / 2);
  std::nth_element(v.begin(), mid, v.end());
  if (n % 2 == 1) return *mid;
  const int64_t below = *std::max_element(v.begin(), mid);
  return below + (*mid - below) / 2;
}

RobustStats ComputeRobustStats(std::vector<double> values) {
  RobustStats s;
  s.count = values.size();
  if (values.empty()) return s;
  s.median = Median(values);
  for (double& v : values) v = std::fabs(v - s.median);
  s.mad = Median(values);
  return s;
}

double OutlierRule::Threshold(const RobustStats& s) const {
  return std::max(k * kMadToSigma * s.mad, margin * std::fabs(s.median));
}

bool OutlierRule::IsHigh(double value, const RobustStats& s) const {
  return s.count >= 3 && value - s.median > Threshold(s);
}

bool OutlierRule::IsLow(double value, const RobustStats& s) const {
  return s.count >= 3 && s.median - value > Threshold(s);
}

}  // namespace rankscope

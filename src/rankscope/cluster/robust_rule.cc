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

// Median's result for `sorted` without its element at `skip`.
double SortedMedianWithout(const std::vector<double>& sorted, size_t skip) {
  const size_t n = sorted.size() - 1;
  if (n == 0) return 0;
  auto at = [&](size_t i) { return sorted[i < skip ? i : i + 1]; };
  if (n % 2 == 1) return at(n / 2);
  return (at(n / 2 - 1) + at(n / 2)) / 2;
}

size_t PositionOf(const std::vector<double>& sorted, double value) {
  return static_cast<size_t>(std::lower_bound(sorted.begin(), sorted.end(), value) - sorted.begin());
}

}  // namespace

double MedianWithout(const std::vector<double>& sorted, std::vector<double> removed) {
  if (removed.size() >= sorted.size()) return 0;
  std::sort(removed.begin(), removed.end());
  std::vector<size_t> skip;  // the removed values' positions in `sorted`, ascending
  for (size_t i = 0; i < removed.size(); ++i) {
    skip.push_back(i > 0 && removed[i - 1] == removed[i] ? skip.back() + 1 : PositionOf(sorted, removed[i]));
  }
  auto at = [&](size_t i) {  // the i-th of the rest
    for (size_t p : skip) {
      if (p > i) break;
      ++i;
    }
    return sorted[i];
  };
  const size_t n = sorted.size() - removed.size();
  if (n % 2 == 1) return at(n / 2);
  return (at(n / 2 - 1) + at(n / 2)) / 2;
}

LeaveOneOutStats::LeaveOneOutStats(std::vector<double> values) : sorted_(std::move(values)) {
  std::sort(sorted_.begin(), sorted_.end());
}

RobustStats LeaveOneOutStats::Without(double value) {
  RobustStats s;
  if (sorted_.empty()) return s;
  s.count = sorted_.size() - 1;
  if (s.count == 0) return s;
  s.median = SortedMedianWithout(sorted_, PositionOf(sorted_, value));
  auto it = std::find_if(deviations_.begin(), deviations_.end(), [&](const auto& d) { return d.first == s.median; });
  if (it == deviations_.end()) {
    std::vector<double> d;
    d.reserve(sorted_.size());
    for (double v : sorted_) d.push_back(std::fabs(v - s.median));
    std::sort(d.begin(), d.end());
    deviations_.emplace_back(s.median, std::move(d));
    it = deviations_.end() - 1;
  }
  s.mad = SortedMedianWithout(it->second, PositionOf(it->second, std::fabs(value - s.median)));
  return s;
}

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
  return (s.count >= 3 || s.count == 1) && value - s.median > Threshold(s);
}

RobustStats ComparedWith(const std::vector<double>& values, size_t i, const RobustStats& all) {
  if (values.size() != 2) return all;
  return RobustStats{values[1 - i], 0, 1};
}

bool OutlierRule::IsLow(double value, const RobustStats& s) const {
  return s.count >= 3 && s.median - value > Threshold(s);
}

}  // namespace rankscope

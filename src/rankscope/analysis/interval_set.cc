#include "rankscope/analysis/interval_set.h"

#include <algorithm>

namespace rankscope {

IntervalSet IntervalSet::Union(std::vector<Interval>& intervals) {
  std::sort(intervals.begin(), intervals.end(),
            [](const Interval& x, const Interval& y) { return x.start < y.start; });
  IntervalSet set;
  for (const Interval& iv : intervals) set.Append(iv.start, iv.end);
  return set;
}

void IntervalSet::Append(int64_t start, int64_t end) {
  if (end <= start) return;
  if (!intervals_.empty() && start <= intervals_.back().end) {
    Interval& last = intervals_.back();
    if (end > last.end) {
      prefix_.back() += end - last.end;
      last.end = end;
    }
    return;
  }
  intervals_.push_back({start, end});
  prefix_.push_back((prefix_.empty() ? 0 : prefix_.back()) + (end - start));
}

namespace {

// First index in [from, n) whose element is not `before(x)`, searching outward from `from`
// (exponential then binary search): cheap when the answer is near.
template <typename Before>
size_t Gallop(const std::vector<Interval>& v, size_t from, Before before) {
  const size_t n = v.size();
  if (from >= n || !before(v[from])) return from;
  size_t lo = from, step = 1;  // before(v[lo]) holds
  while (lo + step < n && before(v[lo + step])) {
    lo += step;
    step *= 2;
  }
  const size_t hi = std::min(n, lo + step);  // !before(v[hi]) or hi == n
  return static_cast<size_t>(
      std::partition_point(v.begin() + static_cast<std::ptrdiff_t>(lo) + 1, v.begin() + static_cast<std::ptrdiff_t>(hi),
                           before) - v.begin());
}

}  // namespace

int64_t IntervalSet::SumBetween(size_t i, size_t j, int64_t a, int64_t b) const {
  if (i >= j) return 0;
  int64_t total = prefix_[j - 1] - (i == 0 ? 0 : prefix_[i - 1]);
  total -= std::max<int64_t>(0, a - intervals_[i].start);   // cut the part before a
  total -= std::max<int64_t>(0, intervals_[j - 1].end - b);  // and after b
  return total;
}

int64_t IntervalSet::CoveredIn(int64_t a, int64_t b) const {
  if (b <= a || intervals_.empty()) return 0;
  // First interval that ends after a, and the first that starts at or after b.
  auto first = std::upper_bound(intervals_.begin(), intervals_.end(), a,
                                [](int64_t t, const Interval& iv) { return t < iv.end; });
  auto last = std::lower_bound(first, intervals_.end(), b,
                               [](const Interval& iv, int64_t t) { return iv.start < t; });
  return SumBetween(static_cast<size_t>(first - intervals_.begin()), static_cast<size_t>(last - intervals_.begin()), a, b);
}

int64_t IntervalSet::CoveredInFrom(int64_t a, int64_t b, size_t* cursor) const {
  if (b <= a || intervals_.empty()) return 0;
  const size_t i = Gallop(intervals_, *cursor, [a](const Interval& iv) { return iv.end <= a; });
  const size_t j = Gallop(intervals_, i, [b](const Interval& iv) { return iv.start < b; });
  *cursor = i;
  return SumBetween(i, j, a, b);
}

int64_t IntersectionLength(const IntervalSet& a, const IntervalSet& b) {
  const auto& x = a.intervals();
  const auto& y = b.intervals();
  int64_t total = 0;
  size_t i = 0, j = 0;
  while (i < x.size() && j < y.size()) {
    const int64_t lo = std::max(x[i].start, y[j].start);
    const int64_t hi = std::min(x[i].end, y[j].end);
    if (hi > lo) total += hi - lo;
    (x[i].end < y[j].end) ? ++i : ++j;
  }
  return total;
}

}  // namespace rankscope

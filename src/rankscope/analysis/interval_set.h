// IntervalSet: a sorted union of disjoint half-open intervals with prefix sums, so that the
// covered length of any range is two binary searches away. The GPU busy set, a class's busy
// set and a function's on-stack set are all IntervalSets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rankscope {

struct Interval {
  int64_t start = 0;
  int64_t end = 0;  // exclusive
  int64_t length() const { return end - start; }
};

class IntervalSet {
 public:
  IntervalSet() = default;

  // The union of any intervals (unsorted, overlapping, empty ones ignored). Sorts the input.
  static IntervalSet Union(std::vector<Interval>& intervals);

  // Adds [start, end) after everything already in the set (start >= the current end is not
  // required: touching or overlapping the last interval extends it). For sweeps in time order.
  void Append(int64_t start, int64_t end);
  // Room for `n` intervals: a sweep that knows an upper bound avoids the copies (and the
  // doubled peak memory) of growing.
  void reserve(size_t n) {
    intervals_.reserve(n);
    prefix_.reserve(n);
  }

  int64_t Length() const { return prefix_.empty() ? 0 : prefix_.back(); }
  bool empty() const { return intervals_.empty(); }
  const std::vector<Interval>& intervals() const { return intervals_; }

  // |set ∩ [a, b)|
  int64_t CoveredIn(int64_t a, int64_t b) const;

  // The same for ranges queried in increasing order: `*cursor` (start at 0) remembers where the
  // previous query landed, so nearby queries cost O(log distance) instead of O(log n).
  int64_t CoveredInFrom(int64_t a, int64_t b, size_t* cursor) const;

 private:
  // Sum over intervals_[i..j) clipped to [a, b); i = first ending after a, j = first starting at/after b.
  int64_t SumBetween(size_t i, size_t j, int64_t a, int64_t b) const;

  std::vector<Interval> intervals_;
  std::vector<int64_t> prefix_;  // prefix_[i] = total length of intervals_[0..i]
};

// |a ∩ b|
int64_t IntersectionLength(const IntervalSet& a, const IntervalSet& b);

}  // namespace rankscope

#include "rankscope/analysis/interval_set.h"

#include <gtest/gtest.h>

#include "rankscope/analysis/stats.h"

namespace rankscope {
namespace {

TEST(IntervalSet, UnionAndCoveredIn) {
  std::vector<Interval> v = {{30, 40}, {0, 10}, {5, 15}, {15, 20}, {50, 50}};
  const IntervalSet s = IntervalSet::Union(v);
  ASSERT_EQ(s.intervals().size(), 2u);  // [0,20) and [30,40); touching intervals merge
  EXPECT_EQ(s.Length(), 30);
  EXPECT_EQ(s.CoveredIn(0, 100), 30);
  EXPECT_EQ(s.CoveredIn(5, 35), 20);
  EXPECT_EQ(s.CoveredIn(20, 30), 0);
  EXPECT_EQ(s.CoveredIn(39, 39), 0);
  EXPECT_EQ(s.CoveredIn(-10, 1), 1);
  std::vector<Interval> w = {{10, 35}};
  EXPECT_EQ(IntersectionLength(s, IntervalSet::Union(w)), 15);
}

TEST(Stats, QuantilesInterpolateLikeNumpy) {
  std::vector<int64_t> v = {4, 1, 3, 2};
  EXPECT_EQ(Quantile(v, 0.5), 3);  // 2.5 rounds to 3
  std::vector<int64_t> w = {10, 20, 30, 40, 50, 60, 70, 80, 90, 100};
  EXPECT_EQ(Quantile(w, 0.99), 99);
  EXPECT_EQ(Quantile(w, 0.0), 10);
  std::vector<int64_t> e;
  EXPECT_EQ(Quantile(e, 0.5), 0);
}

}  // namespace
}  // namespace rankscope

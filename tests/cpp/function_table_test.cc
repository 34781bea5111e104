// The streaming FunctionAccumulator (CPU tables, instances in start order) gives exactly what
// AggregateSamples gives from the whole sample array: same counts, totals, quantiles, in-window
// and bottleneck time. It exists only to use less memory (issue 10's 10 M-event trace).
#include <gtest/gtest.h>

#include <random>

#include "rankscope/analysis/function_table.h"

namespace rankscope {
namespace {

TEST(FunctionAccumulator, SameStatisticsAsTheSampleArray) {
  std::mt19937 rng(7);
  const Window w{1000, 900'000};
  std::vector<Interval> busy_parts;
  for (int64_t t = 0; t < 1'000'000; t += 5000) busy_parts.push_back({t, t + static_cast<int64_t>(rng() % 4000)});
  const IntervalSet busy = IntervalSet::Union(busy_parts);
  std::vector<FunctionSample> samples;
  for (int i = 0; i < 20000; ++i) {
    const int64_t start = static_cast<int64_t>(rng() % 1'000'000);
    samples.push_back({static_cast<uint32_t>(rng() % 7), start, start + static_cast<int64_t>(rng() % 3000), 0});
  }
  std::vector<FunctionSample> by_start = samples;
  std::stable_sort(by_start.begin(), by_start.end(), [](const auto& a, const auto& b) { return a.start < b.start; });

  std::vector<FunctionStat> expected(7), got(7);
  AggregateSamples(samples, w, BottleneckRule::kStackWhileGpuIdle, busy, expected);
  FunctionAccumulator acc(w, busy);
  for (const FunctionSample& s : by_start) acc.Add(s.key, s.start, s.end);
  acc.Finish(got);
  for (size_t k = 0; k < 7; ++k) {
    EXPECT_EQ(got[k].count, expected[k].count) << k;
    EXPECT_EQ(got[k].total_ns, expected[k].total_ns) << k;
    EXPECT_EQ(got[k].median_ns, expected[k].median_ns) << k;
    EXPECT_EQ(got[k].p99_ns, expected[k].p99_ns) << k;
    EXPECT_EQ(got[k].max_ns, expected[k].max_ns) << k;
    EXPECT_EQ(got[k].in_window_ns, expected[k].in_window_ns) << k;
    EXPECT_DOUBLE_EQ(got[k].bottleneck_ns, expected[k].bottleneck_ns) << k;
    EXPECT_GT(got[k].count, 0u);
  }
}

}  // namespace
}  // namespace rankscope

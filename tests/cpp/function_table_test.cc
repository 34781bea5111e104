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
    EXPECT_EQ(got[k].stalls, expected[k].stalls) << k;
    EXPECT_EQ(got[k].stall_ns, expected[k].stall_ns) << k;
    EXPECT_GT(got[k].count, 0u);
  }
}

// A call stalls when it takes over kStallFactor x the p99 call and kMinStallNs more (a thread
// taken off its CPU for a time slice mid-call); its stalled time is what it took beyond the p99.
TEST(FunctionStalls, CallsFarBeyondTheP99CallStalled) {
  const Window w{0, 1'000'000'000};
  const IntervalSet none;
  auto stats = [&](const std::vector<int64_t>& durations) {
    std::vector<FunctionSample> samples;
    int64_t t = 0;
    for (const int64_t d : durations) {
      samples.push_back({0, t, t + d, 0});
      t += d + 1000;
    }
    std::vector<FunctionStat> rows(1);
    AggregateSamples(samples, w, BottleneckRule::kStackWhileGpuIdle, none, rows);
    return rows[0];
  };
  // 300 calls of 3-48 us (a few large ones, as an optimizer's calls on its largest parameters)
  // and three preempted ones: 36, 16 and 4.1 ms.
  std::vector<int64_t> durations;
  for (int i = 0; i < 300; ++i) durations.push_back(i % 50 == 0 ? 48'000 : 3'000);
  for (const int64_t d : {36'000'000, 16'000'000, 4'100'000}) durations.push_back(d);
  const FunctionStat s = stats(durations);
  EXPECT_EQ(s.p99_ns, 48'000);
  EXPECT_EQ(s.stalls, 3u);
  EXPECT_EQ(s.stall_ns, 36'000'000 + 16'000'000 + 4'100'000 - 3 * 48'000);
  // Not 10x the p99 call, or not a millisecond beyond it: no stall.
  durations.resize(300);
  durations.push_back(450'000);  // 9.4x
  EXPECT_EQ(stats(durations).stalls, 0u);
  std::vector<int64_t> tiny(300, 1'000);
  tiny.push_back(50'000);  // 50x a 1 us call, but 49 us beyond it
  EXPECT_EQ(stats(tiny).stalls, 0u);
  // Under 100 calls the p99 call is (almost) the longest: nothing stalls.
  std::vector<int64_t> few(50, 3'000);
  few.push_back(36'000'000);
  EXPECT_EQ(stats(few).stalls, 0u);
}

}  // namespace
}  // namespace rankscope

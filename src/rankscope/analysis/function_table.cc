#include "rankscope/analysis/function_table.h"

#include <algorithm>

#include "rankscope/analysis/definitions.h"
#include "rankscope/analysis/stats.h"

namespace rankscope {
namespace {

// |union of [start, end) of `group` (sorted by start) ∩ W ∖ busy|.
double StackTimeWhileIdle(const FunctionSample* begin, const FunctionSample* end, const Window& w,
                          const IntervalSet& busy) {
  double idle = 0;
  int64_t run_start = 0, run_end = INT64_MIN;
  size_t cursor = 0;  // runs come in time order
  auto flush = [&] {
    const int64_t a = std::max(run_start, w.start), b = std::min(run_end, w.end);
    if (b > a) idle += static_cast<double>((b - a) - busy.CoveredInFrom(a, b, &cursor));
  };
  for (const FunctionSample* s = begin; s != end; ++s) {
    if (s->start > run_end) {
      flush();
      run_start = s->start;
      run_end = s->end;
    } else {
      run_end = std::max(run_end, s->end);
    }
  }
  flush();
  return idle;
}

// Groups samples by key (a counting sort: keys are dense) and orders each group by start.
// Trace files list events mostly in time order, so most groups are already sorted.
void SortByKeyThenStart(std::vector<FunctionSample>& samples, size_t keys) {
  std::vector<uint32_t> offset(keys + 1, 0);
  for (const FunctionSample& s : samples) ++offset[s.key + 1];
  for (size_t k = 0; k < keys; ++k) offset[k + 1] += offset[k];
  std::vector<FunctionSample> sorted(samples.size());
  for (const FunctionSample& s : samples) sorted[offset[s.key]++] = s;
  auto by_start = [](const FunctionSample& a, const FunctionSample& b) { return a.start < b.start; };
  for (size_t i = 0; i < sorted.size();) {
    size_t j = i;
    while (j < sorted.size() && sorted[j].key == sorted[i].key) ++j;
    if (!std::is_sorted(sorted.begin() + i, sorted.begin() + j, by_start)) {
      std::sort(sorted.begin() + i, sorted.begin() + j, by_start);
    }
    i = j;
  }
  samples.swap(sorted);
}

// Count, total, median, p99 and max of a function's instances in W, and the calls that stalled
// (definitions.h kStallFactor) with their time beyond the p99 call. Reorders `durations`.
void FillDurationStats(std::vector<int64_t>& durations, FunctionStat& row) {
  const DurationStats d = Summarize(durations);
  row.count = d.count;
  row.total_ns = d.total;
  row.median_ns = d.median;
  row.p99_ns = d.p99;
  row.max_ns = d.max;
  const double bound = std::max(kStallFactor * static_cast<double>(d.p99), static_cast<double>(d.p99 + kMinStallNs));
  if (static_cast<double>(d.max) <= bound) return;  // the common case: one comparison
  for (const int64_t v : durations) {
    if (static_cast<double>(v) <= bound) continue;
    ++row.stalls;
    row.stall_ns += v - d.p99;
  }
}

}  // namespace

void AggregateSamples(std::vector<FunctionSample>& samples, const Window& w, BottleneckRule rule,
                      const IntervalSet& busy, std::vector<FunctionStat>& rows) {
  SortByKeyThenStart(samples, rows.size());
  std::vector<int64_t> durations;  // reused for every function
  for (size_t i = 0; i < samples.size();) {
    size_t j = i;
    while (j < samples.size() && samples[j].key == samples[i].key) ++j;
    FunctionStat& row = rows[samples[i].key];
    durations.clear();
    double owned = 0;
    for (size_t k = i; k < j; ++k) {
      const FunctionSample& s = samples[k];
      row.in_window_ns += w.Clip(s.start, s.end);
      owned += s.owned_ns;
      if (w.Contains(s.start)) durations.push_back(s.end - s.start);
    }
    row.bottleneck_ns = rule == BottleneckRule::kOwnedGpuTime
                            ? owned
                            : StackTimeWhileIdle(samples.data() + i, samples.data() + j, w, busy);
    FillDurationStats(durations, row);
    i = j;
  }
}

void FunctionAccumulator::CloseRun(State& s) const {
  const int64_t a = std::max(s.run_start, w_.start), b = std::min(s.run_end, w_.end);
  if (b > a) s.idle += static_cast<double>((b - a) - busy_.CoveredInFrom(a, b, &s.cursor));
}

void FunctionAccumulator::Add(uint32_t key, int64_t start, int64_t end) {
  if (key >= states_.size()) states_.resize(key + 1);
  State& s = states_[key];
  // As StackTimeWhileIdle, one instance at a time.
  if (start > s.run_end) {
    CloseRun(s);
    s.run_start = start;
    s.run_end = end;
  } else {
    s.run_end = std::max(s.run_end, end);
  }
  s.in_window += w_.Clip(start, end);
  if (w_.Contains(start)) s.durations.push_back(end - start);
}

void FunctionAccumulator::Finish(std::vector<FunctionStat>& rows) {
  for (size_t k = 0; k < states_.size(); ++k) {
    State& s = states_[k];
    CloseRun(s);
    FunctionStat& row = rows[k];
    row.in_window_ns += s.in_window;
    row.bottleneck_ns = s.idle;
    FillDurationStats(s.durations, row);
    std::vector<int64_t>().swap(s.durations);  // freed as soon as summarized
  }
}

FunctionTable FinishTable(std::vector<FunctionStat> rows, size_t max_rows, int64_t window_ns) {
  FunctionTable table;
  std::erase_if(rows, [](const FunctionStat& r) { return r.count == 0 && r.in_window_ns == 0; });
  auto worst_first = [](const FunctionStat& a, const FunctionStat& b) {
    if (a.bottleneck_ns != b.bottleneck_ns) return a.bottleneck_ns > b.bottleneck_ns;
    if (a.in_window_ns != b.in_window_ns) return a.in_window_ns > b.in_window_ns;
    return a.name != b.name ? a.name < b.name : a.detail < b.detail;
  };
  std::sort(rows.begin(), rows.end(), worst_first);
  for (const FunctionStat& r : rows) table.instances += r.count;
  const size_t cap = std::max(max_rows, kMaxKeptRows);
  if (rows.size() > max_rows) {
    // Beyond the worst rows, the ones that matter for comparing ranks: the largest in-window
    // times, down to the floor, within the cap.
    const int64_t floor = static_cast<int64_t>(kKeepShare * static_cast<double>(window_ns));
    std::stable_sort(rows.begin() + static_cast<std::ptrdiff_t>(max_rows), rows.end(),
                     [](const FunctionStat& a, const FunctionStat& b) { return a.in_window_ns > b.in_window_ns; });
    size_t keep = max_rows;
    while (keep < rows.size() && keep < cap && rows[keep].in_window_ns >= floor && rows[keep].in_window_ns > 0) ++keep;
    for (size_t i = keep; i < rows.size(); ++i) {
      table.omitted_in_window_ns += rows[i].in_window_ns;
      table.omitted_max_in_window_ns = std::max(table.omitted_max_in_window_ns, rows[i].in_window_ns);
    }
    table.omitted_rows = rows.size() - keep;
    rows.resize(keep);
    std::sort(rows.begin(), rows.end(), worst_first);
  }
  table.rows = std::move(rows);
  return table;
}

}  // namespace rankscope

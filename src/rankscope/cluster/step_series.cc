#include "rankscope/cluster/step_series.h"

#include <algorithm>
#include <map>
#include <set>

namespace rankscope {
namespace {

double Interpolated(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(pos);
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

}  // namespace

StepSeries AlignSteps(const std::vector<RankSummary>& ranks) {
  StepSeries out;
  if (ranks.empty()) return out;
  std::vector<std::map<int64_t, const StepSummary*>> by_number(ranks.size());
  for (size_t r = 0; r < ranks.size(); ++r) {
    if (ranks[r].steps.empty()) return out;
    for (const StepSummary& s : ranks[r].steps) by_number[r][s.number] = &s;
  }
  for (const auto& entry : by_number.front()) {
    const int64_t number = entry.first;
    const bool everywhere = std::all_of(by_number.begin(), by_number.end(),
                                        [number](const auto& m) { return m.count(number) > 0; });
    if (everywhere) out.numbers.push_back(number);
  }
  out.local_ns.assign(ranks.size(), {});
  out.cpu_phase_ns.assign(ranks.size(), {});
  out.gpu_phase_ns.assign(ranks.size(), {});
  for (int64_t number : out.numbers) {
    std::vector<double> durations;
    for (size_t r = 0; r < ranks.size(); ++r) {
      durations.push_back(static_cast<double>(by_number[r][number]->duration_ns()));
    }
    out.step_ns.push_back(PeersOf(durations, {}).median);
  }
  for (size_t r = 0; r < ranks.size(); ++r) {
    for (int64_t number : out.numbers) {
      const StepSummary& s = *by_number[r][number];
      out.local_ns[r].push_back(static_cast<double>(s.duration_ns() - s.comm_exposed_ns));
      PhaseValues cpu{}, gpu{};
      for (int p = 0; p < kNumStepPhases; ++p) {
        cpu[p] = static_cast<double>(s.cpu_phase_ns[p]);
        gpu[p] = static_cast<double>(s.gpu_phase_ns[p]);
      }
      out.cpu_phase_ns[r].push_back(cpu);
      out.gpu_phase_ns[r].push_back(gpu);
    }
  }
  return out;
}

PeerBand PeersOf(const std::vector<double>& values, const std::vector<bool>& excluded) {
  std::vector<double> v;
  for (size_t r = 0; r < values.size(); ++r) {
    if (r >= excluded.size() || !excluded[r]) v.push_back(values[r]);
  }
  std::sort(v.begin(), v.end());
  PeerBand b;
  b.count = v.size();
  b.median = Interpolated(v, 0.5);
  b.iqr = Interpolated(v, 0.75) - Interpolated(v, 0.25);
  return b;
}

double MeanStepNs(const StepSeries& series) {
  if (series.step_ns.empty()) return 0;
  double sum = 0;
  for (double d : series.step_ns) sum += d;
  return sum / static_cast<double>(series.step_ns.size());
}

std::vector<double> StepColumn(const std::vector<std::vector<double>>& v, size_t s) {
  std::vector<double> out;
  for (const std::vector<double>& row : v) out.push_back(s < row.size() ? row[s] : 0);
  return out;
}

}  // namespace rankscope

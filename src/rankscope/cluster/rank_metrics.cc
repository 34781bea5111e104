#include "rankscope/cluster/rank_metrics.h"

#include <algorithm>

#include "rankscope/analysis/stats.h"

namespace rankscope {
namespace {

double ExposedCommunication(const RankSummary& r) {
  if (r.has_gpu) return static_cast<double>(r.gpu.exposed_ns[static_cast<int>(ActivityClass::kCommunication)]);
  double exposed = 0;
  for (const CollectiveType& t : r.collective_types) exposed += t.exposed_ns;
  return exposed;
}

double MedianStep(const RankSummary& r) {
  std::vector<int64_t> d;
  for (const StepSummary& s : r.steps) d.push_back(s.duration_ns());
  return d.empty() ? static_cast<double>(r.window_ns()) : static_cast<double>(Quantile(d, 0.5));
}

}  // namespace

bool PerStep(const std::vector<RankSummary>& ranks) {
  return !ranks.empty() && std::all_of(ranks.begin(), ranks.end(), [](const RankSummary& r) { return !r.steps.empty(); });
}

RankMetrics ComputeRankMetrics(const RankSummary& r, bool per_step) {
  RankMetrics m;
  m.steps = per_step ? r.steps.size() : 0;
  const double n = per_step ? static_cast<double>(r.steps.size()) : 1.0;
  m.step_ns = static_cast<double>(r.window_ns()) / n;
  m.median_step_ns = per_step ? MedianStep(r) : m.step_ns;
  m.comm_wait_ns = ExposedCommunication(r) / n;
  m.local_ns = m.step_ns - m.comm_wait_ns;
  m.compute_ns = (r.has_gpu ? static_cast<double>(r.gpu.busy_ns[static_cast<int>(ActivityClass::kCompute)])
                            : static_cast<double>(r.host_compute_ns)) / n;
  if (per_step) {
    for (const StepSummary& s : r.steps) {
      for (int p = 0; p < kNumStepPhases; ++p) {
        m.cpu_phase_ns[p] += static_cast<double>(s.cpu_phase_ns[p]) / n;
        m.gpu_phase_ns[p] += static_cast<double>(s.gpu_phase_ns[p]) / n;
      }
    }
  }
  if (r.has_gpu && r.window_ns() > 0) {
    m.gpu_utilization = static_cast<double>(r.gpu.busy_ns_all) / static_cast<double>(r.window_ns());
  }
  return m;
}

}  // namespace rankscope

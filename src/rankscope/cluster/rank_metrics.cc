#include "rankscope/cluster/rank_metrics.h"

#include <algorithm>

#include "rankscope/cluster/robust_rule.h"

namespace rankscope {
namespace {

// The median over the rank's steps of f(step).
template <typename F>
double MedianOverSteps(const RankSummary& r, F f) {
  std::vector<double> v;
  for (const StepSummary& s : r.steps) v.push_back(static_cast<double>(f(s)));
  return ComputeRobustStats(std::move(v)).median;
}

}  // namespace

bool PerStep(const std::vector<RankSummary>& ranks) {
  return !ranks.empty() && std::all_of(ranks.begin(), ranks.end(), [](const RankSummary& r) { return !r.steps.empty(); });
}

RankMetrics ComputeRankMetrics(const RankSummary& r, bool per_step) {
  RankMetrics m;
  m.steps = per_step ? r.steps.size() : 0;
  const double n = per_step ? static_cast<double>(r.steps.size()) : 1.0;
  m.mean_step_ns = static_cast<double>(r.window_ns()) / n;
  m.compute_ns = (r.has_gpu ? static_cast<double>(r.gpu.busy_ns[static_cast<int>(ActivityClass::kCompute)])
                            : static_cast<double>(r.host_compute_ns)) / n;
  if (!per_step) {
    m.step_ns = m.mean_step_ns;
    m.comm_wait_ns = CommunicationExposedNs(r);
    m.local_ns = m.step_ns - m.comm_wait_ns;
  } else {
    m.step_ns = MedianOverSteps(r, [](const StepSummary& s) { return s.duration_ns(); });
    m.comm_wait_ns = MedianOverSteps(r, [](const StepSummary& s) { return s.comm_exposed_ns; });
    m.local_ns = MedianOverSteps(r, [](const StepSummary& s) { return s.duration_ns() - s.comm_exposed_ns; });
    for (int p = 0; p < kNumStepPhases; ++p) {
      m.cpu_phase_ns[p] = MedianOverSteps(r, [p](const StepSummary& s) { return s.cpu_phase_ns[p]; });
      m.gpu_phase_ns[p] = MedianOverSteps(r, [p](const StepSummary& s) { return s.gpu_phase_ns[p]; });
    }
  }
  if (r.has_gpu && r.window_ns() > 0) {
    m.gpu_utilization = static_cast<double>(r.gpu.busy_ns_all) / static_cast<double>(r.window_ns());
  }
  return m;
}

}  // namespace rankscope

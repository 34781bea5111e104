#include "rankscope/compare/overall_diff.h"

#include <cmath>
#include <set>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "rankscope/base/student_t.h"

namespace rankscope::compare {
namespace {

double PerStep(double sum, uint32_t kept) { return kept > 0 ? sum / kept : 0.0; }

const OverallRow* Find(const std::vector<OverallRow>& rows, std::string_view key) {
  for (const OverallRow& r : rows) {
    if (r.key == key) return &r;
  }
  return nullptr;
}

}  // namespace

StepStats ComputeStepStats(const CompareSummary& s) {
  StepStats st;
  const std::vector<int64_t>& d = s.steps.durations;
  st.kept = static_cast<uint32_t>(d.size());
  st.dropped = s.steps.dropped;
  if (d.empty()) return st;
  double sum = 0;
  for (int64_t x : d) sum += static_cast<double>(x);
  st.mean_ns = sum / static_cast<double>(d.size());
  if (d.size() > 1) {
    double sq = 0;
    for (int64_t x : d) sq += (static_cast<double>(x) - st.mean_ns) * (static_cast<double>(x) - st.mean_ns);
    st.sd_ns = std::sqrt(sq / static_cast<double>(d.size() - 1));
    const size_t half = d.size() / 2;
    double first = 0, second = 0;
    for (size_t i = 0; i < half; ++i) first += static_cast<double>(d[i]);
    for (size_t i = d.size() - half; i < d.size(); ++i) second += static_cast<double>(d[i]);
    st.drift_ns = std::fabs(first - second) / static_cast<double>(half);
  }
  return st;
}

double NoiseBand(const StepStats& b, const StepStats& n) {
  if (b.kept == 0 || n.kept == 0) return 0;
  const double vb = b.sd_ns * b.sd_ns, vn = n.sd_ns * n.sd_ns;
  const double se = std::sqrt(vb / b.kept + vn / n.kept);
  // Three standard errors are a 0.27 % chance only when the standard deviations are known; from
  // ten steps a side they are estimates, and identical runs land beyond 3 SE 1.5 % of the time.
  // Student's t at Welch's degrees of freedom keeps the 0.27 % for any number of steps.
  const double dof = WelchDegreesOfFreedom(vb, b.kept, vn, n.kept);
  return StudentTThreeSigma(static_cast<size_t>(dof)) * se;
}

std::vector<OverallRow> BuildOverall(const CompareSummary& base, const CompareSummary& neu, double noise) {
  std::vector<OverallRow> rows;
  const uint32_t kb = base.steps.kept(), kn = neu.steps.kept();
  const Breakdown& b = base.breakdown;
  const Breakdown& n = neu.breakdown;
  auto add = [&](std::string key, std::string label, std::string group, double bs, double ns, double bc = -1,
                 double nc = -1) {
    OverallRow r{std::move(key), std::move(label), std::move(group), PerStep(bs, kb), PerStep(ns, kn)};
    if (bc >= 0) r.base_count = PerStep(bc, kb);
    if (nc >= 0) r.new_count = PerStep(nc, kn);
    r.regression = r.delta_ns() > noise;
    r.improvement = r.delta_ns() < -noise;
    rows.push_back(std::move(r));
  };
  double bs = 0, ns = 0;
  for (int64_t d : base.steps.durations) bs += static_cast<double>(d);
  for (int64_t d : neu.steps.durations) ns += static_cast<double>(d);
  add("step", "step time", "step", bs, ns);
  const bool gpu = base.rank.has_gpu || neu.rank.has_gpu;
  if (gpu) {
    double bc = 0, nc = 0, bt = 0, nt = 0;
    for (int c = 0; c < kNumComputeKernelClasses; ++c) {
      bt += b.class_ns[c], nt += n.class_ns[c], bc += b.class_count[c], nc += n.class_count[c];
    }
    add("gpu.compute", "GPU compute", "gpu_compute", bt, nt, bc, nc);
    for (int c = 0; c < kNumComputeKernelClasses; ++c) {
      const auto cls = static_cast<KernelClass>(c);
      add(fmt::format("gpu.{}", KernelClassName(cls)), std::string(KernelClassLabel(cls)), "gpu_compute", b.class_ns[c],
          n.class_ns[c], b.class_count[c], n.class_count[c]);
    }
  }
  const int comm = static_cast<int>(KernelClass::kCommunication);
  add("comm.busy", "communication (busy)", "communication", b.comm_busy_ns, n.comm_busy_ns,
      gpu ? b.class_count[comm] : -1, gpu ? n.class_count[comm] : -1);
  add("comm.exposed", "communication exposed", "communication", b.comm_exposed_ns, n.comm_exposed_ns);
  if (gpu) {
    for (KernelClass c : {KernelClass::kMemcpy, KernelClass::kMemset}) {
      const int i = static_cast<int>(c);
      add(fmt::format("memory.{}", KernelClassName(c)), std::string(KernelClassLabel(c)), "memory", b.class_ns[i],
          n.class_ns[i], b.class_count[i], n.class_count[i]);
    }
    add("memory.exposed", "memory operations exposed", "memory", b.memory_exposed_ns, n.memory_exposed_ns);
    add("gpu.busy", "GPU busy", "gpu_idle", b.gpu_busy_ns, n.gpu_busy_ns);
    add("gpu.idle", "GPU idle", "gpu_idle", b.gpu_idle_ns, n.gpu_idle_ns);
    add("gpu.idle.host_bound", "GPU idle, host-bound", "gpu_idle", b.idle_host_bound_ns, n.idle_host_bound_ns);
    add("gpu.idle.other", "GPU idle, other", "gpu_idle", b.idle_other_ns, n.idle_other_ns);
  }
  for (int p = 0; p < kNumStepPhases; ++p) {
    const auto phase = static_cast<StepPhase>(p);
    add(fmt::format("phase.{}", StepPhaseName(phase)), fmt::format("host phase: {}", StepPhaseName(phase)), "host",
        b.phase_ns[p], n.phase_ns[p]);
  }
  add("host.outside_ops", "host time outside operators", "host", b.host_outside_ops_ns, n.host_outside_ops_ns);
  return rows;
}

namespace {

// "AMD" / "NVIDIA" / "" from deviceProperties' names ("AMD Instinct MI210", "AMD Radeon
// Graphics" on ROCm 6.2's MI250, "NVIDIA A100-PG509-200", "Tesla V100-SXM2-16GB").
std::string_view GpuVendor(const std::set<std::string>& devices) {
  for (const std::string& d : devices) {
    if (d.find("AMD") != std::string::npos || d.find("Radeon") != std::string::npos ||
        d.find("Instinct") != std::string::npos) {
      return "AMD";
    }
    if (d.find("NVIDIA") != std::string::npos || d.find("Tesla") != std::string::npos ||
        d.find("GeForce") != std::string::npos || d.find("Quadro") != std::string::npos) {
      return "NVIDIA";
    }
  }
  return "";
}

}  // namespace

std::vector<Observation> Observe(const CompareSummary& base, const CompareSummary& neu,
                                 const std::vector<OverallRow>& rows, double noise) {
  std::vector<Observation> out;
  const OverallRow* step = Find(rows, "step");
  const OverallRow* busy = Find(rows, "gpu.busy");
  const bool step_changed = step && std::fabs(step->delta_ns()) > noise;
  if (!step_changed) out.push_back({ObservationKind::kNoDifference, step ? step->delta_ns() : 0, noise});
  if (!busy) {
    out.push_back({ObservationKind::kNoGpu});
  } else {
    const bool gpu_changed = std::fabs(busy->delta_ns()) > noise;
    const OverallRow* idle = Find(rows, "gpu.idle");
    if (gpu_changed && !step_changed) {
      out.push_back({ObservationKind::kGpuChangedStepDidNot, busy->delta_ns(), step->delta_ns(),
                     idle && step->new_ns > 0 ? idle->new_ns / step->new_ns : 0});
    } else if (step_changed && !gpu_changed) {
      out.push_back({ObservationKind::kStepChangedGpuDidNot, step->delta_ns(), busy->delta_ns()});
    }
  }
  // deviceProperties lists every device of the host: compare the kinds, not the counts.
  const std::set<std::string> bd(base.rank.device_names.begin(), base.rank.device_names.end());
  const std::set<std::string> nd(neu.rank.device_names.begin(), neu.rank.device_names.end());
  if (bd != nd && !bd.empty() && !nd.empty()) {
    Observation o{ObservationKind::kDifferentHardware};
    o.base_text = fmt::format("{}", fmt::join(bd, ", "));
    o.new_text = fmt::format("{}", fmt::join(nd, ", "));
    const std::string_view bv = GpuVendor(bd), nv = GpuVendor(nd);
    o.value = !bv.empty() && !nv.empty() && bv != nv ? 1 : 0;  // vendors differ
    out.push_back(std::move(o));
  }
  if (base.modules.empty() != neu.modules.empty()) out.push_back({ObservationKind::kNoStacks});
  return out;
}

}  // namespace rankscope::compare

#include "rankscope/compare/rank_compare.h"

#include <fmt/format.h>

#include "rankscope/compare/comm_diff.h"
#include "rankscope/compare/delta_attribution.h"
#include "rankscope/compare/kernel_diff.h"
#include "rankscope/compare/memory_diff.h"
#include "rankscope/compare/module_diff.h"
#include "rankscope/compare/operator_diff.h"
#include "rankscope/compare/overall_diff.h"

namespace rankscope::compare {

// Below this share of BASE's operator time in paired operators, the runs look like different
// models: the operator-level differences are then mostly "added" and "removed".
inline constexpr double kFewAlignedShare = 0.5;

RankComparison CompareRanks(const CompareSummary& base, const CompareSummary& neu, const RankCompareOptions& options,
                            bool detailed) {
  RankComparison r;
  r.base_rank = base.rank.rank;
  r.new_rank = neu.rank.rank;
  r.base_path = base.rank.path;
  r.new_path = neu.rank.path;
  r.base_devices = base.rank.device_names;
  r.new_devices = neu.rank.device_names;
  r.base_steps = ComputeStepStats(base);
  r.new_steps = ComputeStepStats(neu);
  r.delta_ns = r.new_steps.mean_ns - r.base_steps.mean_ns;
  r.noise_ns = NoiseBand(r.base_steps, r.new_steps);
  r.beyond_noise = std::abs(r.delta_ns) > r.noise_ns;
  r.overall = BuildOverall(base, neu, r.noise_ns);
  r.observations = Observe(base, neu, r.overall, r.noise_ns);

  const TreeAlignment ops = AlignOperators(base, neu, options.align);
  AttributionResult attribution = AttributeDelta(base, neu, ops, r.noise_ns, options.max_differences);
  r.differences = std::move(attribution.differences);
  r.explained_ns = attribution.explained_ns;
  r.unexplained_ns = r.delta_ns - r.explained_ns;
  r.variation_ns = r.delta_ns - attribution.differences_total_ns;
  r.aligned_share = attribution.aligned_share;
  if (r.aligned_share < kFewAlignedShare) {
    r.observations.push_back({ObservationKind::kFewOperatorsAligned, r.aligned_share});
  }
  if (!ops.exact) r.observations.push_back({ObservationKind::kAlignmentApproximate});
  if (options.align.use_input_shapes && (!base.has_shapes || !neu.has_shapes)) {
    r.observations.push_back({ObservationKind::kNoShapes});
  }
  for (const std::string& w : base.warnings) r.warnings.push_back("BASE: " + w);
  for (const std::string& w : neu.warnings) r.warnings.push_back("NEW: " + w);
  for (const std::string& w : base.rank.warnings) r.warnings.push_back("BASE: " + w);
  for (const std::string& w : neu.rank.warnings) r.warnings.push_back("NEW: " + w);
  for (const auto& [label, steps] : {std::pair{"BASE", &r.base_steps}, std::pair{"NEW", &r.new_steps}}) {
    if (steps->kept < 2) {
      r.warnings.push_back(fmt::format(
          "{} has {} step(s) to compare: with fewer than two there is no step-to-step variation to measure the noise "
          "band by (0 here), so every difference counts as beyond noise; profile more steps (e.g. schedule active=5)",
          label, steps->kept));
    }
  }
  r.has_memory = base.has_memory && neu.has_memory;
  if (!detailed) return r;

  r.detailed = true;
  r.operators = BuildOperatorRows(base, neu, ops, options.max_kernels);
  r.operator_stats = BuildOperatorStats(base, neu, options.align);
  r.modules = BuildModuleRows(base, neu, AlignModules(base, neu), ops);
  r.kernels = BuildKernelRows(base, neu);
  r.kernel_classes = BuildKernelClassRows(base, neu);
  r.communication = BuildCommRows(base, neu);
  if (r.has_memory) {
    r.memory = BuildMemoryRows(base, neu);
    r.memory_peaks = BuildMemoryPeaks(base, neu);
  }
  return r;
}

}  // namespace rankscope::compare

// Attribution of one step's time (CompareSummary's file comment has the priority rule) and the
// step's overall breakdown: GPU time by kernel class, GPU idle split into host-bound and other,
// communication busy and exposed, memory exposed.
#pragma once

#include <vector>

#include "rankscope/analysis/gpu_activity.h"
#include "rankscope/analysis/step_phases.h"
#include "rankscope/compare/compare_summary.h"
#include "rankscope/compare/op_tree.h"

namespace rankscope::compare {

// What attribution needs to know about each GPU activity (same index as the activities).
struct ActivityFacts {
  uint32_t node = kNoIndex;         // the operator that launched it
  KernelClass cls = KernelClass::kElementwise;
  uint32_t collective = kNoIndex;   // communication: its RankSummary::collectives instance
};

// A CPU collective (gloo) instance: its span on the trace clock and RankSummary index.
struct CpuCollective {
  int64_t start = 0, end = 0;
  uint32_t index = 0;
};

struct AttributionInputs {
  const TraceModel* model = nullptr;
  const OpTreeBuilder* ops = nullptr;
  const std::vector<GpuActivity>* activities = nullptr;  // sorted by start
  const std::vector<ActivityFacts>* facts = nullptr;
  int64_t max_activity_ns = 0;                            // the longest activity (to find overlaps)
  std::vector<uint32_t> training_tracks;                  // threads that run CPU ops, not collectives
  std::vector<CpuCollective> cpu_collectives;             // sorted by start
};

struct StepSpan {
  uint32_t index = 0;   // among the kept steps
  int64_t start = 0, end = 0;
  uint32_t track = 0;   // the step thread
  const std::vector<PhasePiece>* phases = nullptr;
};

// Adds one step's cells to out->ops[].attributed_*, out->gap_ns, out->unlinked_ns and
// *collective_exposed (per RankSummary::collectives instance), and its breakdown to
// out->breakdown.
void AttributeStep(const AttributionInputs& in, const StepSpan& step, CompareSummary* out,
                   std::vector<double>* collective_exposed);

}  // namespace rankscope::compare

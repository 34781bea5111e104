// Uneven timing: a step-to-step imbalance among ranks that did the same work.
//
// A per_step_imbalance finding (parallel_findings.h) says that a different rank is the slowest
// in most steps while the ranks' medians are close, and advises balancing the input (batches or
// sequences of different sizes). That is right only when the ranks had different work to do.
// Where the traces recorded input shapes, the steps' work signatures (analysis/work_signature.h)
// say whether they did: when every rank of the finding ran the same operators on the same shapes
// in every step they share, no rank had more input, and the slowest rank of a step was slow for
// a reason outside the work — the CPU run queue of an oversubscribed host, a device several
// ranks share, garbage collection, clock changes. Measured on a clean 4-rank CPU job on 2 cores
// traced by plain torch.profiler (record_shapes, no rankscope collector): identical signatures
// on every rank and step, and the per_step_imbalance finding it had produced ("balance the
// work per step") was false; on the pipeline benchmark's imbalance recordings the imbalanced
// data ranks' signatures differ in every step, and the finding stays.
//
// Such a finding becomes uneven_timing: information, no saving (the time is real, but no change
// to the input recovers it), its imbalance evidence kept, and the host to check next. Without
// shapes on every rank, or with fewer than kMinSameWorkSteps shared steps, nothing changes.
// cpu_contention (cpu_contention.h), which says more (the run queue, measured), goes first.
#pragma once

#include <cstdint>
#include <vector>

#include "rankscope/analysis/rank_summary.h"
#include "rankscope/findings/finding.h"

namespace rankscope {

inline constexpr size_t kMinSameWorkSteps = 3;

// Whether `members` (rank indices) ran the same work in every step they all have, and in how
// many steps (0 when some step or rank has no signature, or the work differs).
struct SameWork {
  bool same = false;
  size_t steps = 0;
  int64_t shaped_ops = 0;  // per step, median over the steps
};
SameWork CompareStepWork(const std::vector<RankSummary>& ranks, const std::vector<uint32_t>& members);

// Turns the per_step_imbalance findings whose ranks did the same work into uneven_timing
// findings. `rank_numbers[i]` is ranks[i]'s rank number. Returns whether any changed (the
// findings then need ranking again).
bool AttributeImbalanceToTiming(const std::vector<RankSummary>& ranks, const std::vector<int64_t>& rank_numbers,
                                std::vector<Finding>* findings);

}  // namespace rankscope

// Uneven timing: a step-to-step imbalance that the ranks' work does not explain.
//
// A per_step_imbalance finding (parallel_findings.h) says that a different rank is the slowest
// in most steps while the ranks' medians are close, and advises balancing the input (batches or
// sequences of different sizes). That is right only when the ranks' work changed from step to
// step relative to each other. Where the traces recorded input shapes, the steps' work
// signatures (analysis/work_signature.h) say whether it did. It did not when either
//   - every rank ran the same operators on the same shapes in each step (the work may change
//     from step to step, but alike on every rank), or
//   - each rank ran the same operators on the same shapes in every step (the ranks' work may
//     differ, but by a constant: an FSDP shard of a dimension the world size does not divide,
//     a rank with an extra head) — a constant difference makes a slower rank, the same one in
//     every step, never a change of slowest rank, and the slow-rank rules judge it.
// Then the slowest rank of a step was slow for a reason outside the work — the CPU run queue of
// an oversubscribed host, a device several ranks share, garbage collection, clock changes.
// Measured on clean 4-rank CPU jobs on 2 cores traced by plain torch.profiler (record_shapes, no
// rankscope collector): a DDP job (identical signatures on every rank and step) and an FSDP2 job
// (rank 3's shard of a 10-row layer has 1 row, the others' 3: its signature differs from theirs,
// the same in every step); each had a false per_step_imbalance ("balance the work per step").
// On the pipeline benchmark's imbalance recordings the imbalanced data ranks' signatures change
// in every step, and the finding stays.
//
// A third way the work can fail to explain the imbalance, for traces where neither holds: an
// imbalance judged step by step (the slowest member of each step known) whose slowest member ran,
// in most steps, the work its peers ran in that step or the work it runs in most steps. Its input
// made it the slowest only in a step where its work differed from both. Measured on a clean
// 4-rank DDP job on 2 cores (record_shapes) whose rank 0 saved a checkpoint every fourth step:
// the checkpoint's operators changed rank 0's work in 3 of 12 steps, neither strict form held,
// and the host's imbalance was reported as an input imbalance ("balance the work per step");
// rank 0 was the slowest in one of those three steps.
//
// Such a finding becomes uneven_timing: information, no saving (the time is real, but no change
// to the input recovers it), its imbalance evidence kept, and the host to check next. With fewer
// than kMinSameWorkSteps shared steps nothing changes. Without shapes (record_shapes off,
// torch.profiler's default) the traces cannot tell: the finding stays, with `same_work` evidence
// of detail `no_shapes`, and its next step says what would tell (record_shapes, the CPU wait).
// cpu_contention (cpu_contention.h), which says more (the run queue, measured), goes first.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "rankscope/analysis/rank_summary.h"
#include "rankscope/findings/finding.h"

namespace rankscope {

inline constexpr size_t kMinSameWorkSteps = 3;

// Whether the work of `members` (rank indices) stayed the same relative to each other over the
// steps they all have: in each step alike on every member, or on each member alike in every step.
struct SameWork {
  bool same = false;
  bool no_shapes = false;           // some member's steps recorded no input shapes: the traces cannot say
  bool across_ranks = false;        // every member ran the same work as the others in each step
  size_t steps = 0;                 // steps compared (0 when not the same)
  int64_t shaped_ops = 0;           // per step, median over the members and steps
  std::vector<uint32_t> own_work;   // !across_ranks: the members whose (constant) work differs
                                    // from the one most members share (all when none is shared by most)
  bool by_slowest = false;          // neither form held; the slowest member's work explains too few steps
  size_t explained_steps = 0;       // by_slowest: steps whose slowest member ran work of its own
};
// `only_steps`: only these step numbers (those the imbalance was judged on); null: every step.
// `slowest`: step number -> position in `members` of that step's slowest member; with it, the
// third form (above) is tried when neither strict one holds.
SameWork CompareStepWork(const std::vector<RankSummary>& ranks, const std::vector<uint32_t>& members,
                         const std::vector<int64_t>* only_steps = nullptr,
                         const std::map<int64_t, size_t>* slowest = nullptr);

// Turns the per_step_imbalance findings whose ranks did the same work into uneven_timing
// findings, comparing the work in the steps each was judged on (`judged_steps`, by stage: a step
// whose slowest rank a costed finding names is that finding's — a rank's checkpoint every third
// step — and left out of both). `rank_numbers[i]` is ranks[i]'s rank number. Returns whether any
// changed (the findings then need ranking again).
bool AttributeImbalanceToTiming(const std::vector<RankSummary>& ranks, const std::vector<int64_t>& rank_numbers,
                                const std::map<int64_t, std::vector<int64_t>>& judged_steps,
                                std::vector<Finding>* findings);

}  // namespace rankscope

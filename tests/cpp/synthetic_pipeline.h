// Semi-synthetic pipeline-parallel jobs as rank summaries, with physically consistent waiting:
// a GPipe schedule (every micro-batch's forward through the stages, then every backward in
// reverse) over `stages` x `data` ranks, simulated event by event:
//  - a send is asynchronous (gloo-like): the sender goes on after its own transfer span;
//  - a receive ends when the data is there: max(posted, sender's arrival + transfer);
//  - the data-parallel peers of a stage all-reduce their gradients after the last backward: each
//    leaves when the last peer has arrived plus the transfer;
//  - the step ends after the all-reduce and the optimizer.
// rank = data index + data * stage (Megatron's order tp-cp-dp-pp with tp = cp = 1); process
// groups are described as "pipeline" and "data_parallel". Faults are durations: the test knows
// the answer by simulating the job again without them.
#pragma once

#include <cstdint>
#include <vector>

#include "rankscope/analysis/rank_summary.h"

namespace rankscope::testing {

struct PipelineJob {
  int stages = 2;
  int data = 2;
  int microbatches = 4;
  int steps = 5;
  double forward_ms = 2.0;     // per micro-batch and stage
  double backward_ms = 4.0;
  double optimizer_ms = 1.0;
  double p2p_ms = 0.2;         // transfer of one activation / gradient
  double allreduce_ms = 1.5;   // transfer of the gradients
  std::vector<double> stage_scale;        // per stage: its layers' work relative to the others (1: balanced)
  std::vector<double> rank_extra_ms;      // per rank: extra forward time per micro-batch
  // Per step and rank (empty: none): extra time in every forward of that step (imbalance).
  std::vector<std::vector<double>> step_rank_extra_ms;
};

std::vector<RankSummary> SimulatePipeline(const PipelineJob& job);

// The mean step time over ranks and steps of a simulated job (what a re-run would measure).
double MeanStepNs(const std::vector<RankSummary>& ranks);

}  // namespace rankscope::testing

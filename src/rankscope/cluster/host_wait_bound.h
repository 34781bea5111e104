// GPU work costs a job only where its hosts wait for it.
//
// A GPU job's step ends on the host. A host that never waits for its GPU runs ahead of it, and a
// kernel that runs longer — or a peer's GPU that waits longer at a collective for it — delays
// nothing the step is made of while the GPU has idle time to absorb it; it reaches the step only
// through the host's waits (analysis/host_gpu_waits.h: synchronize calls, copies that wait for
// their transfer, calls that block, CPU ops that wait). A fix can shorten a rank's step by its
// host's waits — for its GPU, or for its peers in a collective on the host (gloo's, also with
// CUDA tensors) — and, on the finding's ranks, by their host time beyond their peers' (their step
// minus their waits, over the median of the other ranks': host work the fix takes off directly);
// no more. The job's step is its longest rank's, so in each profiled step fixing a finding saves
// at most
//
//     B = max over ranks of the step  -  max over ranks of (the step - what the fix can take off),
//
// and a finding's saving — a mean over the steps — at most the mean of B. The per-step and
// replayed what-ifs (cost_model.h, step_replay.h) follow the collectives, which on GPUs are the
// GPU's: in a host-bound job they charge every step with a lateness that no host waited for.
// Applied to the findings about ranks (slow_rank, slow_node, slow_function, extra_work) of jobs
// whose every rank runs on a GPU, with steps and every collective in its summary; the estimate
// it capped stays as evidence (what_if `host_wait_bound`). Not applied to CPU-only jobs.
//
// Measured on the semi-synthetic A100 DDP set whose rank 5 runs a kernel 10 ms longer 4 times a
// step (its GPU is idle 170 of every 222 ms; its host waits for the GPU in one copy of the
// first step): the per-step cost said 32.6 ms/step, the bound 12.8, the generator's model of
// the job 12.0 (tools/make_synthetic_ranks.py); where rank 5's host pauses 4.44 ms before each
// of the 5 all-reduces of a step, 84.4, 22.2 and 22.2.
#pragma once

#include <cstdint>
#include <vector>

#include "rankscope/analysis/rank_summary.h"
#include "rankscope/cluster/cost_model.h"
#include "rankscope/cluster/step_series.h"
#include "rankscope/findings/finding.h"

namespace rankscope {

// Caps each such finding's saving at its bound; `min_excess_ns` sets the severity of a capped
// finding as when it was costed (information below it). The caller ranks the findings again.
void BoundByHostWaits(const std::vector<RankSummary>& ranks, const StepSeries& series,
                      const std::vector<int64_t>& rank_numbers, double min_excess_ns, std::vector<Finding>* findings);

// The same bound for every finding fixed at once.
void BoundByHostWaits(const std::vector<RankSummary>& ranks, const StepSeries& series,
                      const std::vector<int64_t>& rank_numbers, CombinedWhatIf* all);

}  // namespace rankscope

// The replay bounds the per-step what-if where the profiled steps do not line up.
//
// The per-step what-if (cost_model.h) takes a rank's excess off its local time in the profiled
// step where it lies and recomputes the step as its slowest rank. That assumes the ranks' steps
// line up at their collectives. Work a rank does after a step's last collective (a checkpoint
// after the optimizer step) delays its peers only at the next step's first collective, and they
// run their own work meanwhile; the per-step model charges all of it. Such a rank shows it: its
// local time in that step is longer than the step's whole duration on the median rank (by
// kOutrunShare) — its peers were in their next step by then. For the findings about such ranks
// (slow_rank, slow_node, slow_function, extra_work), the replay (step_replay.h), which follows the
// collectives instead, bounds the cost when it is faithful: the finding's ranks like their peers
// there — every segment no slower than their peers' median — is the most that fixing any part
// of their excess saves. A finding whose per-step cost is above that bound takes it; its own
// estimate stays as evidence. Where the steps line up the per-step cost stands: on an
// oversubscribed host the replay, which cannot see a rank's CPU time slowing its peers,
// understates it (the accuracy sets, docs/cluster.md round 9). Pipelined jobs are costed by the
// replay already.
//
// Measured on a recorded DDP job whose rank 0 saves a checkpoint every third step
// (tests/data/cluster/checkpoint): per-step cost 50.4 ms/step, replay bound 35.1, measured
// saving 27.2 / 33.4 / 34.1 ms/step.
#pragma once

#include <cstdint>
#include <vector>

#include "rankscope/cluster/cost_model.h"
#include "rankscope/cluster/step_replay.h"
#include "rankscope/cluster/step_series.h"
#include "rankscope/findings/finding.h"

namespace rankscope {

// A rank outruns its peers' step when its local time exceeds the step's median duration by this share.
inline constexpr double kOutrunShare = 0.2;

// Whether any of `ranks` (indices) outruns its peers' step in some profiled step.
bool OutrunsPeersSteps(const StepSeries& series, const std::vector<uint32_t>& ranks);

// Caps the saving of each such finding whose ranks outrun their peers' steps at the replayed
// saving of its ranks like their peers; `min_excess_ns` sets the severity of a capped finding as
// when it was costed (information below it). Nothing changes for an unbuilt graph. The caller
// ranks the findings again.
void BoundByReplay(const StepGraph& graph, const StepSeries& series, const std::vector<int64_t>& rank_numbers,
                   double min_excess_ns, std::vector<Finding>* findings);

// The same bound for every finding fixed at once: their ranks like their peers, replayed.
void BoundByReplay(const StepGraph& graph, const StepSeries& series, const std::vector<int64_t>& rank_numbers,
                   CombinedWhatIf* all);

}  // namespace rankscope

// GPU work is costed on the collectives' timeline, not on the host's steps.
//
// The per-step what-if (cost_model.h) takes a finding's excess off its rank's local time (the
// host's step minus its communication wait) in each profiled step and recomputes each step as its
// slowest rank. For work on a GPU the host's step is the wrong clock: the host launches a step's
// kernels and runs ahead, and its step ends wherever it next waits for its GPU, so a kernel's
// delay lands in the host step of whichever synchronisation follows it, and the ranks' host steps
// do not line up with each other or with their GPUs' (the semi-synthetic V100 set: host steps of
// 82-166 ms around GPU steps of 118-126 ms). The replay (step_replay.h) follows the collectives,
// where a GPU's delay shows as its peers' wait. So a `slow_function` or `extra_work` finding whose
// subject is GPU work (a kernel, a kernel name over its launch shapes, the kernels of a CPU op, a
// memory operation) is costed by the replay when it is faithful: each of its ranks loses its excess
// where its segments exceed their peers' (StepGraph::RanksWithoutExcess). The per-step estimate
// stays as evidence. Below the minimum cost the finding is information, as a per-step cost is.
//
// So is host work (a CPU op, a Python path, untraced time) of ranks that run on a GPU (round 18):
// the same host clock counts it, and what it costs is what it delays the GPU by, which the
// segments between collectives show — nothing where the GPU still had queued work to run, all of
// it where the GPU waited (semi-synthetic V100 sets, a host pause of 5.75 ms where the GPU is idle,
// on ranks whose kernels jitter: 3.67 ms per step, 5.55 replayed, 5.17 saved; inside `## backward
// ##`: 3.38, 5.49, 5.20). CPU-only ranks keep the per-step cost, whose host clock is theirs.
//
// Not where a finding's rank shares its GPU with another rank (the same device of the same host):
// ranks that time-share a GPU slow each other through it, which the replay, keeping every other
// segment as measured, cannot see — as an oversubscribed CPU (replay_bound.h). There the per-step
// estimate stands (the H200 accuracy rows, four ranks on one GPU: extra GEMMs on one rank were
// mostly costed below what removing them saved already: 4.9 / 5.9, 5.7 / 9.5, 7.2 / 11.8 ms).
//
// Measured on the semi-synthetic sets (bench/accuracy, `shapes-*`: one GEMM slowed by a factor
// over its 13 launch shapes on one rank; exact saving 5.71 / 11.60 ms/step): per step 4.16 / 8.45,
// replayed 5.07 / 10.31. A kernel slowed by a fixed time is costed exactly either way (5.75).
#pragma once

#include <cstdint>
#include <vector>

#include "rankscope/analysis/rank_summary.h"
#include "rankscope/cluster/host_map.h"
#include "rankscope/cluster/step_replay.h"
#include "rankscope/findings/finding.h"

namespace rankscope {

// Whether `f`'s subject is work that runs on a GPU.
bool IsGpuWork(const Finding& f);

// Whether the rank's trace holds GPU activity.
bool RunsOnGpu(const RankSummary& rank);

// Whether rank index `r` ran GPU work on a device that another rank of its (known) host used too.
bool SharesGpu(const std::vector<RankSummary>& ranks, const std::vector<RankHost>& hosts, size_t r);

struct GpuWorkCostInput {
  const StepGraph* graph;
  const StepReplay* replay;                  // the graph's summary (its fidelity)
  const std::vector<RankSummary>* ranks;     // the summaries, in the graph's index order
  const std::vector<RankHost>* hosts;        // per rank index
  const std::vector<int64_t>* rank_numbers;  // per rank index
  double min_excess_ns;
};

// Re-costs the slow_function and extra_work findings about GPU work, and about host work of ranks
// that run on a GPU, from the replay (above). Nothing changes unless the graph is faithful. The
// caller ranks the findings again.
void CostWorkOfGpuRanksByReplay(const GpuWorkCostInput& in, std::vector<Finding>* findings);

}  // namespace rankscope

// Stalled calls: a function abnormal on a rank only through a few calls that stalled.
//
// On a host with more runnable threads than cores, a rank is taken off its CPU for a scheduler
// time slice or more (4 ms and multiples on the 2-core test machine) in the middle of whatever
// call it is in; a page fault, a swap-in or a pause does the same. The call then takes 100x its
// usual time, and a function whose calls take microseconds gains milliseconds per step on that
// rank. Seen on a 4-rank DDP job on 2 cores (no stacks): "CPU op aten::mul_ is slower on rank 2",
// +4.4 ms/step, 63 vs 63 calls per step and the same 3.1 us median call — 4 of its 630 calls
// took 36, 16, 4.2 and 4.1 ms (its p99 call 46 us), and without them it took what its peers took.
//
// function_outliers.h flags such a rank `stalled` (its stalled calls each over kStallFactor x the
// function's p99 call, at most one every other step, its calls as many as its peers'; without
// their time beyond the p99 call the rank is not abnormal). A slow_function or extra_work finding
// whose every function row is such a rank's is not the function's: the findings become one
// stalled_calls note naming the ranks, their functions and the stalled time, and the hosts to
// check — information, no saving (the time is real, but no change to the function recovers it).
// Stalled outliers that made no finding stay in the abnormal-functions table only.
#pragma once

#include <cstdint>
#include <vector>

#include "rankscope/cluster/function_outliers.h"
#include "rankscope/cluster/host_map.h"
#include "rankscope/cluster/rank_metrics.h"
#include "rankscope/findings/finding.h"

namespace rankscope {

// Replaces the function findings made only of stalled outliers by one stalled_calls note
// (`rank_numbers`, `hosts` and `metrics` per rank index). Returns whether any changed.
bool NoteStalledCalls(const std::vector<FunctionOutlier>& outliers, const std::vector<int64_t>& rank_numbers,
                      const std::vector<RankHost>& hosts, const std::vector<RankMetrics>& metrics,
                      std::vector<Finding>* findings);

}  // namespace rankscope

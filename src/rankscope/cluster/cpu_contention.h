// CPU contention: step-to-step differences between ranks that the host's scheduler can make.
//
// A per_step_imbalance finding (parallel_findings.h) says that a different rank is the slowest
// in most steps while the ranks' medians are close: input or sequence-length imbalance. On an
// oversubscribed host (more runnable threads than cores: other jobs, DataLoader workers, a busy
// CI machine) the run queue makes exactly that pattern — whichever rank waited longest for a
// CPU in a step is that step's slowest. The traces cannot tell the two apart; the kernel's
// per-thread accounting can, and rankscope's collector writes it into each trace
// (`rankscope_cpu_sched`: the recorded window's run time and run-queue wait of all the process's
// threads; python/rankscope/_cpu_sched.py). When the ranks wait for a CPU, per step, at least
// kExplainedShare of the imbalance's mean excess (median over the stage's ranks), the imbalance
// is not attributed to the input: the finding becomes cpu_contention (information, no saving),
// keeping its evidence. Without the record on every rank of the stage nothing changes.
//
// Why not the same for one slow rank: measured on the CPU accuracy matrix (bench/accuracy), the
// rank that is late for a fault of its own (a sleep, extra compute) waits 1.5-3.5x more per ns of
// CPU than its peers — it runs while they contend — so a rank's excess wait is as much an effect
// of being late as a cause, and comparing it with its peers' would blame the host for real faults.
//
// The other way round, on an oversubscribed host the ranks share the CPUs, and the what-if
// (cost_model.h), which keeps the peers' times, cannot say how the scheduler will share them once
// a fault is fixed. Measured on the CPU accuracy sets (docs/cluster.md, "Accuracy", round 6):
//  - extra CPU work can save more or less than its cost: 4.7 ms of compute measured 6.4 ms of
//    saving on the light set (C); on the CPU-bound set (D) 7 of 9 such costs were above the
//    measured saving (39 ms of compute: cost 11.5 ms, measured -0.5 ms).
//  - a wait (a sleep, a lock) saves less: while the rank waits, its peers run on the CPU it
//    leaves. On D all 6 sleep faults measured below their cost (39 ms of sleep in data loading:
//    cost 30.8 ms, measured -0.8 ms).
// So a costed finding about one rank, on a host whose other ranks wait for a CPU at least the
// minimum cost per step, gets that as evidence (NoteContendedCpu), and the cost stays what the
// model shows: `wait_on_contended_cpu` when its lead function is a wait; else `extra_cpu` when it
// ran more on a CPU than the host's other ranks by at least the minimum cost, and they wait at
// least that long. A wait-led rank's own CPU surplus is not noted: it runs while its peers wait
// for it, an effect of being late.
#pragma once

#include <cstdint>
#include <vector>

#include "rankscope/analysis/rank_summary.h"
#include "rankscope/cluster/host_map.h"
#include "rankscope/cluster/rank_metrics.h"
#include "rankscope/findings/finding.h"

namespace rankscope {

// The share of an imbalance's mean excess that the ranks' run-queue wait must reach.
inline constexpr double kExplainedShare = 0.5;

struct RankCpuWait {
  bool known = false;
  double run_ns = 0;   // per unit (step, or window without steps)
  double wait_ns = 0;  // per unit
};

// Per rank (in `ranks` order), from the trace's record; `known` where there is one.
std::vector<RankCpuWait> MeasureCpuWait(const std::vector<RankSummary>& ranks, const std::vector<RankMetrics>& metrics);

// Turns the per_step_imbalance findings that the ranks' wait for a CPU can explain into
// cpu_contention findings (see above). `rank_numbers[i]` is ranks[i]'s rank number. Returns
// whether it changed any (the findings then need ranking again).
bool AttributeImbalanceToContention(const std::vector<RankCpuWait>& waits, const std::vector<int64_t>& rank_numbers,
                                    std::vector<Finding>* findings);

// Adds the cpu_wait evidence `wait_on_contended_cpu` or `extra_cpu` (above) to the slow_rank,
// slow_function and extra_work findings about one rank that qualify. `hosts` and `rank_numbers`
// are per rank index.
void NoteContendedCpu(const std::vector<RankCpuWait>& waits, const std::vector<RankHost>& hosts,
                      const std::vector<int64_t>& rank_numbers, double min_excess_ns, std::vector<Finding>* findings);

}  // namespace rankscope

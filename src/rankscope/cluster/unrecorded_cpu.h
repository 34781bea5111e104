// Unrecorded CPU time: a rank whose process runs more on a CPU than its peers' while its trace
// records nothing that explains it.
//
// A thread of the rank's own that never enters an operator (a pure-Python monitoring, logging or
// prefetch loop) leaves no slice in a profile without Python stacks: its time shows nowhere in the
// trace. The kernel counts it: rankscope's collector writes the process's run time over the
// recorded window into the trace (`rankscope_cpu_sched`, cpu_contention.h). A rank is reported
// when its run time per step is abnormal among the ranks (the robust rule, and at least the
// minimum cost above its peers' median) and its recorded host operations explain less than half
// of that excess (otherwise they are the finding, at the level that names them) — as extra_work
// about the rank, subject kind "cpu_time", with no saving: which steps it delays the trace
// cannot say. A rank another finding already names is left to it (NoteContendedCpu adds the same
// fact there). Without the record on at least three ranks nothing is found.
//
// A rank that waits longer for its peers' collectives than they wait for it can spend that time
// on a CPU too (a host-side wait that polls): its excess counts only beyond its extra wait. Seen
// on a clean 4-rank capture (`rankscope run`, the demo's job without its fault): rank 1 ran
// 22.8 ms/step against its peers' 20.7, and waited 13.2 ms/step for them against their 6.4-8.3 —
// reported as CPU time its trace does not record, on a clean run.
#pragma once

#include <cstdint>
#include <vector>

#include "rankscope/analysis/rank_summary.h"
#include "rankscope/cluster/cpu_contention.h"
#include "rankscope/cluster/host_map.h"
#include "rankscope/cluster/rank_metrics.h"
#include "rankscope/cluster/robust_rule.h"
#include "rankscope/findings/finding.h"

namespace rankscope {

struct UnrecordedCpuInputs {
  const std::vector<RankSummary>* ranks = nullptr;
  const std::vector<RankCpuWait>* waits = nullptr;  // per rank index (MeasureCpuWait)
  const std::vector<RankHost>* hosts = nullptr;
  const std::vector<int64_t>* rank_numbers = nullptr;
  const std::vector<RankMetrics>* metrics = nullptr;  // per rank index: the communication wait
  OutlierRule rule;
  double min_excess_ns = 0;
  std::string unit = "step";
  double step_ns = 0;  // the job's step (or window) time
};

// Appends one extra_work finding per such rank; the findings then need ranking again. Returns
// whether it added any.
bool AddUnrecordedCpuFindings(const UnrecordedCpuInputs& in, std::vector<Finding>* findings);

}  // namespace rankscope

// Slow hosts: several ranks of one host that are slow *together* compared with the ranks on the
// other hosts — something they share (the node's CPU, memory, network, power or cooling).
//
// The slow-rank rule (slow_ranks.h) first finds slow ranks one by one against every peer and
// then groups them by host. That misses a node whenever its ranks are a large share of the job
// (two of four ranks: the median is between the slow and the healthy ones, and nobody stands
// out) or when one of its ranks is within the noise of the others on its own. Here a host is
// compared with the other hosts directly, step by step (significance.h): in more than half of
// the steps, the *fastest* of its ranks is slower than the median rank of the other hosts by
// more than their spread, and by at least the minimum excess and the robust rule's margin (a
// share of their local time) in the median step; and its ranks are
// slowed alike (the least slowed at least half as much as the most: one faulty rank beside a rank
// the load slowed a little is a slow rank, not a node). The hosts are
// the ones resolved by host_map.h (trace, capture manifest, telemetry sidecar, --hosts); ranks
// that are hosts of their own (no host known) are never a node.
//
// The finding (slow_node) names the function that explains most of the host's excess (its
// ranks' smallest excess over the other hosts' median, at the deepest Python path that carries
// 80 % of it), else the phase; its cost is the per-step what-if (cost_model.h) with the host's
// ranks like the other hosts' median rank. Findings about single ranks of that host are then
// part of it and dropped.
#pragma once

#include <string>
#include <vector>

#include "rankscope/cluster/function_outliers.h"
#include "rankscope/cluster/host_map.h"
#include "rankscope/cluster/rank_metrics.h"
#include "rankscope/cluster/significance.h"
#include "rankscope/cluster/step_series.h"
#include "rankscope/findings/finding.h"

namespace rankscope {

struct SlowHost {
  std::string host;
  std::vector<uint32_t> ranks;  // every rank of the host (summary indices)
  StepSignificance test;        // the host's local time against the other hosts'
};

// Hosts with at least two ranks whose local time stands out step by step; worst first.
// `margin`: the robust rule's relative margin (robust_rule.h) over the other hosts' median local time.
std::vector<SlowHost> FindSlowHosts(const StepSeries& series, const std::vector<RankHost>& hosts,
                                    double min_excess_ns, double margin);

struct HostFindingInputs {
  const std::vector<RankSummary>* ranks = nullptr;
  const std::vector<RankMetrics>* metrics = nullptr;
  const std::vector<RankHost>* hosts = nullptr;
  const StepSeries* series = nullptr;
  double step_ns = 0;
  double min_excess_ns = 0;
  double margin = 0.10;  // robust_rule.h
  // CollectFunctionSamples(*ranks, *metrics, min_excess_ns), when the caller has them (else
  // collected for each slow host: a pass over every row of every rank).
  const std::vector<FunctionSamples>* functions = nullptr;
};

// Adds a slow_node finding for each slow host that no slow_node finding names yet, and drops
// the findings about single ranks of it. Findings are left unranked.
void AddSlowHostFindings(const HostFindingInputs& in, std::vector<Finding>* findings);

}  // namespace rankscope

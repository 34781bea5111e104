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
//
// A second rule finds the node by its work rather than its time (FindHostsWithExtraWork): on a
// busy machine the spread of local times can exceed a node's excess, and its ranks were then
// reported one by one as extra work in the same function.
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

// A host whose every rank runs work that no other rank runs (work_of_host rule, below).
struct HostExtraWork {
  std::string host;
  std::vector<uint32_t> ranks;  // every rank of the host (summary indices)
  FunctionKind kind = FunctionKind::kKernel;
  std::string name, detail;     // the function
  double excess_ns = 0;         // the host's smallest time per step minus the other ranks' median
  double value_ns = 0;          // the host's median time per step
  double median_ns = 0;         // the other ranks' median
  double calls = 0;             // the host's fewest calls per step
  double median_calls = 0;      // the other ranks' median
  std::vector<double> rank_excess_ns;  // per rank of `ranks`: its time minus the other ranks' median
};

// Hosts with at least two ranks that each call a function materially more often (kExtraCallsShare
// of findings.h, at least once per step) than the median of the other ranks, while no other rank
// does, for at least `min_excess_ns` more time per step on every one of them: something the node
// does that the others do not (a node-local hook, daemon or retry path). Calls, not time: a busy
// machine stretches calls, it does not add them, so this holds where the ranks' local times are
// too noisy for FindSlowHosts. `stage_of` (per rank index; empty: one stage) limits the comparison
// to the other ranks of the host's pipeline stage, which run the same code. Largest excess first.
std::vector<HostExtraWork> FindHostsWithExtraWork(const std::vector<FunctionSamples>& functions,
                                                  const std::vector<RankHost>& hosts,
                                                  const std::vector<int64_t>& stage_of, double min_excess_ns);

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
  const std::vector<int64_t>* stage_of = nullptr;  // per rank index, when the job is pipelined
};

// Adds a slow_node finding for each slow host that no slow_node finding names yet, then for each
// host with extra work (FindHostsWithExtraWork) that none names, and drops the findings about
// single ranks of it. A host with extra work is named by that function and costed without it on
// each of its ranks, step by step; when nobody measurably waits for it, it stays as information
// (CostMethod::kAddedWork), like extra_work. Findings are left unranked.
void AddSlowHostFindings(const HostFindingInputs& in, std::vector<Finding>* findings);

}  // namespace rankscope

// Slow rank and slow node localisation.
//
// A rank is slow when, by the robust rule, its local time per step (rank_metrics.h: step time minus
// communication wait) stands out above its peers' (from four ranks on, the median and MAD of the
// other ranks: with few, the rank itself widens the spread it is tested by) by at least the minimum
// excess, and the collectives confirm it: it arrives late (arrival.h: its positive lateness, added
// over its collectives and divided by its steps, is at least a quarter of its excess) and
// consistently (its lateness stands out in at least half of the steps). A rank that does more work
// but does not arrive late is not what its peers wait for; a rank that was late once (descheduled
// by the OS, a page fault storm) is not a straggler. Without matched collectives the local time
// alone decides.
//
// Ranks are then grouped by host. A host with two or more slow ranks, and slow ranks making up
// at least half of its ranks, is a slow node (something the ranks share: the CPU, memory,
// network, power or cooling of the machine). Other slow ranks are slow on their own (the GPU,
// its data shard, the process) — and when their host has healthy ranks too, that is the
// evidence that the node itself is fine.
#pragma once

#include <string>
#include <vector>

#include "rankscope/cluster/arrival.h"
#include "rankscope/cluster/host_map.h"
#include "rankscope/cluster/rank_metrics.h"
#include "rankscope/cluster/robust_rule.h"

namespace rankscope {

// A slow rank must arrive late, per step, by at least this share of its local-time excess.
inline constexpr double kMinLatenessShare = 0.25;

enum class SlowScope : uint8_t { kNode, kRank };

struct SlowGroup {
  SlowScope scope = SlowScope::kRank;
  std::string host;
  std::vector<uint32_t> ranks;       // the slow ranks (summary indices)
  std::vector<uint32_t> host_ranks;  // every analysed rank of the host
};

struct SlowRankAnalysis {
  RobustStats local;                 // local time per step over ranks
  double threshold_ns = 0;           // excess over the median that is abnormal (robust rule)
  std::vector<double> excess_ns;     // per rank: local - median local
  std::vector<RobustStats> compared; // per rank: the local times it was tested against (its peers')
  std::vector<double> compared_threshold_ns;  // per rank: the rule's threshold over `compared`
  std::vector<bool> outlier;         // per rank: abnormal local time (before the lateness check)
  std::vector<bool> slow;            // per rank: outlier, material and late
  std::vector<SlowGroup> groups;     // worst first (largest excess)
};

// The slow ranks (`s.slow`) grouped by host, worst first: a node, or ranks slow on their own.
std::vector<SlowGroup> GroupSlowRanks(const SlowRankAnalysis& s, const std::vector<RankHost>& hosts);

SlowRankAnalysis LocateSlowRanks(const std::vector<RankMetrics>& metrics, const ArrivalAnalysis& arrival,
                                 const std::vector<RankHost>& hosts, const OutlierRule& rule, double min_excess_ns);

}  // namespace rankscope

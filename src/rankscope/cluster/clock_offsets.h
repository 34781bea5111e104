// Clock offsets between hosts, estimated from matched collectives.
//
// Every participant of a collective leaves it at nearly the same moment (the data it waits for
// arrives everywhere at once, give or take the network latency), so the differences between the
// end times a collective has on two hosts' clocks are the offset between the clocks plus noise.
// Ranks on one host read one clock, so one offset is estimated per host ("clock domain"); a
// rank without a host is a domain of its own.
//
// Model: end(rank r, instance i) = T_i + offset(domain of r) + noise. Solved by alternating
// medians (robust to the outliers noise and late kernels produce): T_i = median over its
// participants of end - offset; offset_d = median over d's samples of end - T_i; the domain of
// the lowest rank is the reference (offset 0). Converges in a few rounds; exact when the ends
// agree exactly. Times "aligned to the reference clock" are t - offset.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "rankscope/cluster/collective_matching.h"
#include "rankscope/cluster/host_map.h"

namespace rankscope {

struct ClockDomain {
  std::string host;
  std::vector<uint32_t> ranks;  // indices of the summaries on this host
  int64_t offset_ns = 0;        // host clock - reference clock
  bool estimated = false;       // false: no collective links it to the reference (offset 0 assumed)
  int64_t spread_ns = 0;        // median |residual| of its samples: how well the model fits
  uint64_t samples = 0;         // (instance, rank) end times used
};

struct ClockEstimate {
  std::vector<ClockDomain> domains;   // the reference first
  std::vector<uint32_t> domain_of;    // per rank index
  std::vector<int64_t> offset_of;     // per rank index: offset of its domain
  int iterations = 0;
};

ClockEstimate EstimateClockOffsets(const std::vector<RankSummary>& ranks, const std::vector<RankHost>& hosts,
                                   const CollectiveMatching& matching);

}  // namespace rankscope

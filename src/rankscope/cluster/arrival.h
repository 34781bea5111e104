// Arrival at collectives: who the others wait for.
//
// A rank "arrives" at a collective instance when its part of it starts: the communication
// kernel's start on the GPU, or the CPU collective's span (gloo's "gloo:all_reduce") for a
// CPU backend. Arrival times are aligned to the reference clock (clock_offsets.h) first. Per
// complete instance (every member present):
//  - arrival skew = last arrival - first arrival;
//  - the last arriver is the rank everyone else waited for; it gets a vote when it arrived
//    strictly after the second-to-last (ties vote for nobody);
//  - each participant's lateness = its arrival - the median arrival of the instance.
// Per rank: votes, the median lateness over its instances, the sum of its positive lateness
// (how much later than the median rank it arrived, added over instances: a rank that is late
// at a few collectives by a lot and on time at the others has a median of 0 but a large sum),
// and the wait it imposed (sum over the instances it arrived last at of last - second-to-last).
// Per step, each rank's positive lateness is added over the step's instances and compared with
// the other ranks' by the robust rule: a rank that is late in most steps is consistently late;
// a rank that was descheduled once is not.
#pragma once

#include <cstdint>
#include <vector>

#include "rankscope/cluster/clock_offsets.h"
#include "rankscope/cluster/collective_matching.h"
#include "rankscope/cluster/robust_rule.h"

namespace rankscope {

inline constexpr uint32_t kNoRank = 0xffffffffu;

struct InstanceArrival {
  uint32_t matched = 0;      // index into CollectiveMatching::instances
  int64_t first_ns = 0;      // aligned absolute times
  int64_t median_ns = 0;
  int64_t last_ns = 0;
  int64_t skew_ns = 0;       // last - first
  uint32_t first_rank = kNoRank;  // rank indices
  uint32_t last_rank = kNoRank;   // kNoRank on a tie
  int64_t last_gap_ns = 0;   // last - second-to-last
};

struct RankArrival {
  uint64_t instances = 0;    // complete instances the rank took part in
  uint64_t last_votes = 0;
  int64_t lateness_ns = 0;   // median over its instances
  int64_t late_sum_ns = 0;   // sum of max(0, lateness) over its instances
  int64_t imposed_wait_ns = 0;
  uint32_t arrival_steps = 0;  // steps with complete instances it took part in
  uint32_t late_steps = 0;     // ... in which its lateness stands out (robust rule)
};

struct ArrivalAnalysis {
  std::vector<InstanceArrival> instances;  // complete instances, in matching order
  std::vector<RankArrival> ranks;          // per rank index
  int64_t median_skew_ns = 0;
  int64_t max_skew_ns = 0;
};

ArrivalAnalysis AnalyzeArrivals(const std::vector<RankSummary>& ranks, const CollectiveMatching& matching,
                                const ClockEstimate& clock, const OutlierRule& rule);

}  // namespace rankscope

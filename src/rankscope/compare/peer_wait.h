// Each rank's wait for its peers at collectives, per step: over the complete collective
// instances it took part in, the time from its own arrival to the last participant's, with the
// clocks aligned, from cluster diagnosis's matching and clock estimate (docs/cluster.md).
#pragma once

#include <vector>

#include "rankscope/analysis/rank_summary.h"
#include "rankscope/cluster/cluster_diagnosis.h"

namespace rankscope::compare {

// Per rank (same order as `ranks`, the ranks `cluster` was diagnosed from), ns per step of W.
std::vector<double> PeerWaitPerStep(const std::vector<RankSummary>& ranks, const ClusterDiagnosis& cluster);

}  // namespace rankscope::compare

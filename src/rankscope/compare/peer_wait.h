// Each rank's wait for its peers at collectives, per step: over the complete collective
// instances it took part in, the time from its own arrival to the last participant's, with the
// clocks aligned, using cluster diagnosis's matching and clock estimate (docs/cluster.md).
#pragma once

#include <vector>

#include "rankscope/analysis/rank_summary.h"

namespace rankscope::compare {

// Per rank (same order as `ranks`), ns per step of W; empty with fewer than two ranks or when
// the cluster diagnosis cannot run.
std::vector<double> PeerWaitPerStep(const std::vector<RankSummary>& ranks);

}  // namespace rankscope::compare

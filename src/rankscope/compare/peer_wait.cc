#include "rankscope/compare/peer_wait.h"

#include <algorithm>

#include "rankscope/cluster/cluster_diagnosis.h"

namespace rankscope::compare {

std::vector<double> PeerWaitPerStep(const std::vector<RankSummary>& ranks, const ClusterDiagnosis& cluster) {
  std::vector<double> wait(ranks.size(), 0.0);
  for (const InstanceArrival& a : cluster.arrival.instances) {
    for (const Participant& p : cluster.matching.instances[a.matched].participants) {
      const int64_t arrival = ranks[p.rank].collectives[p.instance].start_ns - cluster.clock.offset_of[p.rank];
      wait[p.rank] += static_cast<double>(std::max<int64_t>(0, a.last_ns - arrival));
    }
  }
  for (size_t r = 0; r < ranks.size(); ++r) wait[r] /= static_cast<double>(std::max<size_t>(1, ranks[r].steps.size()));
  return wait;
}

}  // namespace rankscope::compare

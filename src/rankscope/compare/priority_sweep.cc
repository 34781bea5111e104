#include "rankscope/compare/priority_sweep.h"

#include <algorithm>

namespace rankscope::compare {
namespace {

struct Edge {
  int64_t time;
  uint32_t claim;
  bool is_start;
};

}  // namespace

std::vector<double> SweepClaims(const std::vector<Claim>& claims, int64_t lo, int64_t hi, int levels,
                                int64_t* unclaimed_ns) {
  std::vector<double> owned(claims.size(), 0.0);
  std::vector<Edge> edges;
  edges.reserve(claims.size() * 2);
  for (uint32_t i = 0; i < claims.size(); ++i) {
    const int64_t a = std::max(claims[i].start, lo), b = std::min(claims[i].end, hi);
    if (b <= a) continue;
    edges.push_back({a, i, true});
    edges.push_back({b, i, false});
  }
  // Ends before starts at one instant, so that claims that merely touch never share it.
  std::sort(edges.begin(), edges.end(), [](const Edge& x, const Edge& y) {
    return x.time != y.time ? x.time < y.time : (!x.is_start && y.is_start);
  });
  std::vector<std::vector<uint32_t>> active(levels);
  int64_t prev = lo, unclaimed = 0;
  auto top = [&]() -> int {
    for (int l = 0; l < levels; ++l) {
      if (!active[l].empty()) return l;
    }
    return -1;
  };
  for (const Edge& e : edges) {
    const int64_t len = e.time - prev;
    if (len > 0) {
      const int t = top();
      if (t < 0) {
        unclaimed += len;
      } else {
        const double share = static_cast<double>(len) / static_cast<double>(active[t].size());
        for (uint32_t id : active[t]) owned[id] += share;
      }
    }
    prev = e.time;
    std::vector<uint32_t>& set = active[claims[e.claim].level];
    if (e.is_start) {
      set.push_back(e.claim);
    } else {
      auto it = std::find(set.begin(), set.end(), e.claim);
      *it = set.back();
      set.pop_back();
    }
  }
  unclaimed += hi - prev;
  if (unclaimed_ns) *unclaimed_ns = unclaimed;
  return owned;
}

}  // namespace rankscope::compare

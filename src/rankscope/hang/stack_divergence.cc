#include "rankscope/hang/stack_divergence.h"

namespace rankscope::hang {

Divergence Diverge(const std::vector<Frame>& odd, const std::vector<Frame>& majority) {
  Divergence d;
  const size_t n = std::min(odd.size(), majority.size());
  while (d.common_depth < n && odd[d.common_depth] == majority[d.common_depth]) ++d.common_depth;
  if (d.common_depth > 0) d.common_frame = majority[d.common_depth - 1];
  if (d.common_depth < odd.size()) d.odd_frame = odd[d.common_depth];
  if (d.common_depth < majority.size()) d.majority_frame = majority[d.common_depth];
  return d;
}

RoleVerdict JudgeRole(const RoleGroups& rg) {
  RoleVerdict v;
  v.role = rg.role;
  if (rg.groups.empty()) return v;
  // Groups are sorted most ranks first. A rank with two threads of one role can sit in two
  // groups: the majority is judged on ranks, not threads.
  v.has_majority = rg.groups.front().ranks.size() * 2 > rg.ranks.size() &&
                   (rg.groups.size() == 1 || rg.groups[1].ranks.size() < rg.groups.front().ranks.size());
  if (!v.has_majority) return v;
  v.majority_group = 0;
  for (size_t i = 1; i < rg.groups.size(); ++i) {
    Divergence d = Diverge(rg.groups[i].frames, rg.groups.front().frames);
    d.group = i;
    d.ranks = rg.groups[i].ranks;
    v.odd.push_back(std::move(d));
  }
  return v;
}

}  // namespace rankscope::hang

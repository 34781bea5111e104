// The majority state of each thread role and the odd ones out: the group most ranks are in
// (when it holds more than half of the ranks that have the role), every other group, and the
// deepest frame an odd group shares with the majority before the two part ways.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rankscope/hang/stack_folding.h"

namespace rankscope::hang {

struct Divergence {
  size_t group = 0;                   // index into RoleGroups::groups of the odd group
  std::vector<int64_t> ranks;         // its ranks
  size_t common_depth = 0;            // Python frames shared with the majority, from the outermost
  std::optional<Frame> common_frame;  // the deepest of them
  std::optional<Frame> odd_frame;     // the first frame that differs, on the odd ranks (none: it ends there)
  std::optional<Frame> majority_frame;  // ... and on the majority
};

struct RoleVerdict {
  std::string role;
  bool has_majority = false;          // one group holds more than half of the role's ranks
  size_t majority_group = 0;          // index into RoleGroups::groups (when has_majority)
  std::vector<Divergence> odd;        // every other group, most ranks first
};

RoleVerdict JudgeRole(const RoleGroups& groups);

// Where two stacks (outermost first) part ways.
Divergence Diverge(const std::vector<Frame>& odd, const std::vector<Frame>& majority);

}  // namespace rankscope::hang

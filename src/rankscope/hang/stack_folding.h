// Folds every rank's threads into groups of identical stacks per thread role: "ranks 0-2,4-7
// are here, rank 3 is there". Stacks are compared by their Python frames (file, line,
// function), so a stack that py-spy took from outside (with native frames) folds with the
// collector's stacks of the same code.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "rankscope/hang/stack_snapshot.h"

namespace rankscope::hang {

struct StackGroup {
  std::vector<Frame> frames;     // the group's Python frames, outermost first
  std::vector<int64_t> ranks;    // ascending, unique
  size_t threads = 0;            // threads folded here (a rank may have several of one role)
  // One member's whole stack, native frames included when py-spy took it (the report shows
  // where in C a Python frame is stuck).
  std::vector<Frame> example;
  int64_t example_rank = -1;
};

struct RoleGroups {
  std::string role;                    // thread_roles.h
  std::vector<int64_t> ranks;          // ranks that have a thread of this role
  std::vector<StackGroup> groups;      // most ranks first, then by first rank
};

// Roles in a fixed order: main, autograd, dataloader, then the other roles by name. The
// collector's own thread is left out.
std::vector<RoleGroups> FoldStacks(const std::vector<RankStacks>& ranks);

}  // namespace rankscope::hang

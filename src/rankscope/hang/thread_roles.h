// What a thread is for, so that stacks are compared with their like across ranks: every
// rank's main thread with the other main threads, DataLoader pin-memory threads with each other.
// The collector's own thread is excluded: it is the one taking the snapshot.
#pragma once

#include <string>

#include "rankscope/hang/stack_snapshot.h"

namespace rankscope::hang {

// "main", "autograd", "dataloader", "collector" (excluded from the analysis), or
// "thread:<name>" with the numbers of a generated name dropped ("Thread-3 (worker)" ->
// "thread:Thread (worker)"), so that the same thread of every rank gets the same role.
std::string ThreadRole(const ThreadStack& t);

inline constexpr const char* kCollectorThreadName = "rankscope-collector";

}  // namespace rankscope::hang

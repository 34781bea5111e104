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

// Does the process's main thread wait on its DataLoader (a frame in torch/utils/data/)? Then
// its worker processes are where it is stuck: the daemon takes their stacks (docs/hang.md).
bool MainThreadInDataLoader(const RankStacks& s);
bool InDataLoader(const ThreadStack& t);

// A DataLoader worker process's stacks: its loop is in torch/utils/data/_utils/worker.py.
bool IsDataLoaderWorker(const RankStacks& s);

inline constexpr const char* kCollectorThreadName = "rankscope-collector";

}  // namespace rankscope::hang

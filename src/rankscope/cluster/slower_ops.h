// Slower operations: a rank that runs the same operations as its peers, as often, each slower.
//
// A rank whose local time stands out has either work of its own (an extra call, a sleep, a hook:
// the finding names it) or the same work done slower — every operator a few times longer, as on a
// CPU with a lower clock, a throttled GPU, or a core the rank shares with other processes (more
// ranks than cores). The second shows in the function tables as many same-call functions slower
// by similar factors, none of them the cause. Seen on a clean 6-rank CPU job on 2 cores: rank 1
// "spends 20.5 ms more per step in forward", every large operator 2.5-3.5x slower, and the next
// step asked what runs in its forward that its peers do not run.
//
// Per rank, the largest compute functions of its peers (kernels by name on a rank with GPU work,
// else CPU ops; no waits, no communication), kSlowerOpsCompared of them, each called as often on
// the rank as on its peers (within 10 %): when their median ratio (rank / peers' median) is at
// least kSlowerOpsRatio and two thirds of them are slower, the rank's operations are slower.
// Larger inputs make the same calls slower too (a rank given a 2.5x batch: every operator 2.7x):
// where the steps' work signatures (analysis/work_signature.h) say the rank computed what its
// peers did, it is the processor; where they differ, its input, and nothing is noted; without
// shapes, either. (1.5x: under it, on a host with more ranks than cores, a rank that sleeps in its
// DataLoader sees its operators 1.26x slower, an effect of the contention it leaves, not a cause.)
// A finding about that rank alone (slow_rank, slow_function, extra_work) whose functions are the
// same calls gets the `slower_ops` evidence and the host to check next; one led by work the peers
// do not do keeps its own. The candidates are the job's 2 x kSlowerOpsCompared largest functions,
// chosen once (a rank's peers' largest are the job's); each rank's peers' median is a
// leave-one-out lookup in their sorted values: O(ranks x candidates x log ranks). Memory: the
// candidates' values, the steps' signature counts, one entry per rank.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "rankscope/analysis/rank_summary.h"
#include "rankscope/cluster/function_outliers.h"
#include "rankscope/findings/finding.h"

namespace rankscope {

inline constexpr size_t kSlowerOpsCompared = 10;
inline constexpr double kSlowerOpsRatio = 1.5;

// What the steps' work signatures say about a rank's work against its peers'.
enum class RankWork : uint8_t { kUnknown, kSame, kDiffers };

struct SlowerOps {
  bool found = false;
  size_t compared = 0;      // functions compared (the peers' largest, the same calls)
  size_t slower = 0;        // of them slower by at least 10 %
  double median_ratio = 0;  // rank / peers' median, the median over the functions compared
  FunctionKind kind = FunctionKind::kCpuOp;
  std::string largest;      // the peers' largest of them, and its ratio
  double largest_ratio = 0;
  RankWork work = RankWork::kUnknown;
};

// Per rank index.
std::vector<SlowerOps> FindSlowerOps(const std::vector<FunctionSamples>& functions,
                                     const std::vector<RankSummary>& ranks);

// Adds the evidence to the findings about one rank that qualify (above); `rank_numbers` per index.
void NoteSlowerOps(const std::vector<SlowerOps>& slower, const std::vector<int64_t>& rank_numbers,
                   std::vector<Finding>* findings);

}  // namespace rankscope

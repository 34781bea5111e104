// Collective matching: the same collective instance found on every rank that took part in it.
//
// Ranks are told apart by their process group (name, description and member list as the trace
// writes them; a trace without group information puts everything in one unnamed group). Within
// a group an instance is identified by, in order of preference:
//  1. the profiler's sequence number (`Seq`), when every instance of the group on every rank
//     has one (PyTorch's NCCL process groups record it);
//  2. else its profiler step, its "channel" and its order among this rank's instances of that
//     group, step and channel. Step numbers are the job's own (ProfilerStep#N), so ranks whose
//     traces start at different collectives are still paired correctly;
//  3. else (no steps) its order within the group and channel from the start of the trace.
// A point-to-point transfer whose trace names its peer (gloo with record_shapes: c10d's send/recv
// ops) is keyed by its two ends instead: the k-th transfer from rank A to rank B in a step is the
// k-th send of A to B and the k-th receive of B from A (transfers between two ranks arrive in
// order), so the transfers of a pipeline of more than two stages pair exactly.
// The channel is the op (send/recv/send_recv count as one, "p2p"), plus the message size for
// CPU collectives (gloo runs the buckets of one step on several worker threads at once, so
// their start order can differ between ranks), plus the stream for GPU collectives of an
// unnamed group (several communicators whose kernels are ordered only per stream).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "rankscope/analysis/rank_summary.h"

namespace rankscope {

enum class MatchKind : uint8_t { kSequence, kStepOrder, kTraceOrder };
std::string_view MatchKindName(MatchKind k);

struct CollectiveGroup {
  std::string name, desc, ranks;   // identity, as the trace writes it ("" when unknown)
  std::vector<uint32_t> members;   // indices of the analysed ranks that take part
  MatchKind kind = MatchKind::kTraceOrder;
  uint64_t instances = 0;          // matched instances (two or more participants)
  uint64_t complete = 0;           // ... with every member present
};

struct Participant {
  uint32_t rank;      // index into the summaries
  uint32_t instance;  // index into that summary's collectives
};

struct MatchedCollective {
  uint32_t group = 0;
  int64_t seq = -1;        // kSequence
  int64_t step = -1;       // kStepOrder
  uint32_t ordinal = 0;    // kStepOrder / kTraceOrder
  std::string op;          // of the lowest participating rank
  std::vector<Participant> participants;  // by rank index
  bool complete = false;   // every member of the group took part (a pair: both ends)
  bool pair = false;       // a point-to-point transfer keyed by its two ends (sender, receiver)
};

struct CollectiveMatching {
  std::vector<CollectiveGroup> groups;
  std::vector<MatchedCollective> instances;  // by group, then key
  uint64_t single = 0;      // instances found on one rank only (their peers are outside the traces)
  uint64_t duplicates = 0;  // a second instance of one rank under one key (not used)
};

// `ranks` are the per-rank summaries (any order; indices refer to it).
CollectiveMatching MatchCollectives(const std::vector<RankSummary>& ranks);

// "[0, 1, 2]" -> {0, 1, 2}; empty when the text is not such a list.
std::vector<int64_t> ParseRankList(std::string_view text);

}  // namespace rankscope

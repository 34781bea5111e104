// Matches the ranks' Flight Recorder entries per process group by collective sequence id: the
// n-th collective of a group is the same call on every member. Finds, per group, the first
// collective not entered (or not completed) by every member, who is missing from it, the
// collectives whose op, sizes or dtypes differ between members, and the last collective each
// member completed. Point-to-point entries (p2p_seq_id) are not matched.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rankscope/hang/flight_recorder.h"

namespace rankscope::hang {

// What a rank called at one sequence id: op, input sizes and dtypes (several entries when the
// launch was coalesced).
struct CollectiveCall {
  std::string op;                                // profiling_name, e.g. "gloo:all_reduce"
  std::vector<std::vector<int64_t>> sizes;       // input sizes of every entry, in order
  std::vector<std::string> dtypes;
  bool operator==(const CollectiveCall& o) const { return op == o.op && sizes == o.sizes && dtypes == o.dtypes; }
  std::string SizesText() const;                 // "[[1024], [3, 3]]"
  std::string DtypesText() const;                // "Float, Float"
};

struct CallGroup {
  CollectiveCall call;
  std::vector<int64_t> ranks;
};

struct Mismatch {
  int64_t seq = 0;
  std::string field;                 // "op", "size" or "dtype": the first that differs
  CallGroup majority;                // the call most members made
  std::vector<CallGroup> odd;        // the others
  bool tie = false;                  // no call was made by more members than every other
  int64_t time_created_ns = 0;       // earliest entry of that seq
};

// The first collective of a group that not every member has entered and completed.
struct OpenCollective {
  int64_t seq = 0;
  CollectiveCall call;               // the majority call among those that entered
  std::vector<int64_t> entered;      // members with an entry for it
  std::vector<int64_t> completed;    // ... of which completed it
  std::vector<int64_t> missing;      // members whose dump shows they did not reach it
  std::vector<int64_t> unknown;      // members without a dump
  int64_t time_created_ns = 0;       // when the first member entered it
  double pending_s = -1;             // how long it had been open when the dumps were taken
};

struct MemberState {
  int64_t rank = -1;
  bool has_dump = false;
  int64_t last_entered = -1;         // highest collective seq recorded
  int64_t last_completed = -1;       // highest seq completed
  int64_t first_recorded = -1;       // lowest seq still in the ring buffer
  std::optional<CollectiveCall> last_completed_call;
  std::optional<CollectiveCall> pending_call;  // the oldest collective it entered and has not completed
  int64_t pending_seq = -1;
  double pending_s = -1;
};

struct GroupMatch {
  std::string name, desc;
  std::vector<int64_t> members;
  bool members_known = true;         // false: inferred from the ranks that recorded entries
  std::vector<MemberState> states;   // one per member, by rank
  std::optional<OpenCollective> open;
  std::vector<Mismatch> mismatches;  // ascending seq, at most kMaxMismatchesPerGroup
};

struct FrMatch {
  std::vector<GroupMatch> groups;    // the default group ("0") first, then by name
  std::vector<std::string> notes;    // e.g. members disagreeing on a group's ranks
};

inline constexpr size_t kMaxMismatchesPerGroup = 10;

// `world_size` (-1: unknown) gives the default group's members when no dump lists them.
FrMatch MatchFlightRecorders(const std::vector<FrDump>& dumps, int64_t world_size);

}  // namespace rankscope::hang

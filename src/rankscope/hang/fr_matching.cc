#include "rankscope/hang/fr_matching.h"

#include <algorithm>
#include <map>
#include <set>

#include "rankscope/hang/rank_ranges.h"

namespace rankscope::hang {
namespace {

// rank -> seq -> call (entries of one launch folded)
using CallsBySeq = std::map<int64_t, CollectiveCall>;

struct RankEntries {
  const FrDump* dump = nullptr;
  CallsBySeq calls;
  std::map<int64_t, bool> completed;        // seq -> every entry of it completed
  std::map<int64_t, int64_t> created;       // seq -> earliest time_created_ns
};

RankEntries Collect(const FrDump& dump, const std::string& group) {
  RankEntries r;
  r.dump = &dump;
  for (const FrEntry& e : dump.entries) {
    if (e.pg_name != group || e.is_p2p) continue;
    CollectiveCall& c = r.calls[e.collective_seq_id];
    c.op = c.op.empty() ? e.profiling_name : c.op;
    for (const auto& s : e.input_sizes) c.sizes.push_back(s);
    for (const auto& d : e.input_dtypes) c.dtypes.push_back(d);
    auto [it, fresh] = r.completed.try_emplace(e.collective_seq_id, e.completed());
    if (!fresh) it->second = it->second && e.completed();
    auto [ct, cfresh] = r.created.try_emplace(e.collective_seq_id, e.time_created_ns);
    if (!cfresh && e.time_created_ns > 0) ct->second = std::min(ct->second, e.time_created_ns);
  }
  return r;
}

double PendingSeconds(const FrDump* dump, int64_t created_ns) {
  if (!dump || dump->time_unix_ns <= 0 || created_ns <= 0) return -1;
  return std::max<double>(0, (dump->time_unix_ns - created_ns) / 1e9);
}

std::string FieldThatDiffers(const CollectiveCall& a, const CollectiveCall& b) {
  if (a.op != b.op) return "op";
  if (a.sizes != b.sizes) return "size";
  return "dtype";
}

// Groups the calls made at one seq; most ranks first.
std::vector<CallGroup> GroupCalls(const std::map<int64_t, const CollectiveCall*>& calls) {
  std::vector<CallGroup> groups;
  for (const auto& entry : calls) {
    const CollectiveCall& call = *entry.second;
    auto it = std::find_if(groups.begin(), groups.end(), [&](const CallGroup& g) { return g.call == call; });
    if (it == groups.end()) {
      groups.push_back({call, {entry.first}});
    } else {
      it->ranks.push_back(entry.first);
    }
  }
  std::stable_sort(groups.begin(), groups.end(),
                   [](const CallGroup& a, const CallGroup& b) { return a.ranks.size() > b.ranks.size(); });
  return groups;
}

std::vector<int64_t> Members(const std::string& name, const std::vector<FrDump>& dumps, int64_t world_size,
                             const std::map<int64_t, RankEntries>& entries, bool* known, std::vector<std::string>* notes) {
  std::vector<int64_t> members;
  for (const FrDump& d : dumps) {
    auto it = d.groups.find(name);
    if (it == d.groups.end() || it->second.ranks.empty()) continue;
    if (members.empty()) {
      members = it->second.ranks;
    } else if (members != it->second.ranks) {
      notes->push_back(fmt::format("process group {}: rank {} lists members {}, another dump {}", name, d.rank,
                                   FormatRankRanges(it->second.ranks), FormatRankRanges(members)));
    }
  }
  *known = true;
  if (!members.empty()) return members;
  if (name == "0" && world_size > 0) {
    for (int64_t r = 0; r < world_size; ++r) members.push_back(r);
    return members;
  }
  *known = false;
  for (const auto& [rank, e] : entries) {
    if (!e.calls.empty()) members.push_back(rank);
  }
  return members;
}

GroupMatch MatchGroup(const std::string& name, const std::vector<FrDump>& dumps, int64_t world_size,
                      std::vector<std::string>* notes) {
  GroupMatch g;
  g.name = name;
  std::map<int64_t, RankEntries> by_rank;
  for (const FrDump& d : dumps) {
    if (auto it = d.groups.find(name); it != d.groups.end() && g.desc.empty()) g.desc = it->second.desc;
    by_rank[d.rank] = Collect(d, name);
  }
  g.members = Members(name, dumps, world_size, by_rank, &g.members_known, notes);

  std::set<int64_t> seqs;
  for (int64_t r : g.members) {
    auto it = by_rank.find(r);
    MemberState s;
    s.rank = r;
    if (it != by_rank.end()) {
      const RankEntries& e = it->second;
      s.has_dump = true;
      for (const auto& [seq, call] : e.calls) {
        seqs.insert(seq);
        s.last_entered = std::max(s.last_entered, seq);
        if (s.first_recorded < 0) s.first_recorded = seq;
        if (e.completed.at(seq)) {
          if (seq > s.last_completed) {
            s.last_completed = seq;
            s.last_completed_call = call;
          }
        } else if (!s.pending_call) {
          s.pending_call = call;
          s.pending_seq = seq;
          s.pending_s = PendingSeconds(e.dump, e.created.at(seq));
        }
      }
    }
    g.states.push_back(std::move(s));
  }

  for (int64_t seq : seqs) {
    std::map<int64_t, const CollectiveCall*> calls;
    int64_t created = 0;
    const FrDump* first_dump = nullptr;
    OpenCollective open;
    open.seq = seq;
    for (const MemberState& s : g.states) {
      if (!s.has_dump) {
        open.unknown.push_back(s.rank);
        continue;
      }
      const RankEntries& e = by_rank.at(s.rank);
      auto it = e.calls.find(seq);
      if (it != e.calls.end()) {
        calls[s.rank] = &it->second;
        open.entered.push_back(s.rank);
        if (e.completed.at(seq)) open.completed.push_back(s.rank);
        const int64_t c = e.created.at(seq);
        if (c > 0 && (created == 0 || c < created)) {
          created = c;
          first_dump = e.dump;
        }
      } else if (s.last_entered < seq) {
        open.missing.push_back(s.rank);
      }
      // else: older than this rank's ring buffer, or a seq it skipped: counted as neither.
    }
    const std::vector<CallGroup> groups = GroupCalls(calls);
    if (groups.size() > 1 && g.mismatches.size() < kMaxMismatchesPerGroup) {
      Mismatch m;
      m.seq = seq;
      m.majority = groups.front();
      m.odd.assign(groups.begin() + 1, groups.end());
      m.tie = groups[1].ranks.size() == groups[0].ranks.size();
      m.field = FieldThatDiffers(groups[0].call, groups[1].call);
      m.time_created_ns = created;
      g.mismatches.push_back(std::move(m));
    }
    const bool everyone_done = open.missing.empty() && open.completed.size() == open.entered.size();
    if (!g.open && !everyone_done) {
      if (!groups.empty()) open.call = groups.front().call;
      open.time_created_ns = created;
      open.pending_s = PendingSeconds(first_dump, created);
      g.open = std::move(open);
    }
  }
  return g;
}

std::string JoinSizes(const std::vector<int64_t>& dims) {
  std::string out = "[";
  for (size_t i = 0; i < dims.size(); ++i) out += fmt::format("{}{}", i ? ", " : "", dims[i]);
  return out + "]";
}

}  // namespace

std::string CollectiveCall::SizesText() const {
  std::string out = "[";
  for (size_t i = 0; i < sizes.size(); ++i) out += (i ? ", " : "") + JoinSizes(sizes[i]);
  return out + "]";
}

std::string CollectiveCall::DtypesText() const {
  std::string out;
  for (size_t i = 0; i < dtypes.size(); ++i) out += (i ? ", " : "") + dtypes[i];
  return out;
}

FrMatch MatchFlightRecorders(const std::vector<FrDump>& dumps, int64_t world_size) {
  FrMatch out;
  std::set<std::string> names;
  for (const FrDump& d : dumps) {
    for (const FrEntry& e : d.entries) {
      if (!e.is_p2p) names.insert(e.pg_name);
    }
  }
  std::vector<std::string> order(names.begin(), names.end());
  std::stable_sort(order.begin(), order.end(), [](const std::string& a, const std::string& b) {
    return (a == "0") > (b == "0");  // the default group first
  });
  for (const std::string& name : order) out.groups.push_back(MatchGroup(name, dumps, world_size, &out.notes));
  return out;
}

}  // namespace rankscope::hang

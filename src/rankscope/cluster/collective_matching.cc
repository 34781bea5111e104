#include "rankscope/cluster/collective_matching.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

namespace rankscope {
namespace {

// Instances of one group, step and channel on one rank, in start order, get ordinals 0, 1, ...
using Key = std::tuple<uint32_t /*group*/, int64_t /*seq*/, int64_t /*step*/, std::string /*op*/,
                       int64_t /*bytes*/, int32_t /*stream*/, uint32_t /*ordinal*/>;

std::string OpClass(std::string_view op) {
  if (op == "send" || op == "recv" || op == "send_recv" || op == "sendrecv") return "p2p";
  return std::string(op);
}

// "p2p 3>5": a transfer from rank 3 to rank 5, seen from either end; empty when the instance is
// not a send or a receive whose peer the trace named.
std::string PairChannel(std::string_view op, const CollectiveInstance& c, int64_t self) {
  if (c.peer < 0 || c.peer == self) return "";
  if (op == "send") return "p2p " + std::to_string(self) + ">" + std::to_string(c.peer);
  if (op == "recv") return "p2p " + std::to_string(c.peer) + ">" + std::to_string(self);
  return "";
}

std::string GroupIdentity(const ProcessGroupRef& g) { return g.name + '\x1f' + g.desc + '\x1f' + g.ranks; }

struct GroupState {
  bool all_seq = true;
  bool all_step = true;
  std::set<uint32_t> ranks;  // analysed ranks with an instance of the group
};

class Matcher {
 public:
  explicit Matcher(const std::vector<RankSummary>& ranks) : ranks_(ranks) {}

  CollectiveMatching Run() {
    ScanGroups();
    for (uint32_t r = 0; r < ranks_.size(); ++r) AddRank(r);
    Finish();
    return std::move(out_);
  }

 private:
  // Pass 1: the groups, and whether every instance of each has a sequence number and a step.
  void ScanGroups() {
    local_to_global_.resize(ranks_.size());
    for (uint32_t r = 0; r < ranks_.size(); ++r) {
      const RankSummary& s = ranks_[r];
      for (const ProcessGroupRef& g : s.process_groups) {
        auto [it, inserted] = by_identity_.try_emplace(GroupIdentity(g), static_cast<uint32_t>(out_.groups.size()));
        if (inserted) {
          out_.groups.push_back({g.name, g.desc, g.ranks, {}, MatchKind::kTraceOrder, 0, 0});
          state_.emplace_back();
        }
        local_to_global_[r].push_back(it->second);
      }
      for (const CollectiveInstance& c : s.collectives) {
        GroupState& st = state_[local_to_global_[r][c.group]];
        st.all_seq = st.all_seq && c.seq >= 0;
        st.all_step = st.all_step && c.step >= 0;
        st.ranks.insert(r);
      }
    }
    for (size_t g = 0; g < out_.groups.size(); ++g) {
      out_.groups[g].kind = state_[g].all_seq ? MatchKind::kSequence
                            : state_[g].all_step ? MatchKind::kStepOrder : MatchKind::kTraceOrder;
      out_.groups[g].members = Members(out_.groups[g], state_[g]);
    }
  }

  // The analysed ranks the group's member list names; the ranks seen with it when the trace
  // has no list, or when the list leaves out a rank that took part (a list we cannot trust).
  std::vector<uint32_t> Members(const CollectiveGroup& g, const GroupState& st) const {
    const std::vector<int64_t> listed = ParseRankList(g.ranks);
    std::vector<uint32_t> members;
    for (uint32_t r = 0; r < ranks_.size(); ++r) {
      if (std::find(listed.begin(), listed.end(), ranks_[r].rank.rank) != listed.end()) members.push_back(r);
    }
    const bool covers = std::includes(members.begin(), members.end(), st.ranks.begin(), st.ranks.end());
    if (listed.empty() || !covers) members.assign(st.ranks.begin(), st.ranks.end());
    return members;
  }

  // Pass 2: every instance of rank r under its key.
  void AddRank(uint32_t r) {
    const RankSummary& s = ranks_[r];
    std::map<Key, uint32_t> next_ordinal;
    for (uint32_t j = 0; j < s.collectives.size(); ++j) {
      const CollectiveInstance& c = s.collectives[j];
      const uint32_t g = local_to_global_[r][c.group];
      const CollectiveType& type = s.collective_types[c.type];
      Key key{g, -1, -1, "", -1, -1, 0};
      std::string op = OpClass(type.op);
      const std::string pair = PairChannel(type.op, c, s.rank.rank);
      if (!pair.empty() && out_.groups[g].kind != MatchKind::kSequence) op = pair;
      if (out_.groups[g].kind == MatchKind::kSequence) {
        std::get<1>(key) = c.seq;
      } else {
        if (out_.groups[g].kind == MatchKind::kStepOrder) std::get<2>(key) = c.step;
        std::get<3>(key) = op;
        if (!type.on_gpu) std::get<4>(key) = c.bytes;
        if (type.on_gpu && out_.groups[g].name.empty()) std::get<5>(key) = c.stream;
        std::get<6>(key) = next_ordinal[key]++;
      }
      auto [it, inserted] = index_.try_emplace(std::move(key), static_cast<uint32_t>(out_.instances.size()));
      if (inserted) {
        MatchedCollective m;
        m.group = g;
        m.seq = std::get<1>(it->first);
        m.step = std::get<2>(it->first);
        m.ordinal = std::get<6>(it->first);
        m.op = type.op;
        m.pair = std::get<3>(it->first).starts_with("p2p ");
        out_.instances.push_back(std::move(m));
      }
      MatchedCollective& m = out_.instances[it->second];
      if (!m.participants.empty() && m.participants.back().rank == r) {
        ++out_.duplicates;
        continue;
      }
      m.participants.push_back({r, j});
    }
  }

  // Keeps instances with two or more participants, in key order.
  void Finish() {
    std::vector<MatchedCollective> kept;
    kept.reserve(index_.size());
    for (auto& [key, i] : index_) {
      MatchedCollective& m = out_.instances[i];
      if (m.participants.size() < 2) {
        if (out_.groups[m.group].members.size() > 1) ++out_.single;
        continue;
      }
      CollectiveGroup& g = out_.groups[m.group];
      m.complete = m.participants.size() == (m.pair ? 2 : g.members.size());
      ++g.instances;
      g.complete += m.complete ? 1 : 0;
      kept.push_back(std::move(m));
    }
    out_.instances = std::move(kept);
  }

  const std::vector<RankSummary>& ranks_;
  CollectiveMatching out_;
  std::unordered_map<std::string, uint32_t> by_identity_;
  std::vector<GroupState> state_;
  std::vector<std::vector<uint32_t>> local_to_global_;  // [rank][local group] -> global group
  std::map<Key, uint32_t> index_;
};

}  // namespace

std::string_view MatchKindName(MatchKind k) {
  switch (k) {
    case MatchKind::kSequence: return "sequence";
    case MatchKind::kStepOrder: return "step_order";
    case MatchKind::kTraceOrder: return "trace_order";
  }
  return "trace_order";
}

std::vector<int64_t> ParseRankList(std::string_view text) {
  std::vector<int64_t> out;
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] < '0' || text[i] > '9') {
      ++i;
      continue;
    }
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(text.data() + i, text.data() + text.size(), v);
    if (ec != std::errc()) return {};
    out.push_back(v);
    i = static_cast<size_t>(end - text.data());
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

CollectiveMatching MatchCollectives(const std::vector<RankSummary>& ranks) { return Matcher(ranks).Run(); }

}  // namespace rankscope

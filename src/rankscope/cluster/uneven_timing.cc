#include "rankscope/cluster/uneven_timing.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <unordered_map>
#include <utility>

namespace rankscope {
namespace {

using Work = std::pair<uint64_t, int64_t>;  // (signature, shaped ops) of a step

Work WorkOf(const StepSummary& s) { return {s.work_signature, s.shaped_ops}; }

// The steps every member has, in step order: [member][k].
std::vector<std::vector<const StepSummary*>> SharedSteps(const std::vector<RankSummary>& ranks,
                                                         const std::vector<uint32_t>& members,
                                                         const std::vector<int64_t>* only) {
  std::map<int64_t, std::vector<const StepSummary*>> by_number;
  for (size_t m = 0; m < members.size(); ++m) {
    for (const StepSummary& s : ranks[members[m]].steps) {
      if (only && std::find(only->begin(), only->end(), s.number) == only->end()) continue;
      std::vector<const StepSummary*>& seen = by_number[s.number];
      if (seen.size() == m) seen.push_back(&s);  // once per member
    }
  }
  std::vector<std::vector<const StepSummary*>> table(members.size());
  for (const auto& [number, seen] : by_number) {
    if (seen.size() != members.size()) continue;
    for (size_t m = 0; m < members.size(); ++m) table[m].push_back(seen[m]);
  }
  return table;
}

// The work more than half of `works` share, if any.
std::optional<Work> SharedByMost(const std::vector<Work>& works) {
  std::map<Work, size_t> count;
  for (const Work& w : works) ++count[w];
  for (const auto& [work, n] : count) {
    if (2 * n > works.size()) return work;
  }
  return std::nullopt;
}

// The members whose work differs from the work most of them share (all when none is shared by most).
std::vector<uint32_t> OwnWork(const std::vector<std::vector<const StepSummary*>>& table,
                              const std::vector<uint32_t>& members) {
  std::vector<Work> works;
  for (const auto& steps : table) works.push_back(WorkOf(*steps.front()));
  const std::optional<Work> most = SharedByMost(works);
  std::vector<uint32_t> out;
  for (size_t m = 0; m < members.size(); ++m) {
    if (!most || works[m] != *most) out.push_back(members[m]);
  }
  return out;
}

// The steps (of `table`, [member][k]) whose slowest member ran work of its own: neither the work
// most of its peers ran in the step nor the work it ran in most steps — the only steps its input
// can have made it the slowest. Steps without a known slowest member are not counted.
size_t StepsItsWorkExplains(const std::vector<std::vector<const StepSummary*>>& table,
                            const std::map<int64_t, size_t>& slowest) {
  std::vector<std::optional<Work>> usual(table.size());  // per member, over its steps
  for (size_t m = 0; m < table.size(); ++m) {
    std::vector<Work> works;
    for (const StepSummary* s : table[m]) works.push_back(WorkOf(*s));
    usual[m] = SharedByMost(works);
  }
  size_t explained = 0;
  for (size_t k = 0; k < table.front().size(); ++k) {
    const auto it = slowest.find(table.front()[k]->number);
    if (it == slowest.end() || it->second >= table.size()) continue;
    const Work own = WorkOf(*table[it->second][k]);
    std::vector<Work> peers;
    for (size_t m = 0; m < table.size(); ++m) {
      if (m != it->second) peers.push_back(WorkOf(*table[m][k]));
    }
    if (own != SharedByMost(peers) && own != usual[it->second]) ++explained;
  }
  return explained;
}

Finding AsUnevenTiming(const Finding& f, const SameWork& work, const std::vector<int64_t>& rank_numbers) {
  Finding u = AsMachineNote(f, FindingKind::kUnevenTiming);
  Evidence same;
  same.kind = EvidenceKind::kSameWork;
  same.detail = work.by_slowest ? "slowest_rank" : work.across_ranks ? "" : "per_rank";
  same.ranks = f.ranks;
  same.Set("steps", static_cast<double>(work.steps));
  same.Set("shaped_ops", static_cast<double>(work.shaped_ops));
  if (work.by_slowest) same.Set("explained_steps", static_cast<double>(work.explained_steps));
  u.evidence.push_back(std::move(same));
  if (!work.own_work.empty()) {
    Evidence own;
    own.kind = EvidenceKind::kSameWork;
    own.detail = "own_work";
    for (uint32_t m : work.own_work) own.ranks.push_back(rank_numbers[m]);
    own.Set("steps", static_cast<double>(work.steps));
    u.evidence.push_back(std::move(own));
  }
  u.next = {NextStepKind::kCheckHost, f.hosts.size() == 1 ? f.hosts.front() : "", ""};
  return u;
}

// Step number -> position among the finding's ranks (sorted, as its members) of the step's
// slowest rank, from its imbalance evidence (the slowest rank of each judged step, in order).
std::map<int64_t, size_t> SlowestMemberOfEachStep(const Finding& f, const std::vector<int64_t>* judged) {
  std::map<int64_t, size_t> out;
  const Evidence* e = f.FindEvidence(EvidenceKind::kStepImbalance);
  if (!judged || !e || e->ranks.size() != judged->size()) return out;
  for (size_t k = 0; k < judged->size(); ++k) {
    const auto at = std::find(f.ranks.begin(), f.ranks.end(), e->ranks[k]);
    if (at != f.ranks.end()) out[(*judged)[k]] = static_cast<size_t>(at - f.ranks.begin());
  }
  return out;
}

}  // namespace

SameWork CompareStepWork(const std::vector<RankSummary>& ranks, const std::vector<uint32_t>& members,
                         const std::vector<int64_t>* only_steps, const std::map<int64_t, size_t>* slowest) {
  SameWork out;
  if (members.size() < 2) return out;
  const std::vector<std::vector<const StepSummary*>> table = SharedSteps(ranks, members, only_steps);
  const size_t steps = table.front().size();
  if (steps < kMinSameWorkSteps) return out;
  bool across = true;  // in each step, every member's work is the first member's
  bool along = true;   // on each member, every step's work is its first step's
  std::vector<int64_t> ops;
  for (size_t m = 0; m < members.size(); ++m) {
    for (size_t k = 0; k < steps; ++k) {
      const StepSummary& s = *table[m][k];
      if (s.shaped_ops == 0) {  // no shapes recorded: the traces cannot say
        out.no_shapes = true;
        return out;
      }
      across = across && WorkOf(s) == WorkOf(*table.front()[k]);
      along = along && WorkOf(s) == WorkOf(*table[m].front());
      ops.push_back(s.shaped_ops);
    }
  }
  size_t explained = 0;
  if (!across && !along) {
    if (!slowest) return out;
    explained = StepsItsWorkExplains(table, *slowest);
    if (2 * explained >= steps) return out;  // its own work made the slowest rank in half the steps or more
    out.by_slowest = true;
    out.explained_steps = explained;
  }
  std::nth_element(ops.begin(), ops.begin() + static_cast<std::ptrdiff_t>(ops.size() / 2), ops.end());
  out.same = true;
  out.across_ranks = across;
  out.steps = steps;
  out.shaped_ops = ops[ops.size() / 2];
  if (!across && !out.by_slowest) out.own_work = OwnWork(table, members);
  return out;
}

bool AttributeImbalanceToTiming(const std::vector<RankSummary>& ranks, const std::vector<int64_t>& rank_numbers,
                                const std::map<int64_t, std::vector<int64_t>>& judged_steps,
                                std::vector<Finding>* findings) {
  std::unordered_map<int64_t, uint32_t> index_of;
  for (uint32_t i = 0; i < rank_numbers.size() && i < ranks.size(); ++i) index_of[rank_numbers[i]] = i;
  bool changed = false;
  for (Finding& f : *findings) {
    if (f.kind != FindingKind::kPerStepImbalance || f.ranks.size() < 2) continue;
    std::vector<uint32_t> members;
    for (int64_t r : f.ranks) {
      auto it = index_of.find(r);
      if (it == index_of.end()) break;
      members.push_back(it->second);
    }
    if (members.size() != f.ranks.size()) continue;
    int64_t stage = -1;  // the finding's subject: its stage number
    std::from_chars(f.subject.data(), f.subject.data() + f.subject.size(), stage);
    const auto judged = judged_steps.find(stage);
    const std::vector<int64_t>* steps = judged != judged_steps.end() ? &judged->second : nullptr;
    const std::map<int64_t, size_t> slowest = SlowestMemberOfEachStep(f, steps);
    const SameWork work = CompareStepWork(ranks, members, steps, slowest.empty() ? nullptr : &slowest);
    if (work.no_shapes && !f.FindEvidence(EvidenceKind::kSameWork)) {
      // The finding stands, unconfirmed: its advice says what would tell (the report's words).
      Evidence unknown;
      unknown.kind = EvidenceKind::kSameWork;
      unknown.detail = "no_shapes";
      unknown.ranks = f.ranks;
      f.evidence.push_back(std::move(unknown));
    }
    if (!work.same) continue;
    f = AsUnevenTiming(f, work, rank_numbers);
    changed = true;
  }
  return changed;
}

}  // namespace rankscope

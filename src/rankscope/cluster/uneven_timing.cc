#include "rankscope/cluster/uneven_timing.h"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace rankscope {
namespace {

Finding AsUnevenTiming(const Finding& f, const SameWork& work) {
  Finding u = AsMachineNote(f, FindingKind::kUnevenTiming);
  Evidence same;
  same.kind = EvidenceKind::kSameWork;
  same.ranks = f.ranks;
  same.Set("steps", static_cast<double>(work.steps));
  same.Set("shaped_ops", static_cast<double>(work.shaped_ops));
  u.evidence.push_back(std::move(same));
  u.next = {NextStepKind::kCheckHost, f.hosts.size() == 1 ? f.hosts.front() : "", ""};
  return u;
}

}  // namespace

SameWork CompareStepWork(const std::vector<RankSummary>& ranks, const std::vector<uint32_t>& members) {
  SameWork out;
  if (members.size() < 2) return out;
  // Step number -> (signature of the first member, members that have it with that signature).
  std::map<int64_t, std::pair<const StepSummary*, size_t>> steps;
  for (const StepSummary& s : ranks[members.front()].steps) steps[s.number] = {&s, 1};
  for (size_t m = 1; m < members.size(); ++m) {
    for (const StepSummary& s : ranks[members[m]].steps) {
      auto it = steps.find(s.number);
      if (it == steps.end()) continue;
      if (s.shaped_ops == 0 || s.work_signature != it->second.first->work_signature ||
          s.shaped_ops != it->second.first->shaped_ops) {
        return out;  // different work in a shared step (or no shapes): not the same work
      }
      ++it->second.second;
    }
  }
  std::vector<int64_t> ops;
  for (const auto& [number, first] : steps) {
    if (first.second != members.size()) continue;  // not a step every member has
    if (first.first->shaped_ops == 0) return out;
    ops.push_back(first.first->shaped_ops);
  }
  if (ops.size() < kMinSameWorkSteps) return out;
  std::nth_element(ops.begin(), ops.begin() + ops.size() / 2, ops.end());
  out.same = true;
  out.steps = ops.size();
  out.shaped_ops = ops[ops.size() / 2];
  return out;
}

bool AttributeImbalanceToTiming(const std::vector<RankSummary>& ranks, const std::vector<int64_t>& rank_numbers,
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
    const SameWork work = CompareStepWork(ranks, members);
    if (!work.same) continue;
    f = AsUnevenTiming(f, work);
    changed = true;
  }
  return changed;
}

}  // namespace rankscope

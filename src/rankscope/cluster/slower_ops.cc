#include "rankscope/cluster/slower_ops.h"

#include <algorithm>
#include <cmath>

#include "rankscope/cluster/communication_work.h"
#include "rankscope/cluster/robust_rule.h"

namespace rankscope {
namespace {

struct Compared {
  const FunctionSamples* function;
  double peers_ns;  // the peers' median time per step
  double ratio;
};

// The rank's value of `f` and the peers' median value and calls (of a pair: the other's); false
// when the rank or no peer runs it.
bool RankAndPeers(const FunctionSamples& f, uint32_t rank, const FunctionValue** mine, double* peers_ns,
                  double* peers_calls) {
  std::vector<double> values, calls;
  *mine = nullptr;
  for (const FunctionValue& v : f.samples) {
    if (v.rank == rank) {
      *mine = &v;
    } else if (v.calls > 0) {
      values.push_back(v.value_ns);
      calls.push_back(v.calls);
    }
  }
  if (!*mine || (*mine)->calls <= 0 || values.empty()) return false;
  *peers_ns = ComputeRobustStats(values).median;
  *peers_calls = ComputeRobustStats(calls).median;
  return *peers_ns > 0;
}

SlowerOps OfRank(const std::vector<FunctionSamples>& functions, uint32_t rank, FunctionKind kind) {
  std::vector<Compared> compared;
  for (const FunctionSamples& f : functions) {
    if (f.kind != kind || f.wait || !f.detail.empty() || IsCommunicationWork(f.kind, f.name)) continue;
    const FunctionValue* mine = nullptr;
    double peers_ns = 0, peers_calls = 0;
    if (!RankAndPeers(f, rank, &mine, &peers_ns, &peers_calls)) continue;
    if (std::abs(mine->calls - peers_calls) > 0.1 * peers_calls) continue;  // not the same work
    compared.push_back({&f, peers_ns, mine->value_ns / peers_ns});
  }
  std::sort(compared.begin(), compared.end(), [](const Compared& a, const Compared& b) {
    return a.peers_ns != b.peers_ns ? a.peers_ns > b.peers_ns : a.function->name < b.function->name;
  });
  if (compared.size() > kSlowerOpsCompared) compared.resize(kSlowerOpsCompared);
  SlowerOps out;
  out.kind = kind;
  out.compared = compared.size();
  if (compared.size() < kSlowerOpsCompared / 2) return out;
  std::vector<double> ratios;
  for (const Compared& c : compared) {
    ratios.push_back(c.ratio);
    if (c.ratio >= 1.1) ++out.slower;
  }
  out.median_ratio = ComputeRobustStats(ratios).median;
  out.largest = compared.front().function->name;
  out.largest_ratio = compared.front().ratio;
  out.found = out.median_ratio >= kSlowerOpsRatio && 3 * out.slower >= 2 * out.compared;
  return out;
}

// Whether rank `r` computed what its peers did: in most steps it shares, its work signature is one
// of theirs. Unknown where a step recorded no shapes.
RankWork WorkOf(const std::vector<RankSummary>& ranks, uint32_t r) {
  size_t same = 0, steps = 0;
  for (const StepSummary& s : ranks[r].steps) {
    if (s.shaped_ops == 0) return RankWork::kUnknown;
    bool shared = false, matched = false;
    for (uint32_t p = 0; p < ranks.size(); ++p) {
      if (p == r) continue;
      for (const StepSummary& q : ranks[p].steps) {
        if (q.number != s.number) continue;
        if (q.shaped_ops == 0) return RankWork::kUnknown;
        shared = true;
        matched = matched || q.work_signature == s.work_signature;
      }
    }
    steps += shared;
    same += matched;
  }
  if (steps == 0) return RankWork::kUnknown;
  return 2 * same > steps ? RankWork::kSame : RankWork::kDiffers;
}

// Whether a finding's functions are all the same calls as on the peers (none is work of its own).
bool SameCallsOnly(const Finding& f) {
  if (f.subject_kind == "untraced" || f.subject_kind == "cpu_time") return false;
  for (const Evidence& e : f.evidence) {
    if (e.kind != EvidenceKind::kFunction) continue;
    const double calls = e.Get("calls"), median = e.Get("median_calls");
    if (e.subject_kind == "untraced" || calls - median >= std::max(1.0, 0.1 * median)) return false;
  }
  return true;
}

}  // namespace

std::vector<SlowerOps> FindSlowerOps(const std::vector<FunctionSamples>& functions,
                                     const std::vector<RankSummary>& ranks) {
  std::vector<SlowerOps> out(ranks.size());
  for (uint32_t r = 0; r < ranks.size(); ++r) {
    out[r] = OfRank(functions, r, ranks[r].has_gpu ? FunctionKind::kKernel : FunctionKind::kCpuOp);
    if (!out[r].found) continue;
    out[r].work = WorkOf(ranks, r);
    if (out[r].work == RankWork::kDiffers) out[r].found = false;  // larger inputs, not a slower processor
  }
  return out;
}

void NoteSlowerOps(const std::vector<SlowerOps>& slower, const std::vector<int64_t>& rank_numbers,
                   std::vector<Finding>* findings) {
  for (Finding& f : *findings) {
    const bool about_a_rank = f.kind == FindingKind::kSlowRank || f.kind == FindingKind::kSlowFunction ||
                              f.kind == FindingKind::kExtraWork;
    if (!about_a_rank || f.ranks.size() != 1 || !SameCallsOnly(f)) continue;
    const auto it = std::find(rank_numbers.begin(), rank_numbers.end(), f.ranks.front());
    if (it == rank_numbers.end()) continue;
    const SlowerOps& s = slower[static_cast<size_t>(it - rank_numbers.begin())];
    if (!s.found) continue;
    Evidence e;
    e.kind = EvidenceKind::kSlowerOps;
    e.rank = f.ranks.front();
    e.subject = s.largest;
    e.subject_kind = FunctionKindName(s.kind);
    e.Set("compared", static_cast<double>(s.compared)).Set("slower", static_cast<double>(s.slower));
    e.Set("median_ratio", s.median_ratio).Set("largest_ratio", s.largest_ratio);
    e.Set("same_shapes", s.work == RankWork::kSame ? 1 : 0);  // else the traces carry no shapes
    f.evidence.push_back(std::move(e));
    f.next = {NextStepKind::kCheckHost, f.hosts.size() == 1 ? f.hosts.front() : "", "slower_ops"};
  }
}

}  // namespace rankscope

#include "rankscope/cluster/slower_ops.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include "rankscope/cluster/communication_work.h"
#include "rankscope/cluster/robust_rule.h"

namespace rankscope {
namespace {

// A candidate: one of the job's largest compute functions, its values sorted once, so that each
// rank's peers' median is a leave-one-out lookup (thousands of ranks: no pass over the others).
struct Candidate {
  const FunctionSamples* function;
  double median_ns;                 // over the ranks that run it
  std::vector<double> values, calls;  // sorted, of the ranks that run it
};

std::vector<Candidate> LargestFunctions(const std::vector<FunctionSamples>& functions, FunctionKind kind) {
  std::vector<Candidate> out;
  for (const FunctionSamples& f : functions) {
    if (f.kind != kind || f.wait || !f.detail.empty() || IsCommunicationWork(f.kind, f.name)) continue;
    Candidate c{&f, 0, {}, {}};
    for (const FunctionValue& v : f.samples) {
      if (v.calls <= 0) continue;
      c.values.push_back(v.value_ns);
      c.calls.push_back(v.calls);
    }
    if (c.values.size() < 2) continue;
    std::sort(c.values.begin(), c.values.end());
    std::sort(c.calls.begin(), c.calls.end());
    c.median_ns = MedianWithout(c.values, {});
    out.push_back(std::move(c));
  }
  // Twice as many as compared: some are not the same calls on a given rank.
  const size_t keep = std::min(out.size(), 2 * kSlowerOpsCompared);
  std::partial_sort(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(keep), out.end(),
                    [](const Candidate& a, const Candidate& b) {
                      return a.median_ns != b.median_ns ? a.median_ns > b.median_ns
                                                        : a.function->name < b.function->name;
                    });
  out.resize(keep);
  return out;
}

SlowerOps OfRank(const std::vector<Candidate>& candidates, uint32_t rank, FunctionKind kind) {
  SlowerOps out;
  out.kind = kind;
  std::vector<double> ratios;
  for (const Candidate& c : candidates) {
    if (ratios.size() == kSlowerOpsCompared) break;
    const std::vector<FunctionValue>& samples = c.function->samples;  // by rank index
    const auto mine = std::lower_bound(samples.begin(), samples.end(), rank,
                                       [](const FunctionValue& v, uint32_t r) { return v.rank < r; });
    if (mine == samples.end() || mine->rank != rank || mine->calls <= 0) continue;
    const double peers_ns = MedianWithout(c.values, {mine->value_ns});
    const double peers_calls = MedianWithout(c.calls, {mine->calls});
    if (peers_ns <= 0 || std::abs(mine->calls - peers_calls) > 0.1 * peers_calls) continue;  // not the same work
    ratios.push_back(mine->value_ns / peers_ns);
    if (ratios.size() == 1) {
      out.largest = c.function->name;
      out.largest_ratio = ratios.back();
    }
    if (ratios.back() >= 1.1) ++out.slower;
  }
  out.compared = ratios.size();
  if (out.compared < kSlowerOpsCompared / 2) return out;
  out.median_ratio = ComputeRobustStats(ratios).median;
  out.found = out.median_ratio >= kSlowerOpsRatio && 3 * out.slower >= 2 * out.compared;
  return out;
}

// How many ranks ran each work signature, per step number; empty where some step has no shapes.
using SignatureCounts = std::map<int64_t, std::unordered_map<uint64_t, uint32_t>>;
SignatureCounts CountSignatures(const std::vector<RankSummary>& ranks) {
  SignatureCounts counts;
  for (const RankSummary& r : ranks) {
    for (const StepSummary& s : r.steps) {
      if (s.shaped_ops == 0) return {};
      ++counts[s.number][s.work_signature];
    }
  }
  return counts;
}

// Whether rank `r` computed what its peers did: in most of its steps that a peer has too, some
// peer's work signature is its own.
RankWork WorkOf(const SignatureCounts& counts, const RankSummary& r) {
  if (counts.empty()) return RankWork::kUnknown;
  size_t same = 0, steps = 0;
  for (const StepSummary& s : r.steps) {
    const auto step = counts.find(s.number);
    uint32_t others = 0, matching = 0;
    for (const auto& [signature, n] : step->second) {
      others += n;
      if (signature == s.work_signature) matching = n - 1;  // without its own
    }
    if (others <= 1) continue;  // no peer has the step
    ++steps;
    same += matching > 0;
  }
  if (steps == 0) return RankWork::kUnknown;
  return 2 * same > steps ? RankWork::kSame : RankWork::kDiffers;
}

// Whether a finding's functions are all the same calls as on the peers (none is work of its own),
// and its excess is not in data loading: a rank whose DataLoader workers fall behind waits for
// them, and their processes slow its operators down on the same cores (1.64x, seen): its input
// pipeline is the cause.
bool SameCallsOnly(const Finding& f) {
  if (f.subject_kind == "untraced" || f.subject_kind == "cpu_time") return false;
  const Evidence* phase = f.FindEvidence(EvidenceKind::kPhase);
  if ((f.subject_kind == "phase" && f.subject == "data_loading") || (phase && phase->subject == "data_loading")) {
    return false;
  }
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
  const bool gpu = std::any_of(ranks.begin(), ranks.end(), [](const RankSummary& r) { return r.has_gpu; });
  const FunctionKind kind = gpu ? FunctionKind::kKernel : FunctionKind::kCpuOp;
  const std::vector<Candidate> candidates = LargestFunctions(functions, kind);
  const SignatureCounts signatures = CountSignatures(ranks);
  for (uint32_t r = 0; r < ranks.size(); ++r) {
    out[r] = OfRank(candidates, r, kind);
    if (!out[r].found) continue;
    out[r].work = WorkOf(signatures, ranks[r]);
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

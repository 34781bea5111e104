#include "rankscope/cluster/findings.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

namespace rankscope {
namespace {

std::string PhaseWords(StepPhase p) {
  switch (p) {
    case StepPhase::kDataLoading: return "data loading";
    case StepPhase::kForward: return "forward";
    case StepPhase::kBackward: return "backward";
    case StepPhase::kOptimizer: return "the optimizer step";
    case StepPhase::kOther: return "time outside data loading, forward, backward and optimizer";
  }
  return "other";
}

std::string KindWords(FunctionKind k) {
  switch (k) {
    case FunctionKind::kKernel: return "kernel";
    case FunctionKind::kMemoryOp: return "memory op";
    case FunctionKind::kRuntimeCall: return "runtime call";
    case FunctionKind::kCpuOp: return "CPU op";
    case FunctionKind::kPythonPath: return "Python path";
    case FunctionKind::kCollective: return "collective";
  }
  return "function";
}

// A call path is long: its last frame says which function it is.
std::string FunctionLabel(const FunctionOutlier& f) {
  std::string name = f.name;
  if (f.kind == FunctionKind::kPythonPath) {
    if (const size_t bar = name.rfind('|'); bar != std::string::npos) name = "..." + name.substr(bar);
  }
  if (name.size() > 90) name = name.substr(0, 87) + "...";
  if (!f.detail.empty() && f.kind != FunctionKind::kPythonPath) name += " " + f.detail;
  return name;
}

class Writer {
 public:
  explicit Writer(const FindingInputs& in) : in_(in) {}

  std::vector<Finding> Build() {
    std::vector<Finding> out;
    std::set<uint32_t> covered;
    for (const SlowGroup& g : in_.slow->groups) {
      out.push_back(SlowGroupFinding(g));
      covered.insert(g.ranks.begin(), g.ranks.end());
    }
    for (Finding& f : SlowFunctionFindings(covered)) out.push_back(std::move(f));
    std::stable_sort(out.begin(), out.end(), [](const Finding& a, const Finding& b) {
      if (a.what_if.saving_ns != b.what_if.saving_ns) return a.what_if.saving_ns > b.what_if.saving_ns;
      return a.kind < b.kind;
    });
    return out;
  }

 private:
  int64_t RankNo(uint32_t i) const { return (*in_.ranks)[i].rank.rank; }
  const RankMetrics& M(uint32_t i) const { return (*in_.metrics)[i]; }
  std::string Per() const { return "/" + in_.unit; }

  std::string RankList(const std::vector<uint32_t>& ranks) const {
    std::vector<int64_t> numbers;
    for (uint32_t r : ranks) numbers.push_back(RankNo(r));
    std::sort(numbers.begin(), numbers.end());
    return fmt::format("{}", fmt::join(numbers, ", "));
  }

  std::string Ranks(const std::vector<uint32_t>& ranks) const {
    return (ranks.size() == 1 ? "rank " : "ranks ") + RankList(ranks);
  }

  double MedianOf(double RankMetrics::*field) const {
    std::vector<double> v;
    for (const RankMetrics& m : *in_.metrics) v.push_back(m.*field);
    return ComputeRobustStats(v).median;
  }

  // The spread of local times across ranks: savings below it are not measurable.
  double Noise() const { return in_.outlier_k * kMadToSigma * in_.slow->local.mad; }

  bool HasHosts() const {
    return !in_.hosts->empty() && in_.hosts->front().source != HostSource::kNone;
  }

  Finding SlowGroupFinding(const SlowGroup& g) const;
  void AddLocalEvidence(const SlowGroup& g, Finding* f) const;
  void AddArrivalEvidence(const SlowGroup& g, Finding* f) const;
  void AddHostEvidence(const SlowGroup& g, Finding* f) const;
  std::string NextForSlowGroup(const SlowGroup& g, const Finding& f) const;
  std::vector<Finding> SlowFunctionFindings(const std::set<uint32_t>& covered) const;

  const FindingInputs& in_;
};

Finding Writer::SlowGroupFinding(const SlowGroup& g) const {
  Finding f;
  f.kind = g.scope == SlowScope::kNode ? FindingKind::kSlowNode : FindingKind::kSlowRank;
  f.ranks = g.ranks;
  f.host = g.host;
  const std::set<uint32_t> mine(g.ranks.begin(), g.ranks.end());
  for (const PhaseOutlier& p : *in_.phases) {
    if (mine.count(p.rank)) {
      f.phase = p;
      break;
    }
  }
  for (const FunctionOutlier& fn : *in_.functions) {
    if (mine.count(fn.rank) && fn.kind != FunctionKind::kCollective && f.functions.size() < kFunctionsPerFinding &&
        fn.excess_ns >= kFunctionShareOfExcess * in_.slow->excess_ns[fn.rank]) {
      f.functions.push_back(fn);
    }
  }
  f.what_if = WhatIfLikeMedian(*in_.metrics, g.ranks);
  std::vector<double> excess;
  for (uint32_t r : g.ranks) excess.push_back(in_.slow->excess_ns[r]);
  const double typical = ComputeRobustStats(excess).median;
  const std::string where =
      f.phase ? fmt::format(", {} in {} (+{})", f.phase->excess_ns >= 0.5 * typical ? "mostly" : "partly",
                            PhaseWords(f.phase->phase), FormatDuration(f.phase->excess_ns))
              : "";
  if (f.kind == FindingKind::kSlowNode) {
    f.title = fmt::format("host {} is slow: its {} each spend about {} more per {} on their own work than the median "
                          "rank{}; every other rank waits for them",
                          g.host, Ranks(g.ranks), FormatDuration(typical), in_.unit, where);
  } else {
    f.title = fmt::format("rank {} is a straggler: it spends {} more per {} on its own work than the median rank{}; "
                          "every other rank waits for it",
                          RankNo(g.ranks.front()), FormatDuration(typical), in_.unit, where);
  }
  AddLocalEvidence(g, &f);
  AddArrivalEvidence(g, &f);
  if (f.phase) {
    f.evidence.push_back(fmt::format("{} ({} side) on rank {}: {}{} vs median {}", PhaseWords(f.phase->phase),
                                     f.phase->gpu ? "GPU" : "CPU", RankNo(f.phase->rank),
                                     FormatDuration(f.phase->value_ns), Per(), FormatDuration(f.phase->median_ns)));
  }
  for (const FunctionOutlier& fn : f.functions) {
    f.evidence.push_back(fmt::format("{} {} on rank {}: {}{} vs median {} (+{}; {:.1f} vs {:.1f} calls{})",
                                     KindWords(fn.kind), FunctionLabel(fn), RankNo(fn.rank), FormatDuration(fn.value_ns),
                                     Per(), FormatDuration(fn.median_ns), FormatDuration(fn.excess_ns), fn.calls,
                                     fn.median_calls, Per()));
  }
  for (const UtilizationOutlier& u : in_.utilization->outliers) {
    if (mine.count(u.rank)) {
      f.evidence.push_back(fmt::format("GPU utilization of rank {}: {:.1f}% vs median {:.1f}%", RankNo(u.rank),
                                       100 * u.value, 100 * in_.utilization->median));
    }
  }
  AddHostEvidence(g, &f);
  f.evidence.push_back(fmt::format("if {} behaved like the median rank: step {} -> {} (saves {}{})",
                                   g.ranks.size() == 1 ? "it" : "they", FormatDuration(f.what_if.step_ns),
                                   FormatDuration(f.what_if.estimated_step_ns), FormatDuration(f.what_if.saving_ns), Per()));
  f.next = NextForSlowGroup(g, f);
  return f;
}

void Writer::AddLocalEvidence(const SlowGroup& g, Finding* f) const {
  const SlowRankAnalysis& s = *in_.slow;
  for (uint32_t r : g.ranks) {
    f->evidence.push_back(fmt::format(
        "rank {}: local time (step minus communication wait) {}{} vs median {} over {} ranks (abnormal above +{}); "
        "communication wait {} vs median {}; compute busy {} vs median {}",
        RankNo(r), FormatDuration(M(r).local_ns), Per(), FormatDuration(s.local.median), s.local.count,
        FormatDuration(s.threshold_ns), FormatDuration(M(r).comm_wait_ns), FormatDuration(MedianOf(&RankMetrics::comm_wait_ns)),
        FormatDuration(M(r).compute_ns), FormatDuration(MedianOf(&RankMetrics::compute_ns))));
  }
}

void Writer::AddArrivalEvidence(const SlowGroup& g, Finding* f) const {
  for (uint32_t r : g.ranks) {
    const RankArrival& a = in_.arrival->ranks[r];
    if (a.instances == 0) continue;
    const double steps = M(r).steps > 0 ? static_cast<double>(M(r).steps) : 1.0;
    f->evidence.push_back(fmt::format("rank {} arrives late at its collectives: {}{} after the median rank, added over "
                                      "{} matched collectives (median {}); last to arrive at {} of them, where the others "
                                      "waited {} for it alone",
                                      RankNo(r), FormatDuration(static_cast<double>(a.late_sum_ns) / steps), Per(),
                                      a.instances, FormatDuration(static_cast<double>(a.lateness_ns)), a.last_votes,
                                      FormatDuration(static_cast<double>(a.imposed_wait_ns))));
  }
}

void Writer::AddHostEvidence(const SlowGroup& g, Finding* f) const {
  if (!HasHosts()) return;
  std::vector<uint32_t> healthy;
  for (uint32_t r : g.host_ranks) {
    if (!in_.slow->slow[r]) healthy.push_back(r);
  }
  if (g.scope == SlowScope::kRank && !healthy.empty()) {
    f->evidence.push_back(fmt::format("{} on the same host {} {} not slow: the node is fine, the problem is specific to "
                                      "rank {} (its GPU, its data, its process)",
                                      Ranks(healthy), g.host, healthy.size() == 1 ? "is" : "are", RankNo(g.ranks.front())));
  } else if (g.scope == SlowScope::kRank) {
    f->evidence.push_back(fmt::format("it is the only rank analysed on host {}: a slow node and a slow GPU look the same "
                                      "here",
                                      g.host));
  } else {
    f->evidence.push_back(fmt::format("{} of the {} ranks of host {} are slow{}", g.ranks.size(), g.host_ranks.size(),
                                      g.host, healthy.empty() ? "" : fmt::format(" ({} {} not)", Ranks(healthy),
                                                                                 healthy.size() == 1 ? "is" : "are")));
  }
}

std::string Writer::NextForSlowGroup(const SlowGroup& g, const Finding& f) const {
  const std::string who = Ranks(g.ranks);
  if (g.scope == SlowScope::kNode) {
    return fmt::format("check host {} itself: CPU load and clock frequency, memory pressure, thermal or power limits, "
                       "the network interface, and what else runs there; then `rankscope analyze --rank {}`",
                       g.host, RankNo(g.ranks.front()));
  }
  const bool function_explains = !f.functions.empty() && (!f.phase || f.functions.front().excess_ns >= 0.5 * f.phase->excess_ns);
  if (function_explains) {
    const FunctionOutlier& top = f.functions.front();
    return fmt::format("find out why {} {} takes {}{} on {} and {} on its peers{} (input shapes, clocks or throttling, "
                       "a different code path); `rankscope analyze --rank {}` shows where it runs",
                       KindWords(top.kind), FunctionLabel(top), FormatDuration(top.value_ns), Per(), who,
                       FormatDuration(top.median_ns), f.phase ? ", in " + PhaseWords(f.phase->phase) : "",
                       RankNo(g.ranks.front()));
  }
  if (f.phase && f.phase->phase == StepPhase::kDataLoading) {
    return fmt::format("look at the input pipeline of {}: its DataLoader (workers, prefetch), the storage or data shard "
                       "it reads, and the CPU of its host; `rankscope analyze --rank {}` for its Python paths",
                       who, RankNo(g.ranks.front()));
  }
  if (f.phase) {
    return fmt::format("look at {} of {}: what runs there that its peers do not run (record with --with-stack to see the "
                       "Python functions); `rankscope analyze --rank {}`",
                       PhaseWords(f.phase->phase), who, RankNo(g.ranks.front()));
  }
  return fmt::format("look at what {} does before its collectives (communication hooks, host synchronisation, Python "
                     "between backward and all-reduce): no phase or function stands out, only its late arrival; "
                     "`rankscope analyze --rank {}`",
                     who, RankNo(g.ranks.front()));
}

std::vector<Finding> Writer::SlowFunctionFindings(const std::set<uint32_t>& covered) const {
  // One finding per function, over the ranks where it is abnormal and that no slow rank covers.
  std::map<std::tuple<FunctionKind, std::string, std::string>, std::vector<const FunctionOutlier*>> by_function;
  std::vector<std::tuple<FunctionKind, std::string, std::string>> order;
  for (const FunctionOutlier& fn : *in_.functions) {
    if (covered.count(fn.rank)) continue;
    auto key = std::make_tuple(fn.kind, fn.name, fn.detail);
    auto [it, inserted] = by_function.try_emplace(key);
    if (inserted) order.push_back(key);
    it->second.push_back(&fn);
  }
  std::vector<Finding> out;
  for (const auto& key : order) {
    const std::vector<const FunctionOutlier*>& rows = by_function[key];
    Finding f;
    f.kind = FindingKind::kSlowFunction;
    std::vector<RankSaving> savings;
    for (const FunctionOutlier* fn : rows) {
      f.ranks.push_back(fn->rank);
      f.functions.push_back(*fn);
      // Waiting in a collective is not local work: finishing it sooner does not move the pace.
      if (fn->kind != FunctionKind::kCollective) savings.push_back({fn->rank, fn->excess_ns});
      f.evidence.push_back(fmt::format("rank {}: {}{} vs median {} over {} ranks (+{}, abnormal above +{}); {:.1f} vs "
                                       "{:.1f} calls{}, median call {} vs {}",
                                       RankNo(fn->rank), FormatDuration(fn->value_ns), Per(), FormatDuration(fn->median_ns),
                                       fn->compared, FormatDuration(fn->excess_ns), FormatDuration(fn->threshold_ns),
                                       fn->calls, fn->median_calls, Per(), FormatDuration(static_cast<double>(fn->per_call_ns)),
                                       FormatDuration(static_cast<double>(fn->median_per_call_ns))));
    }
    f.what_if = WhatIfFaster(*in_.metrics, savings);
    if (f.what_if.saving_ns < std::max(in_.min_excess_ns, Noise())) continue;
    const FunctionOutlier& top = *rows.front();
    f.title = fmt::format("{} {} is slower on {} than on the other ranks: +{}{}", KindWords(top.kind), FunctionLabel(top),
                          Ranks(f.ranks), FormatDuration(top.excess_ns), Per());
    f.evidence.push_back(fmt::format("if it ran as on the median rank: step {} -> {} (saves {}{}; local times of "
                                     "the ranks spread by {})",
                                     FormatDuration(f.what_if.step_ns), FormatDuration(f.what_if.estimated_step_ns),
                                     FormatDuration(f.what_if.saving_ns), Per(), FormatDuration(Noise())));
    f.next = fmt::format("compare {} on {} with a healthy rank (`rankscope analyze --rank {}`): calls, shapes, clocks",
                         FunctionLabel(top), Ranks(f.ranks), RankNo(f.ranks.front()));
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace

std::string_view FindingKindName(FindingKind k) {
  switch (k) {
    case FindingKind::kSlowNode: return "slow_node";
    case FindingKind::kSlowRank: return "slow_rank";
    case FindingKind::kSlowFunction: return "slow_function";
  }
  return "slow_rank";
}

std::string FormatDuration(double ns) {
  const double a = std::fabs(ns);
  if (a >= 1e9) return fmt::format("{:.2f} s", ns / 1e9);
  if (a >= 1e6) return fmt::format("{:.1f} ms", ns / 1e6);
  if (a >= 1e3) return fmt::format("{:.1f} us", ns / 1e3);
  return fmt::format("{:.0f} ns", ns);
}

std::vector<Finding> BuildFindings(const FindingInputs& in) { return Writer(in).Build(); }

}  // namespace rankscope

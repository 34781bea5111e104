#include "rankscope/cluster/host_outliers.h"

#include <algorithm>
#include <array>
#include <map>
#include <optional>

#include "rankscope/cluster/communication_work.h"
#include "rankscope/cluster/cost_model.h"
#include "rankscope/cluster/findings.h"
#include "rankscope/cluster/function_outliers.h"
#include "rankscope/cluster/robust_rule.h"

namespace rankscope {
namespace {

// A function names the node when it explains at least this share of the host's excess, and a
// deeper Python path replaces it when it carries this share of its excess (function_outliers.h).
constexpr double kNamesShare = 0.5;
constexpr double kDeeperShare = 0.8;
constexpr double kCriticalStepShare = 0.10;
// A finding about one of a host's ranks is part of the host's extra work when that work explains
// at least this share of the time it adds.
constexpr double kPartOfNodeShare = 0.5;

struct HostExcess {
  FunctionKind kind = FunctionKind::kKernel;
  std::string name, detail;
  double excess_ns = 0;  // the host's smallest value minus the other hosts' median
  double value_ns = 0;   // the host's median value
  double median_ns = 0;  // the other hosts' median
};

// Every function's values over the ranks, sorted: the median of a host's peers is read from
// them (MedianWithout) instead of copying and selecting the other ranks' values for each host.
struct SortedFunctions {
  const std::vector<FunctionSamples>* functions = nullptr;
  std::vector<std::vector<double>> values;  // per function, ascending
};

SortedFunctions SortFunctions(const std::vector<FunctionSamples>& functions) {
  SortedFunctions out{&functions, {}};
  for (const FunctionSamples& f : functions) {
    std::vector<double>& v = out.values.emplace_back();
    for (const FunctionValue& x : f.samples) v.push_back(x.value_ns);
    std::sort(v.begin(), v.end());
  }
  return out;
}

// Every phase's step table (CPU, then GPU), each column sorted once for testing every slow host.
struct PhaseTesters {
  explicit PhaseTesters(const StepSeries& series) {
    for (int side = 0; side < 2; ++side) {
      for (int p = 0; p < kNumStepPhases; ++p) {
        tables[side * kNumStepPhases + p] = PhaseTable(series, static_cast<StepPhase>(p), side == 1);
      }
    }
    for (const auto& t : tables) testers.emplace_back(t);
  }
  PhaseTesters(const PhaseTesters&) = delete;
  PhaseTesters& operator=(const PhaseTesters&) = delete;

  std::array<std::vector<std::vector<double>>, 2 * kNumStepPhases> tables;
  std::vector<StepExcessTester> testers;  // one per table, viewing it
};

// Per function: the host's ranks' smallest time per step minus the other ranks' median.
std::vector<HostExcess> FunctionExcess(const HostFindingInputs& in, const SortedFunctions& sorted,
                                       const std::vector<uint32_t>& members) {
  std::vector<HostExcess> out;
  std::vector<double> mine;
  for (size_t i = 0; i < sorted.functions->size(); ++i) {
    const FunctionSamples& f = (*sorted.functions)[i];
    if (f.kind == FunctionKind::kCollective) continue;
    mine.clear();
    for (uint32_t r : members) {  // the samples are by rank index
      auto it = std::lower_bound(f.samples.begin(), f.samples.end(), r,
                                 [](const FunctionValue& v, uint32_t rank) { return v.rank < rank; });
      if (it != f.samples.end() && it->rank == r) mine.push_back(it->value_ns);
    }
    if (mine.size() != members.size() || f.samples.size() == mine.size()) continue;
    const double smallest = *std::min_element(mine.begin(), mine.end());
    const double median = MedianWithout(sorted.values[i], mine);  // the other ranks'
    if (smallest - median < in.min_excess_ns) continue;
    out.push_back({f.kind, f.name, f.detail, smallest - median, ComputeRobustStats(mine).median, median});
  }
  std::sort(out.begin(), out.end(), [](const HostExcess& a, const HostExcess& b) { return a.excess_ns > b.excess_ns; });
  return out;
}

// The largest, or the deepest Python path under it that carries most of its excess.
const HostExcess* Explaining(const std::vector<HostExcess>& all) {
  if (all.empty()) return nullptr;
  const HostExcess* best = &all.front();
  for (const HostExcess& e : all) {
    if (e.kind == FunctionKind::kPythonPath && best->kind == FunctionKind::kPythonPath &&
        CallPathHolds(best->name, e.name) &&
        e.excess_ns >= kDeeperShare * all.front().excess_ns) {
      best = &e;
    }
  }
  return best;
}

// About the host's ranks together (`ranks`, no single rank): the host's median value against the
// other hosts' median; no per-rank call counts (the report words it so).
Evidence HostFunctionEvidence(const HostExcess& e, const std::vector<int64_t>& ranks) {
  Evidence ev;
  ev.kind = EvidenceKind::kFunction;
  ev.ranks = ranks;
  ev.subject = e.name;
  ev.subject_kind = FunctionKindName(e.kind);
  ev.detail = e.detail;
  ev.Set("value_ns", e.value_ns).Set("median_ns", e.median_ns).Set("excess_ns", e.excess_ns);
  return ev;
}

Evidence FunctionEvidenceOf(const HostExcess& e, const std::vector<bool>& group, const std::vector<int64_t>& ranks) {
  Evidence ev = HostFunctionEvidence(e, ranks);
  ev.Set("ranks_compared", static_cast<double>(group.size()));
  return ev;
}

bool AboutHost(const Finding& f, const std::string& host) {
  return f.kind == FindingKind::kSlowNode && std::find(f.hosts.begin(), f.hosts.end(), host) != f.hosts.end();
}

// A node the slow-rank rule found with nothing to say where its time goes. Its ranks, half the
// job, can be slow one by one against their peers (the other slow rank among them) while no phase
// or function of theirs stands out against every rank; the host compared with the other hosts
// then names what.
bool Unexplained(const Finding& f) {
  return f.subject.empty() && f.FindEvidence(EvidenceKind::kPhase) == nullptr &&
         f.FindEvidence(EvidenceKind::kFunction) == nullptr;
}

bool AlreadyNamed(const std::vector<Finding>& findings, const std::string& host) {
  return std::any_of(findings.begin(), findings.end(),
                     [&](const Finding& f) { return AboutHost(f, host) && !Unexplained(f); });
}

// The host's saving: its ranks like the other hosts' median rank in each step (a slow host), or
// without the work only they do (a host with extra work).
WhatIf HostSaving(const HostFindingInputs& in, const std::vector<bool>& group, const HostExtraWork* work) {
  const StepSeries& series = *in.series;
  if (!work) return WhatIfByStep(series, LikePeers(series, group), in.step_ns);
  std::vector<double> excess(series.ranks(), 0);
  for (size_t i = 0; i < work->ranks.size(); ++i) excess[work->ranks[i]] = work->rank_excess_ns[i];
  return WhatIfByStep(series, WithoutGroupExcess(series, group, excess), in.step_ns);
}

// The work only the host's ranks do, with its calls: the evidence that names the node.
Evidence WorkEvidence(const HostExtraWork& w, const std::vector<int64_t>& ranks) {
  Evidence ev = HostFunctionEvidence({w.kind, w.name, w.detail, w.excess_ns, w.value_ns, w.median_ns}, ranks);
  ev.Set("host_calls", w.calls).Set("median_calls", w.median_calls);
  return ev;
}

// `work`: the host's extra work, when that rule found it (else the host is slow by its local time).
Finding HostFinding(const HostFindingInputs& in, const SortedFunctions& functions, const PhaseTesters& phases,
                    const SlowHost& h, const std::vector<int64_t>& numbers, const HostExtraWork* work = nullptr) {
  const StepSeries& series = *in.series;
  std::vector<bool> group(series.ranks(), false);
  for (uint32_t r : h.ranks) group[r] = true;
  Finding f;
  f.kind = FindingKind::kSlowNode;
  f.hosts = {h.host};
  for (uint32_t r : h.ranks) f.ranks.push_back(numbers[r]);
  std::sort(f.ranks.begin(), f.ranks.end());
  const WhatIf w = HostSaving(in, group, work);
  f.cost.method = work ? CostMethod::kWhatIfFaster : CostMethod::kWhatIfLikeMedian;
  f.cost.saving_ns = w.saving_ns;
  f.cost.step_ns = w.step_ns;
  f.cost.estimated_step_ns = w.estimated_step_ns;
  f.cost.added_ns = work ? work->excess_ns : h.test.median_excess_ns;
  f.severity = w.step_ns > 0 && w.saving_ns >= kCriticalStepShare * w.step_ns ? Severity::kCritical : Severity::kWarning;
  if (work && w.saving_ns < in.min_excess_ns) {  // nobody measurably waits for it: information
    f.cost.method = CostMethod::kAddedWork;
    f.cost.saving_ns = 0;
    f.cost.estimated_step_ns = w.step_ns;
    f.severity = Severity::kInfo;
  }
  // Where the time goes: the function, else the phase with the largest excess.
  const std::vector<HostExcess> excess = FunctionExcess(in, functions, h.ranks);
  const HostExcess* fn = Explaining(excess);
  double phase_excess = 0;
  int phase = -1;
  bool gpu_side = false;
  for (int side = 0; side < 2; ++side) {
    for (int p = 0; p < kNumStepPhases; ++p) {
      const StepSignificance t = phases.testers[side * kNumStepPhases + p].Test(h.ranks);  // h.ranks ascending
      if (t.significant && t.median_excess_ns > phase_excess) {
        phase_excess = t.median_excess_ns;
        phase = p;
        gpu_side = side == 1;
      }
    }
  }
  if (work) {
    f.subject = work->name;
    f.subject_kind = FunctionKindName(work->kind);
    f.subject_detail = work->detail;
  } else if (fn && fn->excess_ns >= kNamesShare * h.test.median_excess_ns) {
    f.subject = fn->name;
    f.subject_kind = FunctionKindName(fn->kind);
    f.subject_detail = fn->detail;
  } else if (phase >= 0) {
    f.subject = StepPhaseName(static_cast<StepPhase>(phase));
    f.subject_kind = "phase";
  }
  // Work the host's ranks do and the others do not is code to find; a host slower at the same work
  // is the machine to check.
  f.next = work ? NextStep{NextStepKind::kCompareFunction, work->name, work->detail}
                : NextStep{NextStepKind::kCheckHost, h.host, ""};
  // The other hosts' ranks, metric by metric.
  auto peers_of = [&](double RankMetrics::*field) {
    std::vector<double> v;
    for (const RankMetrics& m : *in.metrics) v.push_back(m.*field);
    return PeersOf(v, group);
  };
  const PeerBand local = peers_of(&RankMetrics::local_ns);
  const double comm_wait = peers_of(&RankMetrics::comm_wait_ns).median;
  const double compute = peers_of(&RankMetrics::compute_ns).median;
  for (uint32_t r : h.ranks) {
    Evidence e;
    e.kind = EvidenceKind::kLocalTime;
    e.rank = numbers[r];
    e.Set("local_ns", (*in.metrics)[r].local_ns).Set("median_local_ns", local.median)
        .Set("ranks_compared", static_cast<double>(local.count)).Set("threshold_ns", local.iqr)
        .Set("comm_wait_ns", (*in.metrics)[r].comm_wait_ns).Set("median_comm_wait_ns", comm_wait)
        .Set("compute_ns", (*in.metrics)[r].compute_ns).Set("median_compute_ns", compute);
    f.evidence.push_back(std::move(e));
  }
  if (phase >= 0) {  // the host's ranks together: only their excess over the other hosts' median
    Evidence e;
    e.kind = EvidenceKind::kPhase;
    e.subject = StepPhaseName(static_cast<StepPhase>(phase));
    e.subject_kind = "phase";
    e.detail = gpu_side ? "GPU" : "CPU";
    e.ranks = f.ranks;
    e.Set("excess_ns", phase_excess);
    f.evidence.push_back(std::move(e));
  }
  if (work) f.evidence.push_back(WorkEvidence(*work, f.ranks));
  for (size_t i = 0, n = 0; i < excess.size() && n < 5; ++i) {
    const HostExcess& e = i == 0 && fn ? *fn : excess[i];
    if (work && e.kind == work->kind && e.name == work->name && e.detail == work->detail) continue;
    f.evidence.push_back(FunctionEvidenceOf(e, group, f.ranks));
    ++n;
  }
  Evidence host;
  host.kind = EvidenceKind::kHostPeers;
  host.host = h.host;
  host.detail = work ? "node_work" : "node";
  host.Set("slow_ranks", static_cast<double>(h.ranks.size())).Set("host_ranks", static_cast<double>(h.ranks.size()))
      .Set("steps_exceeding", static_cast<double>(h.test.exceeding)).Set("steps", static_cast<double>(h.test.steps));
  f.evidence.push_back(std::move(host));
  if (f.cost.method == CostMethod::kAddedWork) return f;
  Evidence what_if;
  what_if.kind = EvidenceKind::kWhatIf;
  what_if.detail = "per_step";
  what_if.Set("step_ns", w.step_ns).Set("estimated_step_ns", w.estimated_step_ns).Set("saving_ns", w.saving_ns);
  f.evidence.push_back(std::move(what_if));
  return f;
}

// Slow *together*: each rank's excess over the other hosts' median (median over steps) is at
// least kTogetherShare of the largest one's. One faulty rank beside a rank that the load slowed
// a little is a slow rank, not a node; a node slows all its ranks alike.
constexpr double kTogetherShare = 0.5;

bool SlowTogether(const StepExcessTester& tester, const StepSeries& series, const std::vector<uint32_t>& members) {
  std::vector<double> excess;
  for (uint32_t r : members) {
    std::vector<double> per_step;
    for (size_t s = 0; s < series.steps(); ++s) {
      per_step.push_back(series.local_ns[r][s] - tester.Peers(s, members).median);
    }
    excess.push_back(ComputeRobustStats(per_step).median);
  }
  const auto [lo, hi] = std::minmax_element(excess.begin(), excess.end());
  return *hi > 0 && *lo >= kTogetherShare * *hi;
}

// The other hosts' median local time, median over steps.
double OthersMedian(const StepExcessTester& tester, const StepSeries& series, const std::vector<uint32_t>& members) {
  std::vector<double> per_step;
  for (size_t s = 0; s < series.steps(); ++s) per_step.push_back(tester.Peers(s, members).median);
  return ComputeRobustStats(per_step).median;
}

// One function's extra work on the host of the rank that calls it most, or nothing: whoever does
// work that no other rank does calls it most.
std::optional<HostExtraWork> ExtraWorkOfHost(const FunctionSamples& f, const std::vector<RankHost>& hosts,
                                             const std::vector<int64_t>& stage_of, double min_excess_ns) {
  const auto [fewest, most] = std::minmax_element(f.samples.begin(), f.samples.end(),
                                                  [](const FunctionValue& a, const FunctionValue& b) {
                                                    return a.calls < b.calls;
                                                  });
  if (fewest == f.samples.end() || most->calls - fewest->calls < 1 || most->rank >= hosts.size()) return std::nullopt;
  const RankHost& where = hosts[most->rank];
  if (where.source == HostSource::kNone) return std::nullopt;
  auto stage = [&](uint32_t r) { return r < stage_of.size() ? stage_of[r] : 0; };
  HostExtraWork w;
  w.host = where.host;
  w.kind = f.kind;
  w.name = f.name;
  w.detail = f.detail;
  std::vector<double> mine_calls, mine_ns, other_calls, other_ns;
  for (const FunctionValue& v : f.samples) {
    if (v.rank >= hosts.size() || stage(v.rank) != stage(most->rank)) continue;
    const bool mine = hosts[v.rank].source != HostSource::kNone && hosts[v.rank].host == where.host;
    (mine ? mine_calls : other_calls).push_back(v.calls);
    (mine ? mine_ns : other_ns).push_back(v.value_ns);
    if (mine) w.ranks.push_back(v.rank);
  }
  // Every rank of the host (of its stage) must be compared: one without a value is not known to do it.
  size_t members = 0;
  for (uint32_t r = 0; r < hosts.size(); ++r) {
    members += hosts[r].source != HostSource::kNone && hosts[r].host == where.host && stage(r) == stage(most->rank);
  }
  if (w.ranks.size() < 2 || w.ranks.size() != members || other_calls.size() < 2) return std::nullopt;
  w.median_calls = ComputeRobustStats(other_calls).median;
  const double extra_calls = std::max(1.0, kExtraCallsShare * w.median_calls);
  w.calls = *std::min_element(mine_calls.begin(), mine_calls.end());
  if (w.calls - w.median_calls < extra_calls) return std::nullopt;
  if (*std::max_element(other_calls.begin(), other_calls.end()) - w.median_calls >= extra_calls) return std::nullopt;
  w.median_ns = ComputeRobustStats(other_ns).median;
  w.excess_ns = *std::min_element(mine_ns.begin(), mine_ns.end()) - w.median_ns;
  if (w.excess_ns < min_excess_ns) return std::nullopt;
  w.value_ns = ComputeRobustStats(mine_ns).median;
  for (double v : mine_ns) w.rank_excess_ns.push_back(v - w.median_ns);
  return w;
}

// Adds a host's finding; the findings about single ranks of it are part of it now — for a host
// found by its work (`work`), those that its work explains at least half of on each of their
// ranks: a straggler among them for some other reason stays a finding of its own.
void ReplaceSingleRankFindings(Finding f, std::vector<Finding>* findings, const HostExtraWork* work = nullptr,
                               const std::vector<int64_t>& numbers = {}) {
  auto explained = [&](const Finding& g) {
    if (!work || g.subject == work->name) return true;
    for (int64_t r : g.ranks) {
      for (size_t i = 0; i < work->ranks.size(); ++i) {
        if (numbers[work->ranks[i]] == r && work->rank_excess_ns[i] < kPartOfNodeShare * g.cost.added_ns) return false;
      }
    }
    return true;
  };
  std::erase_if(*findings, [&](const Finding& g) {
    const bool single = g.kind == FindingKind::kSlowRank || g.kind == FindingKind::kSlowFunction ||
                        g.kind == FindingKind::kExtraWork || (AboutHost(g, f.hosts.front()) && Unexplained(g));
    return single && !g.ranks.empty() && std::all_of(g.ranks.begin(), g.ranks.end(), [&](int64_t r) {
      return std::find(f.ranks.begin(), f.ranks.end(), r) != f.ranks.end();
    }) && explained(g);
  });
  findings->push_back(std::move(f));
}

}  // namespace

std::vector<HostExtraWork> FindHostsWithExtraWork(const std::vector<FunctionSamples>& functions,
                                                  const std::vector<RankHost>& hosts,
                                                  const std::vector<int64_t>& stage_of, double min_excess_ns) {
  // Per host, every function it does alone; the one that explains it is the largest, or the
  // deepest Python path under it that carries most of its excess (the hook, not its callers).
  std::map<std::string, std::vector<HostExtraWork>> by_host;
  for (const FunctionSamples& f : functions) {
    if (f.kind == FunctionKind::kCollective || f.wait || IsCommunicationWork(f.kind, f.name)) continue;
    if (std::optional<HostExtraWork> w = ExtraWorkOfHost(f, hosts, stage_of, min_excess_ns)) {
      by_host[w->host].push_back(std::move(*w));
    }
  }
  std::vector<HostExtraWork> out;
  for (auto& [host, work] : by_host) {
    std::sort(work.begin(), work.end(), [](const HostExtraWork& a, const HostExtraWork& b) {
      return a.excess_ns > b.excess_ns;
    });
    std::vector<HostExcess> excess;
    for (const HostExtraWork& w : work) excess.push_back({w.kind, w.name, w.detail, w.excess_ns, w.value_ns, w.median_ns});
    const HostExcess* best = Explaining(excess);
    out.push_back(std::move(work[static_cast<size_t>(best - excess.data())]));
  }
  std::sort(out.begin(), out.end(), [](const HostExtraWork& a, const HostExtraWork& b) {
    return a.excess_ns > b.excess_ns;
  });
  return out;
}

std::vector<SlowHost> FindSlowHosts(const StepSeries& series, const std::vector<RankHost>& hosts,
                                    double min_excess_ns, double margin) {
  std::vector<SlowHost> out;
  if (series.steps() == 0 || hosts.size() != series.ranks()) return out;
  std::map<std::string, std::vector<uint32_t>> by_host;
  for (uint32_t r = 0; r < hosts.size(); ++r) {
    if (hosts[r].source != HostSource::kNone) by_host[hosts[r].host].push_back(r);
  }
  const StepExcessTester tester(series.local_ns);  // every host against the others, one sort per step
  for (const auto& [host, members] : by_host) {   // members ascending
    if (members.size() < 2 || hosts.size() - members.size() < 2) continue;
    const StepSignificance t = tester.Test(members);
    if (t.significant && t.median_excess_ns >= std::max(min_excess_ns, margin * OthersMedian(tester, series, members)) &&
        SlowTogether(tester, series, members)) {
      out.push_back({host, members, t});
    }
  }
  std::sort(out.begin(), out.end(), [](const SlowHost& a, const SlowHost& b) {
    return a.test.median_excess_ns > b.test.median_excess_ns;
  });
  return out;
}

void AddSlowHostFindings(const HostFindingInputs& in, std::vector<Finding>* findings) {
  std::vector<int64_t> numbers;
  for (const RankSummary& r : *in.ranks) numbers.push_back(r.rank.rank);
  std::vector<FunctionSamples> collected;  // when the caller has not collected them
  std::optional<SortedFunctions> functions;  // sorted at the first slow host that needs them
  std::optional<PhaseTesters> phases;        // ditto
  for (const SlowHost& h : FindSlowHosts(*in.series, *in.hosts, in.min_excess_ns, in.margin)) {
    if (AlreadyNamed(*findings, h.host)) continue;
    if (!functions) {
      if (!in.functions) collected = CollectFunctionSamples(*in.ranks, *in.metrics, in.min_excess_ns);
      functions = SortFunctions(in.functions ? *in.functions : collected);
      phases.emplace(*in.series);
    }
    Finding f = HostFinding(in, *functions, *phases, h, numbers);
    if (f.cost.saving_ns < in.min_excess_ns) continue;
    ReplaceSingleRankFindings(std::move(f), findings);
  }
  // Nodes found by their work (the time test above cannot see them through the ranks' noise);
  // costed step by step, so not without steps.
  if (in.series->steps() == 0 || in.series->ranks() != in.hosts->size()) return;
  const std::vector<FunctionSamples>& samples = in.functions ? *in.functions : collected;
  if (!in.functions && !functions) collected = CollectFunctionSamples(*in.ranks, *in.metrics, in.min_excess_ns);
  const std::vector<int64_t> one_stage;
  std::optional<StepExcessTester> tester;  // built at the first host that needs it
  for (const HostExtraWork& w : FindHostsWithExtraWork(samples, *in.hosts, in.stage_of ? *in.stage_of : one_stage,
                                                       in.min_excess_ns)) {
    if (AlreadyNamed(*findings, w.host)) continue;
    if (!functions) {
      functions = SortFunctions(samples);
      phases.emplace(*in.series);
    }
    if (!tester) tester.emplace(in.series->local_ns);
    ReplaceSingleRankFindings(HostFinding(in, *functions, *phases, {w.host, w.ranks, tester->Test(w.ranks)}, numbers, &w),
                              findings, &w, numbers);
  }
}

}  // namespace rankscope

#include "rankscope/cluster/host_outliers.h"

#include <algorithm>
#include <array>
#include <map>
#include <optional>

#include "rankscope/cluster/cost_model.h"
#include "rankscope/cluster/function_outliers.h"
#include "rankscope/cluster/robust_rule.h"

namespace rankscope {
namespace {

// A function names the node when it explains at least this share of the host's excess, and a
// deeper Python path replaces it when it carries this share of its excess (function_outliers.h).
constexpr double kNamesShare = 0.5;
constexpr double kDeeperShare = 0.8;
constexpr double kCriticalStepShare = 0.10;

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
        e.name.size() > best->name.size() && e.name.starts_with(best->name + "|") &&
        e.excess_ns >= kDeeperShare * all.front().excess_ns) {
      best = &e;
    }
  }
  return best;
}

// About the host's ranks together (`ranks`, no single rank): the host's median value against the
// other hosts' median; no call counts (the report words it so).
Evidence FunctionEvidenceOf(const HostExcess& e, const std::vector<bool>& group, const std::vector<int64_t>& ranks) {
  Evidence ev;
  ev.kind = EvidenceKind::kFunction;
  ev.ranks = ranks;
  ev.subject = e.name;
  ev.subject_kind = FunctionKindName(e.kind);
  ev.detail = e.detail;
  ev.Set("value_ns", e.value_ns).Set("median_ns", e.median_ns).Set("excess_ns", e.excess_ns)
      .Set("ranks_compared", static_cast<double>(group.size()));
  return ev;
}

bool AlreadyNamed(const std::vector<Finding>& findings, const std::string& host) {
  return std::any_of(findings.begin(), findings.end(), [&](const Finding& f) {
    return f.kind == FindingKind::kSlowNode && std::find(f.hosts.begin(), f.hosts.end(), host) != f.hosts.end();
  });
}

Finding HostFinding(const HostFindingInputs& in, const SortedFunctions& functions, const PhaseTesters& phases,
                    const SlowHost& h, const std::vector<int64_t>& numbers) {
  const StepSeries& series = *in.series;
  std::vector<bool> group(series.ranks(), false);
  for (uint32_t r : h.ranks) group[r] = true;
  Finding f;
  f.kind = FindingKind::kSlowNode;
  f.hosts = {h.host};
  for (uint32_t r : h.ranks) f.ranks.push_back(numbers[r]);
  std::sort(f.ranks.begin(), f.ranks.end());
  const WhatIf w = WhatIfByStep(series, LikePeers(series, group), in.step_ns);
  f.cost.method = CostMethod::kWhatIfLikeMedian;
  f.cost.saving_ns = w.saving_ns;
  f.cost.step_ns = w.step_ns;
  f.cost.estimated_step_ns = w.estimated_step_ns;
  f.cost.added_ns = h.test.median_excess_ns;
  f.severity = w.step_ns > 0 && w.saving_ns >= kCriticalStepShare * w.step_ns ? Severity::kCritical : Severity::kWarning;
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
  if (fn && fn->excess_ns >= kNamesShare * h.test.median_excess_ns) {
    f.subject = fn->name;
    f.subject_kind = FunctionKindName(fn->kind);
    f.subject_detail = fn->detail;
  } else if (phase >= 0) {
    f.subject = StepPhaseName(static_cast<StepPhase>(phase));
    f.subject_kind = "phase";
  }
  f.next = {NextStepKind::kCheckHost, h.host, ""};
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
  for (size_t i = 0; i < excess.size() && i < 5; ++i) {
    f.evidence.push_back(FunctionEvidenceOf(i == 0 && fn ? *fn : excess[i], group, f.ranks));
  }
  Evidence host;
  host.kind = EvidenceKind::kHostPeers;
  host.host = h.host;
  host.detail = "node";
  host.Set("slow_ranks", static_cast<double>(h.ranks.size())).Set("host_ranks", static_cast<double>(h.ranks.size()))
      .Set("steps_exceeding", static_cast<double>(h.test.exceeding)).Set("steps", static_cast<double>(h.test.steps));
  f.evidence.push_back(std::move(host));
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

}  // namespace

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
    std::erase_if(*findings, [&](const Finding& g) {
      const bool single = g.kind == FindingKind::kSlowRank || g.kind == FindingKind::kSlowFunction ||
                          g.kind == FindingKind::kExtraWork;
      return single && !g.ranks.empty() && std::all_of(g.ranks.begin(), g.ranks.end(), [&](int64_t r) {
        return std::find(f.ranks.begin(), f.ranks.end(), r) != f.ranks.end();
      });
    });
    findings->push_back(std::move(f));
  }
}

}  // namespace rankscope

#include "rankscope/report/finding_text.h"
#include "rankscope/report/hang_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "rankscope/cluster/robust_rule.h"
#include "rankscope/report/text_format.h"
#include "rankscope/report/parallel_finding_text.h"

namespace rankscope {
namespace {

std::string D(double ns) { return FormatNs(ns); }

std::string Per(const Finding& f) { return "/" + f.cost.unit; }
// Calls per step: two decimals below one (a call every fourth step is 0.25, not "0.2").
std::string Calls(double c) { return c > 0 && c < 1 ? fmt::format("{:.2f}", c) : fmt::format("{:.1f}", c); }

std::string RankList(std::vector<int64_t> ranks) {
  std::sort(ranks.begin(), ranks.end());
  return fmt::format("{}", fmt::join(ranks, ", "));
}

std::string Ranks(const std::vector<int64_t>& ranks) { return (ranks.size() == 1 ? "rank " : "ranks ") + RankList(ranks); }

// Python's own modules that show in training stacks (the profiler names their frames by the
// module's file, as "contextlib.py(141): __exit__" or "concurrent/futures/thread.py(58): run").
constexpr std::string_view kStandardModules[] = {
    "abc", "asyncio", "collections", "concurrent", "contextlib", "copy", "copyreg", "dataclasses", "enum",
    "functools", "inspect", "json", "logging", "multiprocessing", "os", "pickle", "queue", "selectors",
    "socket", "subprocess", "tempfile", "threading", "traceback", "typing", "warnings", "weakref"};

// A frame of the framework rather than of the user's code: a builtin, a module's wrapper, torch's
// own Python, an installed package, Python's own modules.
bool FrameworkFrame(std::string_view frame) {
  const auto has = [&](std::string_view part) { return frame.find(part) != std::string_view::npos; };
  if (frame.starts_with("<") || frame.starts_with("nn.Module: ") || frame.starts_with("torch/") ||
      has("site-packages/") || has("dist-packages/")) {
    return true;
  }
  const std::string_view module = frame.substr(0, frame.find_first_of("/.("));
  return std::find(std::begin(kStandardModules), std::end(kStandardModules), module) != std::end(kStandardModules);
}

// A call path is long: its last frame says which function it is. When that frame is the
// framework's (torch's forward of a Sequential, a builtin), the innermost frame of the user's own
// code above it says whose call it is: "...|train.py(17): validate|...|torch/nn/modules/
// container.py(248): forward".
std::string PythonPathLabel(std::string_view path) {
  const size_t bar = path.rfind('|');
  if (bar == std::string_view::npos) return std::string(path);
  const std::string last = "..." + std::string(path.substr(bar));
  if (!FrameworkFrame(path.substr(bar + 1))) return last;
  size_t end = bar;
  while (end != std::string_view::npos && end > 0) {
    const size_t start = path.rfind('|', end - 1);
    const size_t from = start == std::string_view::npos ? 0 : start + 1;
    const std::string_view frame = path.substr(from, end - from);
    if (!FrameworkFrame(frame)) {
      const std::string label =
          "...|" + std::string(frame) + (end == bar ? "" : "|...") + std::string(path.substr(bar));
      return label.size() <= 90 ? label : last;
    }
    if (start == std::string_view::npos) break;
    end = start;
  }
  return last;
}

std::string FunctionLabel(std::string_view kind_id, std::string_view name, std::string_view detail) {
  std::string label = kind_id == "python_path" ? PythonPathLabel(name) : std::string(name);
  if (label.size() > 90) label = label.substr(0, 87) + "...";
  if (!detail.empty() && kind_id != "python_path") label += " " + std::string(detail);
  return label;
}

std::string FunctionLabel(const Evidence& e) { return FunctionLabel(e.subject_kind, e.subject, e.detail); }

const Evidence* FunctionEvidenceFor(const Finding& f, std::string_view name) {
  for (const Evidence& e : f.evidence) {
    if (e.kind == EvidenceKind::kFunction && e.subject == name) return &e;
  }
  return nullptr;
}

std::string Pct(double share) { return fmt::format("{:.0f}%", share * 100); }

// ---- titles

std::string SlowGroupTitle(const Finding& f) {
  const double typical = f.cost.added_ns;
  std::string where;
  if (const Evidence* p = f.FindEvidence(EvidenceKind::kPhase)) {
    const double excess = p->Get("excess_ns");
    where = fmt::format(", {} in {} (+{})", excess >= 0.5 * typical ? "mostly" : "partly", PhaseWords(p->subject), D(excess));
  }
  if (f.kind == FindingKind::kSlowNode) {
    // Found by work only its ranks do (cluster/host_outliers.h): waited for only when costed.
    const bool waited_for = f.cost.method != CostMethod::kAddedWork;
    return fmt::format("host {} is slow: its {} each spend about {} more per {} on their own work than the median "
                       "rank{}; {}",
                       f.hosts.empty() ? "?" : f.hosts.front(), Ranks(f.ranks), D(typical), f.cost.unit, where,
                       waited_for ? "every other rank waits for them" : "no other rank measurably waits for them");
  }
  return fmt::format("rank {} is a straggler: it spends {} more per {} on its own work than the median rank{}; every "
                     "other rank waits for it",
                     f.ranks.empty() ? -1 : f.ranks.front(), D(typical), f.cost.unit, where);
}

// " (19.75 ms a call, one every 4 steps on average)" for a function finding whose rank calls its
// function at most every other step (a checkpoint, a periodic evaluation, a stall): the per-step
// average alone hides a stall the size of the call. Empty for a function called more often.
std::string IntermittentWords(const Finding& f) {
  const Evidence* e = f.ranks.size() == 1 && !f.subject.empty() ? f.LeadFunction() : nullptr;
  const double calls = e ? e->Get("calls") : 0;
  if (calls <= 0 || calls > 0.5) return "";
  return fmt::format(" ({} {}, one every {:.3g} {}s on average)", D(e->Get("per_call_ns")),
                     f.subject_kind == "untraced" ? "a gap" : "a call", 1 / calls, f.cost.unit);
}

// Whether a function finding's function is work most ranks do not do at all (extra GEMMs one rank
// launches: the ranks' median call count is 0) rather than work they all do, slower on its ranks.
bool OwnWork(const Finding& f) {
  const Evidence* lead = f.LeadFunction();
  return lead && lead->Has("median_calls") && lead->Get("median_calls") == 0;
}

std::string SlowFunctionTitle(const Finding& f) {
  const bool own_work = OwnWork(f);
  const char* verb = !own_work ? "is slower on" : f.subject_kind == "untraced" ? "appears on" : "runs on";
  return fmt::format("{} {} {} {}{}: +{}{}{}", FunctionKindWords(f.subject_kind),
                     FunctionLabel(f.subject_kind, f.subject, f.subject_detail), verb, Ranks(f.ranks),
                     own_work ? " and not on most other ranks" : " than on the other ranks", D(f.cost.added_ns),
                     Per(f), IntermittentWords(f));
}

// Where an extra_work finding's time goes: its function, or the sibling call paths whose excesses
// add up to it (evidence marked `in_added`, cluster/findings.cc).
std::string ExtraWorkWhere(const Finding& f) {
  if (f.subject_kind == "phase") return "in " + PhaseWords(f.subject);
  std::vector<std::string> added;
  for (const Evidence& e : f.evidence) {
    if (e.kind == EvidenceKind::kFunction && e.Get("in_added") > 0) added.push_back(FunctionLabel(e));
  }
  if (f.subject_kind == "cpu_time") return "in CPU time its trace does not record";
  if (added.size() < 2) {
    return fmt::format("in {} {}", FunctionKindWords(f.subject_kind),
                       FunctionLabel(f.subject_kind, f.subject, f.subject_detail));
  }
  const std::string last = added.back();
  added.pop_back();
  return fmt::format("in Python paths {} and {} together", fmt::join(added, ", "), last);  // only paths add up
}

std::string ExtraWorkTitle(const Finding& f) {
  const std::string what = ExtraWorkWhere(f);
  // Costed by the per-step what-if (cluster/cost_model.h): in the steps it sets the pace, its peers wait.
  const bool waited_for = f.cost.method != CostMethod::kAddedWork && f.cost.saving_ns > 0;
  return fmt::format("{} spends {} more per {} than the median rank {}{}; {}", Ranks(f.ranks), D(f.cost.added_ns),
                     f.cost.unit, what, f.subject_kind == "phase" ? "" : IntermittentWords(f),
                     waited_for ? "its peers wait for it in the steps where it is the last to arrive"
                                : "no peer measurably waits for it");
}

std::string CpuContentionTitle(const Finding& f) {
  const Evidence* imbalance = f.FindEvidence(EvidenceKind::kStepImbalance);
  const double excess = imbalance ? imbalance->Get("mean_excess_ns") : 0;
  std::vector<double> waits;
  for (const Evidence& e : f.evidence) {
    if (e.kind == EvidenceKind::kCpuWait) waits.push_back(e.Get("wait_ns"));
  }
  const double median = ComputeRobustStats(std::move(waits)).median;  // the rule's own median (cpu_contention.cc)
  return fmt::format("{}: the slowest rank of a step exceeds the median by {} on average, but the ranks wait {}{} "
                     "for a CPU (median): the host's CPUs are oversubscribed, and the imbalance can be the "
                     "scheduler's rather than the input's",
                     Ranks(f.ranks), D(excess), D(median), Per(f));
}

std::string UnevenTimingTitle(const Finding& f) {
  const Evidence* imbalance = f.FindEvidence(EvidenceKind::kStepImbalance);
  const Evidence* same = f.FindEvidence(EvidenceKind::kSameWork);
  const bool per_rank = same && same->detail == "per_rank";
  const bool by_slowest = same && same->detail == "slowest_rank";
  const double steps = same ? same->Get("steps") : 0;
  const std::string work =
      by_slowest ? fmt::format("in {:.0f} of the {:.0f} steps the slowest rank ran the operators and input shapes its "
                               "peers ran, or its own usual ones",
                               steps - same->Get("explained_steps"), steps)
                 : fmt::format("{} ran the same operators on the same input shapes in each of the {:.0f} steps",
                               per_rank ? "each rank" : "every rank", steps);
  return fmt::format("{}: the slowest rank changes from step to step and exceeds the step's median by {} on average, "
                     "but {}: not an input imbalance; the time goes to something outside the work (CPU scheduling, a "
                     "shared device, garbage collection, clocks)",
                     Ranks(f.ranks), D(imbalance ? imbalance->Get("mean_excess_ns") : 0), work);
}

std::string StalledCallsTitle(const Finding& f) {
  std::vector<std::string> functions;
  for (const Evidence& e : f.evidence) {
    if (e.kind != EvidenceKind::kStalledCalls) continue;
    const std::string label = FunctionLabel(e);
    if (std::find(functions.begin(), functions.end(), label) == functions.end()) functions.push_back(label);
  }
  const size_t shown = std::min<size_t>(functions.size(), 2);
  std::string named = fmt::format("{}", fmt::join(functions.begin(), functions.begin() + shown, ", "));
  if (functions.size() > shown) named += fmt::format(" and {} more", functions.size() - shown);
  return fmt::format("{}: {} abnormal only through a few calls that stalled (each over 10x its usual longest call), "
                     "the other calls as fast as the peers': the {} held off {} CPU, not running slower code",
                     Ranks(f.ranks), named, f.ranks.size() == 1 ? "rank was" : "ranks were",
                     f.ranks.size() == 1 ? "its" : "their");
}

std::string TelemetryTitle(const Finding& f) {
  const Evidence* e = f.FindEvidence(EvidenceKind::kTelemetry);
  if (!e) return std::string(FindingKindId(f.kind));
  const std::string host = f.hosts.empty() ? "" : f.hosts.front() + ": ";
  switch (f.kind) {
    case FindingKind::kInputPipelineBound:
      return fmt::format("{}GPU mostly idle ({} utilization) while the host CPU is saturated ({}): input-pipeline bound",
                         host, Pct(e->Get("gpu_util_share")), Pct(e->Get("cpu_busy_share")));
    case FindingKind::kInputPipelineCpuBound:
      return fmt::format("{}host CPU saturated ({}), {} of it in DataLoader workers: input-pipeline bound", host,
                         Pct(e->Get("cpu_busy_share")), Pct(e->Get("loader_share")));
    case FindingKind::kHostCpuSaturated:
      return fmt::format("{}host CPU saturated ({}) during the traced window", host, Pct(e->Get("cpu_busy_share")));
    case FindingKind::kGpuMostlyIdle:
      return fmt::format("{}GPUs mostly idle ({} utilization) and the host CPU is not saturated ({})", host,
                         Pct(e->Get("gpu_util_share")), Pct(e->Get("cpu_busy_share")));
    case FindingKind::kCpuSteal:
      return fmt::format("{}the hypervisor took {} of the CPU time (steal)", host, Pct(e->Get("steal_share")));
    case FindingKind::kIoWait:
      return fmt::format("{}CPUs waited on disk I/O {} of the time", host, Pct(e->Get("iowait_share")));
    case FindingKind::kHostMemoryFull:
      return fmt::format("{}host memory nearly full ({} used at the peak)", host, Pct(e->Get("used_share")));
    case FindingKind::kGpuMemoryFull:
      return fmt::format("{}GPU {} memory nearly full ({} at the peak)", host, e->detail, Pct(e->Get("used_share")));
    default: return std::string(FindingKindId(f.kind));
  }
}

// compare: the difference's cause and subject (compare/compare_result.h Cause).
std::string CompareTitle(const Finding& f) {
  const std::string change = f.kind == FindingKind::kCompareRegression ? "slower" : "faster";
  const std::string amount = D(std::fabs(f.cost.added_ns)) + Per(f);
  const std::string& c = f.subject_kind;
  std::string what;
  if (c == "added") what = "added " + f.subject;
  else if (c == "removed") what = "removed " + f.subject;
  else if (c == "shapes") what = "input shapes changed";
  else if (c == "dtypes") what = "input types changed (precision)";
  else if (c == "same_work") what = f.subject + ": the same work takes " + (f.kind == FindingKind::kCompareRegression ? "longer" : "less time");
  else if (c == "many_small") what = "many small differences (" + f.subject + ")";
  else if (c == "communication") what = "communication (" + f.subject + "): exposed time and collective calls";
  else if (c == "host_gap") what = "host time outside operators in " + PhaseWords(f.subject);
  else if (c == "unlinked_gpu") what = "GPU " + f.subject + " without a launching operator";
  else what = f.subject;
  return fmt::format("NEW is {} by {} on {}: {}", change, amount, Ranks(f.ranks), what);
}

std::string Title(const Finding& f) {
  if (IsParallelFinding(f.kind)) return ParallelFindingTitle(f);
  switch (f.kind) {
    case FindingKind::kCompareRegression:
    case FindingKind::kCompareImprovement: return CompareTitle(f);
    case FindingKind::kSlowNode:
    case FindingKind::kSlowRank: return SlowGroupTitle(f);
    case FindingKind::kSlowFunction: return SlowFunctionTitle(f);
    case FindingKind::kExtraWork: return ExtraWorkTitle(f);
    case FindingKind::kCpuContention: return CpuContentionTitle(f);
    case FindingKind::kUnevenTiming: return UnevenTimingTitle(f);
    case FindingKind::kStalledCalls: return StalledCallsTitle(f);
    default: return TelemetryTitle(f);
  }
}

// ---- cost

std::string CostLine(const Finding& f) {
  const Cost& c = f.cost;
  switch (c.method) {
    case CostMethod::kWhatIfLikeMedian:
    case CostMethod::kWhatIfFaster:
    case CostMethod::kWhatIfReplay:
      if (c.saving_ns > 0) {
        return fmt::format("cost {}{} ({:.1f}% of the step): {} -> {} if fixed{}", D(c.saving_ns), Per(f),
                           100 * c.saving_ns / c.step_ns, D(c.step_ns), D(c.estimated_step_ns),
                           c.method == CostMethod::kWhatIfReplay ? " (steps replayed)" : "");
      }
      return "cost: none measurable in step time now";
    case CostMethod::kAddedWork:
      return fmt::format("adds {}{} on {} ({:.1f}% of the {} {}); no peer waits for it measurably, so fixing it "
                         "may not shorten the {}",
                         D(c.added_ns), Per(f), Ranks(f.ranks), c.step_ns > 0 ? 100 * c.added_ns / c.step_ns : 0.0,
                         D(c.step_ns), c.unit, c.unit);
    case CostMethod::kWindowShare:
      return fmt::format("during {} of the traced window", Pct(c.share));
    case CostMethod::kDelta:
      if (c.added_ns > 0) {
        return fmt::format("costs {}{} ({:.1f}% of NEW's step): {} -> {} without it", D(c.added_ns), Per(f),
                           c.step_ns > 0 ? 100 * c.added_ns / c.step_ns : 0.0, D(c.step_ns), D(c.estimated_step_ns));
      }
      return fmt::format("saves {}{} ({:.1f}% of BASE's step)", D(-c.added_ns), Per(f),
                         c.estimated_step_ns > 0 ? -100 * c.added_ns / c.estimated_step_ns : 0.0);
    case CostMethod::kNone: return "cost: not a matter of step time";
  }
  return "";
}

// ---- evidence

std::string RankCount(double n) { return fmt::format("{:.0f} rank{}", n, n == 1 ? "" : "s"); }

// "4 ranks" (every rank), "its 3 peers" or "its peer" (the others: slow_ranks.h).
std::string ComparedRanks(const Evidence& e) {
  const double n = e.Get("ranks_compared");
  if (e.Get("peers") <= 0) return RankCount(n);
  return n == 1 ? std::string("its peer") : fmt::format("its {:.0f} peers", n);
}

std::string LocalTimeSentence(const Evidence& e, const Finding& f) {
  return fmt::format("rank {}: local time (step minus communication wait) {}{} vs median {} over {} (abnormal "
                     "above +{}); communication wait {} vs median {}; compute busy {} vs median {}",
                     e.rank, D(e.Get("local_ns")), Per(f), D(e.Get("median_local_ns")),
                     ComparedRanks(e),
                     D(e.Get("threshold_ns")), D(e.Get("comm_wait_ns")), D(e.Get("median_comm_wait_ns")),
                     D(e.Get("compute_ns")), D(e.Get("median_compute_ns")));
}

std::string ArrivalSentence(const Evidence& e, const Finding& f) {
  return fmt::format("rank {} arrives late at its collectives: {}{} after the median rank, added over {:.0f} matched "
                     "collectives (median {}); last to arrive at {:.0f} of them, where the others waited {} for it alone",
                     e.rank, D(e.Get("late_ns")), Per(f), e.Get("collectives"), D(e.Get("median_lateness_ns")),
                     e.Get("last_arrivals"), D(e.Get("imposed_wait_ns")));
}

std::string FunctionSentence(const Evidence& e, const Finding& f) {
  if (f.kind == FindingKind::kSlowFunction) {
    // A part of the finding's function (a CPU op inside its Python path) is named.
    const std::string part =
        e.subject == f.subject ? ""
                               : fmt::format("{} {} inside it, ", FunctionKindWords(e.subject_kind), FunctionLabel(e));
    return fmt::format("{}rank {}: {}{} vs median {} over {} (+{}, abnormal above +{}); {} vs {} "
                       "calls{}, median call {} vs {}",
                       part, e.rank, D(e.Get("value_ns")), Per(f), D(e.Get("median_ns")),
                       RankCount(e.Get("ranks_compared")), D(e.Get("excess_ns")), D(e.Get("threshold_ns")),
                       Calls(e.Get("calls")), Calls(e.Get("median_calls")), Per(f), D(e.Get("per_call_ns")),
                       D(e.Get("median_per_call_ns")));
  }
  if (!e.Has("calls")) {  // a host's ranks together (cluster/host_outliers.cc)
    const std::string calls = e.Has("host_calls") ? fmt::format("; at least {} vs {} calls{}", Calls(e.Get("host_calls")),
                                                                Calls(e.Get("median_calls")), Per(f))
                                                  : "";
    return fmt::format("{} {} on {}: {}{} vs median {} on the other hosts' ranks (+{}{})",
                       FunctionKindWords(e.subject_kind), FunctionLabel(e), Ranks(e.ranks), D(e.Get("value_ns")), Per(f),
                       D(e.Get("median_ns")), D(e.Get("excess_ns")), calls);
  }
  return fmt::format("{} {} on rank {}: {}{} vs median {} (+{}; {} vs {} calls{})",
                     FunctionKindWords(e.subject_kind), FunctionLabel(e), e.rank, D(e.Get("value_ns")), Per(f),
                     D(e.Get("median_ns")), D(e.Get("excess_ns")), Calls(e.Get("calls")), Calls(e.Get("median_calls")),
                     Per(f));
}

std::string PhaseSentence(const Evidence& e, const Finding& f) {
  if (!e.Has("value_ns")) {  // a host's ranks together: their excess in the median step
    return fmt::format("{} ({} side) on {}: +{}{} over the other hosts' ranks (median over steps)",
                       PhaseWords(e.subject), e.detail, Ranks(e.ranks), D(e.Get("excess_ns")), Per(f));
  }
  return fmt::format("{} ({} side) on rank {}: {}{} vs median {}", PhaseWords(e.subject), e.detail, e.rank,
                     D(e.Get("value_ns")), Per(f), D(e.Get("median_ns")));
}

std::string HostPeersSentence(const Evidence& e, const Finding& f) {
  if (e.detail == "rank" && !e.ranks.empty()) {
    return fmt::format("{} on the same host {} {} not slow: the node is fine, the problem is specific to rank {} "
                       "(its GPU, its data, its process)",
                       Ranks(e.ranks), e.host, e.ranks.size() == 1 ? "is" : "are", f.ranks.empty() ? -1 : f.ranks.front());
  }
  if (e.detail == "rank") {
    return fmt::format("it is the only rank analysed on host {}: a slow node and a slow GPU look the same here", e.host);
  }
  if (e.detail == "node_work") {
    return fmt::format("every rank of host {} runs it, and no rank of another host does: work the node does that the "
                       "others do not (calls are counted, so a busy machine's noise cannot make it)",
                       e.host);
  }
  return fmt::format("{:.0f} of the {:.0f} ranks of host {} are slow{}", e.Get("slow_ranks"), e.Get("host_ranks"), e.host,
                     e.ranks.empty() ? "" : fmt::format(" ({} {} not)", Ranks(e.ranks), e.ranks.size() == 1 ? "is" : "are"));
}

std::string WhatIfSentence(const Evidence& e, const Finding& f) {
  if (e.detail == "faster") {
    return fmt::format("if it ran as on the median rank: step {} -> {} (saves {}{}; local times of the ranks spread by "
                       "{})",
                       D(e.Get("step_ns")), D(e.Get("estimated_step_ns")), D(e.Get("saving_ns")), Per(f),
                       D(e.Get("noise_ns")));
  }
  const std::string numbers = fmt::format("step {} -> {} (saves {}{})", D(e.Get("step_ns")), D(e.Get("estimated_step_ns")),
                                          D(e.Get("saving_ns")), Per(f));
  const bool one = f.ranks.size() == 1;
  const char* its = one ? "its" : "their";
  if (e.detail == "replay") return fmt::format("replayed with {} operations like {} peers' median: {}", its, its, numbers);
  if (e.detail == "previous_estimate") return "estimated before the replay: " + numbers;
  if (e.detail == "replay_excess") {
    return fmt::format("replayed with {} excess taken off {} work where it was slower than {} peers' median: {}", its,
                       its, its, numbers);
  }
  if (e.detail == "replay_bound") {
    return fmt::format("the replayed steps bound it: with {} operations like {} peers' median, {}, below the "
                       "per-step estimate of {}{}",
                       its, its, numbers, D(e.Get("per_step_saving_ns")), Per(f));
  }
  if (e.detail == "per_step") {
    return fmt::format("without {} excess in each step, each step as long as its slowest rank: {}", its, numbers);
  }
  if (e.detail == "host_wait_bound") {
    return fmt::format("the hosts' waits bound it: a step ends on the host, and the hosts waited for their GPUs and "
                       "peers only so long: {}, below the estimate of {}{}",
                       numbers, D(e.Get("per_step_saving_ns")), Per(f));
  }
  // A finding the replay costed: its own earlier estimate is no longer its cost.
  const std::string before = f.cost.method == CostMethod::kWhatIfReplay ? "estimated before the replay, " : "";
  return fmt::format("{}if {} behaved like the median rank: {}", before, one ? "it" : "they", numbers);
}

std::string TelemetrySentence(const Evidence& e) {
  std::string out;
  auto add = [&](const std::string& part) { out += (out.empty() ? "" : "; ") + part; };
  if (e.Has("cpu_busy_share")) {
    add(fmt::format("host CPU {} busy on {:.0f} cores (user {}, system {})", Pct(e.Get("cpu_busy_share")), e.Get("cpu_cores"),
                    Pct(e.Get("cpu_user_share")), Pct(e.Get("cpu_system_share"))));
  }
  if (e.Has("loader_cores")) {
    add(fmt::format("DataLoader worker processes of the ranks used {:.2f} cores, the rank processes themselves {:.2f}",
                    e.Get("loader_cores"), e.Get("rank_cores")));
  }
  if (e.Has("gpu_util_share")) add(fmt::format("GPU utilization {}", Pct(e.Get("gpu_util_share"))));
  if (e.Has("disk_read_bytes_per_s")) {
    add(fmt::format("disk read {}/s, write {}/s", FormatByteCount(static_cast<int64_t>(e.Get("disk_read_bytes_per_s"))),
                    FormatByteCount(static_cast<int64_t>(e.Get("disk_write_bytes_per_s")))));
  }
  if (e.Has("used_bytes")) {
    add(fmt::format("{} of {} used", FormatByteCount(static_cast<int64_t>(e.Get("used_bytes"))),
                    FormatByteCount(static_cast<int64_t>(e.Get("total_bytes")))));
  }
  if (e.Has("swap_bytes")) add(fmt::format("swap in use {}", FormatByteCount(static_cast<int64_t>(e.Get("swap_bytes")))));
  return out;
}

// ---- next steps

// Untraced time has no name to look up: the profile recorded nothing there.
std::string NextForUntraced(const Finding& f, std::string_view place) {
  const bool one = f.ranks.size() == 1;
  return fmt::format("find the Python that {} {} {}: the profile records no operation there (a sleep, file or "
                     "network I/O, a lock, pure-Python work); record with with_stack=True, or run `py-spy dump --pid "
                     "PID` on the {}, to name it",
                     Ranks(f.ranks), one ? "runs" : "run", place, one ? "rank" : "ranks");
}

// A CPU op a slower autograd node holds (cluster/findings.cc, HoldsAsHook): the first part listed.
const Evidence* HookPart(const Finding& f) {
  if (f.subject_kind != "cpu_op" || !f.subject.starts_with("autograd::engine::evaluate_function: ")) return nullptr;
  for (const Evidence& e : f.evidence) {
    if (e.kind == EvidenceKind::kFunction && e.subject != f.subject) return &e;
  }
  return nullptr;
}

std::string NextForHook(const Finding& f, const Evidence& part) {
  return fmt::format("look at the hooks autograd runs in {} on {} (Tensor.register_hook, "
                     "register_post_accumulate_grad_hook, a DDP communication hook): they add CPU op {} there, {:.1f} "
                     "vs {:.1f} calls{}; record with with_stack=True to name them",
                     f.subject.substr(std::string_view("autograd::engine::evaluate_function: ").size()), Ranks(f.ranks),
                     FunctionLabel(part), part.Get("calls"), part.Get("median_calls"), Per(f));
}

// AccumulateGrad itself only adds a gradient into .grad: more time in it with the same calls is
// the hooks that run when a gradient is ready (DDP's reducer launches its bucket all-reduces there).
bool IsAccumulateGrad(const Evidence& e) {
  return e.subject_kind == "cpu_op" && e.subject.starts_with("autograd::engine::evaluate_function: ") &&
         e.subject.ends_with("AccumulateGrad") && e.Get("calls") <= e.Get("median_calls") + 0.5;
}

std::string NextForFunction(const Finding& f) {
  const Evidence* e = FunctionEvidenceFor(f, f.next.subject);
  if (!e) return fmt::format("look at {} on {}", f.next.subject, Ranks(f.ranks));
  if (e->subject_kind == "untraced") return NextForUntraced(f, e->subject);
  const Evidence* phase = f.FindEvidence(EvidenceKind::kPhase);
  if (IsAccumulateGrad(*e)) {
    return fmt::format("look at the hooks that run when {} accumulates a gradient (a DDP communication hook and the "
                       "bucket all-reduces it launches, register_post_accumulate_grad_hook, Tensor.register_hook): "
                       "AccumulateGrad takes {}{} there and {} on its peers with as many calls; record with "
                       "with_stack=True to name them",
                       Ranks(f.ranks), D(e->Get("value_ns")), Per(f), D(e->Get("median_ns")));
  }
  return fmt::format("find out why {} {} takes {}{} on {} and {} on its peers{} (input shapes, clocks or throttling, a "
                     "different code path); `rankscope analyze --rank {}` shows where it runs",
                     FunctionKindWords(e->subject_kind), FunctionLabel(*e), D(e->Get("value_ns")), Per(f), Ranks(f.ranks),
                     D(e->Get("median_ns")), phase ? ", in " + PhaseWords(phase->subject) : "", f.ranks.front());
}

std::string NextTelemetry(const Finding& f) {
  switch (f.kind) {
    case FindingKind::kInputPipelineBound:
      return "Profile the DataLoader (enumerate(DataLoader) in the trace); cache or pre-decode the data, move "
             "augmentation to the GPU, or give the node more CPU per GPU. More workers only help if cores are idle.";
    case FindingKind::kInputPipelineCpuBound:
      return "Make data loading cheaper (cache, pre-decode, lighter augmentation) or run it elsewhere; the training "
             "steps wait for batches.";
    case FindingKind::kHostCpuSaturated:
      return "Find what else runs on the node (rankscope top, the ranks' CPU above); CPU-side work of the ranks "
             "(Python, launches) competes for the same cores.";
    case FindingKind::kGpuMostlyIdle:
      return "The ranks wait on something else: communication, I/O, synchronization or a slow peer; see the trace's "
             "idle breakdown and collective waits.";
    case FindingKind::kCpuSteal: return "Noisy neighbours or an oversubscribed VM host; ask for dedicated cores.";
    case FindingKind::kIoWait:
      return "Data or checkpoints on a slow disk: stage the data set on local NVMe or in page cache.";
    case FindingKind::kHostMemoryFull:
      return "Reduce DataLoader workers or prefetch_factor, or the ranks' host memory; the OOM killer is next.";
    case FindingKind::kGpuMemoryFull:
      return "Allocator retries and fragmentation slow steps down near the limit; check the trace's memory events.";
    default: return "";
  }
}

std::string Next(const Finding& f) {
  if (IsParallelFinding(f.kind)) return ParallelNextSentence(f);
  const std::string who = Ranks(f.ranks);
  const int64_t first = f.ranks.empty() ? 0 : f.ranks.front();
  switch (f.next.kind) {
    case NextStepKind::kNone: return "";
    case NextStepKind::kCheckHost:
      if (f.next.detail == "slower_ops") {
        const Evidence* e = f.FindEvidence(EvidenceKind::kSlowerOps);
        return fmt::format("check the {} of {} itself: its clock and thermal or power limits, and whether other "
                           "processes share its cores (more ranks than cores){}; then `rankscope analyze --rank {}`",
                           e->subject_kind == "kernel" ? "GPU" : "CPU", who,
                           e->Get("same_shapes") > 0 ? "" : "; if not, whether its batches are larger than its peers'",
                           first);
      }
      if (f.next.subject.empty()) {
        return fmt::format("check the hosts of {} themselves: CPU load and clock frequency, memory pressure, thermal or "
                           "power limits, and what else runs there; then `rankscope analyze --rank {}`",
                           who, first);
      }
      return fmt::format("check host {} itself: CPU load and clock frequency, memory pressure, thermal or power limits, "
                         "the network interface, and what else runs there; then `rankscope analyze --rank {}`",
                         f.next.subject, first);
    case NextStepKind::kFunctionOnRanks: return NextForFunction(f);
    case NextStepKind::kInputPipeline:
      return fmt::format("look at the input pipeline of {}: its DataLoader (workers, prefetch), the storage or data shard "
                         "it reads, and the CPU of its host; `rankscope analyze --rank {}` for its Python paths",
                         who, first);
    case NextStepKind::kPhaseOnRanks:
      return fmt::format("look at {} of {}: what runs there that its peers do not run (record with --with-stack to see "
                         "the Python functions); `rankscope analyze --rank {}`",
                         PhaseWords(f.next.subject), who, first);
    case NextStepKind::kBeforeCollectives:
      return fmt::format("look at what {} does before its collectives (communication hooks, host synchronisation, Python "
                         "between backward and all-reduce): no phase or function stands out, only its late arrival; "
                         "`rankscope analyze --rank {}`",
                         who, first);
    case NextStepKind::kCompareFunction:
      if (f.subject_kind == "untraced") return NextForUntraced(f, f.next.subject);
      if (f.subject_kind == "cpu_time") {
        return fmt::format("find what else runs in the process of {}: `py-spy dump --pid PID` shows every thread's "
                           "Python stack (a monitoring, logging or prefetch thread that spins); with_stack=True records "
                           "their Python in the trace",
                           who);
      }
      if (const Evidence* part = HookPart(f)) return NextForHook(f, *part);
      if (f.kind == FindingKind::kSlowNode) {  // work its ranks do more often than the other hosts' ranks
        return fmt::format("find where {}{} run {}, more often than the other hosts' ranks: `rankscope analyze "
                           "--rank {}` shows the CPU ops and Python paths it runs under",
                           who, f.hosts.empty() ? "" : " of host " + f.hosts.front(),
                           FunctionLabel(f.subject_kind, f.next.subject, f.next.detail), first);
      }
      // A Python path already says where it runs; a kernel or an op most ranks do not run does not.
      if (f.kind == FindingKind::kSlowFunction && OwnWork(f) && f.subject_kind != "python_path") {
        return fmt::format("find where {} runs {}, which most ranks do not run: `rankscope analyze --rank {}` shows the "
                           "CPU ops and Python paths it runs under",
                           who, FunctionLabel(f.subject_kind, f.next.subject, f.next.detail), first);
      }
      return fmt::format("compare {} on {} with a healthy rank (`rankscope analyze --rank {}`): calls, shapes, clocks",
                         FunctionLabel(f.subject_kind, f.next.subject, f.next.detail), who, first);
    case NextStepKind::kNodeCondition: return NextTelemetry(f);
    case NextStepKind::kCompareTable:
      return fmt::format("see {} in the comparison's {} table (`rankscope compare ... --rank {} --xlsx FILE` has every "
                         "row, both runs side by side)",
                         f.next.subject, f.next.detail, first);
    default: return HangNextStepSentence(f);  // the hang kinds' next steps (report/hang_report_text.cc)
  }
}

}  // namespace

std::string FunctionKindWords(std::string_view k) {
  if (k == "kernel") return "kernel";
  if (k == "memory_op") return "memory op";
  if (k == "runtime_call") return "runtime call";
  if (k == "cpu_op") return "CPU op";
  if (k == "python_path") return "Python path";
  if (k == "collective") return "collective";
  if (k == "kernels_of_op") return "GPU time of the kernels of CPU op";  // every kernel the op launched
  if (k == "untraced") return "untraced time";  // "untraced time between A and B": no slice recorded
  return "function";
}

std::string PhaseWords(std::string_view p) {
  if (p == "data_loading") return "data loading";
  if (p == "forward") return "forward";
  if (p == "backward") return "backward";
  if (p == "optimizer") return "the optimizer step";
  if (p == "other") return "time outside data loading, forward, backward and optimizer";
  return std::string(p);
}

std::string DescribeEvidence(const Evidence& e, const Finding& f) {
  switch (e.kind) {
    case EvidenceKind::kLocalTime: return LocalTimeSentence(e, f);
    case EvidenceKind::kArrival: return ArrivalSentence(e, f);
    case EvidenceKind::kPhase: return PhaseSentence(e, f);
    case EvidenceKind::kFunction: return FunctionSentence(e, f);
    case EvidenceKind::kUtilization:
      return fmt::format("GPU utilization of rank {}: {:.1f}% vs median {:.1f}%", e.rank, 100 * e.Get("value_share"),
                         100 * e.Get("median_share"));
    case EvidenceKind::kHostPeers: return HostPeersSentence(e, f);
    case EvidenceKind::kWhatIf: return WhatIfSentence(e, f);
    case EvidenceKind::kTelemetry: return TelemetrySentence(e);
    case EvidenceKind::kCompareDelta:
      return fmt::format("rank {}: {}{} in NEW vs {} in BASE ({}{}; the rank's step changed by {}, noise band {}){}",
                         e.rank, D(e.Get("new_ns")), Per(f), D(e.Get("base_ns")),
                         (e.Get("delta_ns") >= 0 ? "+" : "-") + D(std::fabs(e.Get("delta_ns"))), Per(f),
                         (e.Get("step_delta_ns") >= 0 ? "+" : "-") + D(std::fabs(e.Get("step_delta_ns"))),
                         D(e.Get("noise_ns")), e.text.empty() ? "" : "; " + e.text);
    case EvidenceKind::kText: return e.text;
    case EvidenceKind::kStage:
    case EvidenceKind::kStepImbalance: return ParallelEvidenceSentence(e, f);
    case EvidenceKind::kSlowerOps:
      return fmt::format("rank {} ran its peers' operations as often as they did, each slower: {:.0f} of their {:.0f} "
                         "largest {}s took over 1.1x their time on it, median {:.2f}x (the largest, {}, {:.2f}x){}",
                         e.rank, e.Get("slower"), e.Get("compared"), FunctionKindWords(e.subject_kind),
                         e.Get("median_ratio"), FunctionLabel(e), e.Get("largest_ratio"),
                         e.Get("same_shapes") > 0
                             ? fmt::format(", on the same input shapes (its steps' work signatures are its peers'): a "
                                           "slower or busier {} than theirs, not work of its own",
                                           e.subject_kind == "kernel" ? "GPU" : "CPU")
                             : fmt::format(": a slower or busier {}, or larger inputs (these traces carry no input "
                                           "shapes to tell)",
                                           e.subject_kind == "kernel" ? "GPU" : "CPU"));
    case EvidenceKind::kStalledCalls:
      return fmt::format("{} {} on rank {}: {}{} vs median {} (+{}); {:.0f} of its calls stalled, {}{} beyond its "
                         "p99 call; without them {}{} vs median {} ({} vs {} calls{})",
                         FunctionKindWords(e.subject_kind), FunctionLabel(e), e.rank, D(e.Get("value_ns")), Per(f),
                         D(e.Get("median_ns")), D(e.Get("excess_ns")), e.Get("stalled_calls"), D(e.Get("stall_ns")),
                         Per(f), D(e.Get("steady_ns")), Per(f), D(e.Get("steady_median_ns")), Calls(e.Get("calls")),
                         Calls(e.Get("median_calls")), Per(f));
    case EvidenceKind::kSameWork:
      if (e.detail == "no_shapes") {
        return fmt::format("the traces of {} carry no input shapes (record_shapes off): nothing in them tells "
                           "input of different sizes from a host that delays a different rank in each step",
                           Ranks(e.ranks));
      }
      if (e.detail == "own_work" && e.ranks == f.ranks) {  // no set of shapes is shared by most of them
        return fmt::format("no set of input shapes is shared by most of {}: they ran different ones, the same on "
                           "each rank in each of the {:.0f} steps — a constant difference (an uneven parameter "
                           "shard, a layer or a process group of some ranks' own), which would make the same ranks "
                           "slower in every step, not a different one in each",
                           Ranks(e.ranks), e.Get("steps"));
      }
      if (e.detail == "own_work") {
        return fmt::format("{} ran other input shapes than the rest, the same in each of the {:.0f} steps: a constant "
                           "difference (an uneven parameter shard, a layer of its own), which would make one rank "
                           "slower in every step, not a different one in each",
                           Ranks(e.ranks), e.Get("steps"));
      }
      if (e.detail == "slowest_rank") {
        const double own = e.Get("explained_steps");
        return fmt::format("the work of {} changed between them (work signatures, from record_shapes), but the "
                           "slowest rank of a step ran work of its own (other operators or shapes than both its peers "
                           "in the step and its own usual ones) in {} the {:.0f} steps compared: {}",
                           Ranks(e.ranks), own > 0 ? fmt::format("only {:.0f} of", own) : "none of", e.Get("steps"),
                           own > 0 ? "in the others its input did not make it the slowest"
                                   : "its input never made it the slowest");
      }
      if (e.detail == "per_rank") {
        return fmt::format("each of {} ran the same {:.0f} CPU operators with the same input shapes in each of the "
                           "{:.0f} steps compared (its work signature, from record_shapes, never changed): no rank's "
                           "input grew or shrank from step to step",
                           Ranks(e.ranks), e.Get("shaped_ops"), e.Get("steps"));
      }
      return fmt::format("every one of {} ran the same {:.0f} CPU operators with the same input shapes in each of the "
                         "{:.0f} steps compared (equal work signatures, from record_shapes): no rank had more input "
                         "to process",
                         Ranks(e.ranks), e.Get("shaped_ops"), e.Get("steps"));
    case EvidenceKind::kCpuWait:
      if (e.detail == "extra_cpu") {
        return fmt::format("rank {} ran {}{} more on a CPU than the other ranks of host {}, which wait {}{} for a CPU "
                           "(run queue): the ranks share the host's CPUs, so what fixing it saves depends on how the "
                           "scheduler shares them, and can be well above or below the cost shown",
                           e.rank, D(e.Get("run_ns") - e.Get("peers_run_ns")), Per(f), e.host,
                           D(e.Get("peers_wait_ns")), Per(f));
      }
      if (e.detail == "unrecorded_cpu") {
        return fmt::format("rank {}'s process ran {}{} on a CPU against {} on its {:.0f} peers (median; the kernel's "
                           "schedstat, abnormal above +{}), with {:.0f} threads against {:.0f}; the operations its trace "
                           "records took {} against {}: the extra CPU time is not theirs but a thread of its own, or "
                           "Python the profile does not record",
                           e.rank, D(e.Get("run_ns")), Per(f), D(e.Get("peers_run_ns")), e.Get("peers"),
                           D(e.Get("threshold_ns")), e.Get("threads"), e.Get("peers_threads"), D(e.Get("recorded_ns")),
                           D(e.Get("peers_recorded_ns")));
      }
      if (e.detail == "wait_on_contended_cpu") {
        return fmt::format("rank {} waits ({}) while the other ranks of host {} wait {}{} for a CPU (run queue): they "
                           "run on the CPU it leaves, so fixing it can save less than the cost shown",
                           e.rank, FunctionLabel(e), e.host, D(e.Get("peers_wait_ns")), Per(f));
      }
      return fmt::format("rank {}: waited {}{} for a CPU (run queue) while it ran {}", e.rank, D(e.Get("wait_ns")),
                         Per(f), D(e.Get("run_ns")));
    default:  // hang evidence: the hang report draws it as stacks and collectives
      return e.subject.empty() ? std::string(EvidenceKindName(e.kind))
                               : fmt::format("{}: {}", EvidenceKindName(e.kind), e.subject);
  }
}

FindingWords DescribeFinding(const Finding& f) {
  FindingWords w;
  if (KindInfo(f.kind).source == "hang") {
    // The hang kinds' sentences live with the hang report (report/hang_report_text.cc).
    w.title = HangFindingSentence(f);
    w.next = HangNextStepSentence(f);
    for (const Evidence& e : f.evidence) w.evidence.push_back(DescribeEvidence(e, f));
    return w;
  }
  w.title = Title(f);
  w.cost = CostLine(f);
  for (const Evidence& e : f.evidence) w.evidence.push_back(DescribeEvidence(e, f));
  w.next = Next(f);
  return w;
}

}  // namespace rankscope

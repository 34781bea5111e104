#include "rankscope/cluster/findings.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "rankscope/cluster/communication_work.h"

namespace rankscope {
namespace {

// Untraced time inside a DataLoader's `enumerate(DataLoader)#...` range: the loader's own Python.
bool IsLoaderUntracedTime(const FunctionOutlier& f) {
  return f.kind == FunctionKind::kUntraced && f.name.starts_with("inside enumerate(DataLoader)#");
}

// Facts for the findings of one job: every number a sentence in report/finding_text.cc needs
// goes into the finding's evidence, under the names docs/findings.md lists.
class Rules {
 public:
  explicit Rules(const FindingInputs& in) : in_(in) {}

  std::vector<Finding> Build() {
    std::vector<Finding> out;
    std::set<uint32_t> covered;
    for (const SlowGroup& g : in_.slow->groups) {
      out.push_back(SlowGroupFinding(g));
      covered.insert(g.ranks.begin(), g.ranks.end());
    }
    std::set<std::tuple<uint32_t, FunctionKind, std::string, std::string>> reported;
    for (Finding& f : SlowFunctionFindings(covered, &reported)) out.push_back(std::move(f));
    for (Finding& f : ExtraWorkFindings(covered, reported)) out.push_back(std::move(f));
    RankFindings(&out);
    return out;
  }

 private:
  int64_t RankNo(uint32_t i) const { return (*in_.ranks)[i].rank.rank; }
  const RankMetrics& M(uint32_t i) const { return (*in_.metrics)[i]; }

  std::vector<int64_t> RankNumbers(const std::vector<uint32_t>& ranks) const {
    std::vector<int64_t> out;
    for (uint32_t r : ranks) out.push_back(RankNo(r));
    std::sort(out.begin(), out.end());
    return out;
  }

  double MedianOf(double RankMetrics::*field) const {
    std::vector<double> v;
    for (const RankMetrics& m : *in_.metrics) v.push_back(m.*field);
    return ComputeRobustStats(v).median;
  }

  // The spread of local times across ranks: savings below it are not measurable.
  double Noise() const { return in_.outlier_k * kMadToSigma * in_.slow->local.mad; }

  // Work the peers do not do: the rank calls the function materially more often, or at all where
  // the median rank never does (a fault from the middle of the trace, a checkpoint every fourth
  // step: fewer than one call per step). Timing noise on a busy machine stretches calls; it does
  // not add them.
  bool CallsDiffer(const FunctionOutlier& fn) const {
    if (fn.kind == FunctionKind::kUntraced) return UntracedCodeOfItsOwn(fn);
    if (fn.median_calls <= 0) return fn.calls > 0;
    return fn.calls - fn.median_calls >= std::max(1.0, kExtraCallsShare * fn.median_calls);
  }

  // Untraced time (analysis/untraced_time.h) is not a call that a busy host can stretch: nothing
  // runs there but the Python the profile does not record. When the rank spends twice its peers'
  // time at the place, in at least kUntracedRecurrences gaps (a preemption between two ops lands
  // anywhere, once), and its typical gap there carries most of the excess (not a few long ones),
  // it runs code there that its peers do not: a sleep before every forward, a stall every fourth
  // step.
  bool UntracedCodeOfItsOwn(const FunctionOutlier& fn) const {
    const double gaps = fn.calls * static_cast<double>(std::max<uint64_t>(M(fn.rank).steps, 1));
    const double typical = static_cast<double>(fn.per_call_ns) * std::min(fn.calls, 1.0);
    return gaps >= kUntracedRecurrences && fn.value_ns >= 2 * fn.median_ns && typical >= 0.5 * fn.excess_ns;
  }

  // Work the peers do not do, or do less often. A wait (a sleep, a lock) is never that work,
  // wherever it is called more often.
  bool PeersDoNotDo(const FunctionOutlier& fn) const {
    return !fn.wait && ((fn.median_calls <= 0 && fn.kind != FunctionKind::kUntraced) || CallsDiffer(fn));
  }

  // The function that names a rank's anomaly: the largest, unless it is the same calls taking
  // longer and work the peers do not do explains nearly as much — that work is the cause; the
  // caller that grew with it (the optimizer's step around a hook, a module's forward around extra
  // GEMMs) is where it shows. Moves it to the front. `rank_excess_ns`: the extra local time of a
  // slow rank, which work the peers do not do explains too when it is nearly all of it (a
  // gradient hook's matmuls inside an `AccumulateGrad` that is larger still).
  void LeadWithExtraWork(std::vector<const FunctionOutlier*>* functions,
                         double rank_excess_ns = std::numeric_limits<double>::infinity()) const {
    if (functions->empty() || PeersDoNotDo(*functions->front())) return;
    const double top = std::min(functions->front()->excess_ns, rank_excess_ns);
    const auto extra = std::find_if(functions->begin(), functions->end(), [&](const FunctionOutlier* fn) {
      return PeersDoNotDo(*fn) && fn->excess_ns >= kExtraWorkLeadShare * top;
    });
    if (extra != functions->end()) std::rotate(functions->begin(), extra, extra + 1);
  }

  // Whether one call path holds the other, or is it: their times overlap.
  static bool Nested(const FunctionOutlier& a, const FunctionOutlier& b) {
    return a.name == b.name || CallPathHolds(a.name, b.name) || CallPathHolds(b.name, a.name);
  }

  // The functions whose excesses add up to what the rank spends more than its peers: the lead,
  // and each listed Python path its peers do not run (as often) that no counted path holds or is
  // held by. Sibling call paths do not overlap in time, so their excesses add: a checkpoint whose
  // time is split between creating tensors and `torch.save` beside it is both. Other kinds are not
  // added: a CPU op's time is inside some Python path, and kernels run on a device.
  std::vector<const FunctionOutlier*> AddedFunctions(const std::vector<const FunctionOutlier*>& functions) const {
    std::vector<const FunctionOutlier*> counted;
    for (size_t i = 0; i < functions.size() && i < kFunctionsPerFinding; ++i) {
      const FunctionOutlier* fn = functions[i];
      if (i > 0 && (fn->kind != FunctionKind::kPythonPath || functions.front()->kind != FunctionKind::kPythonPath ||
                    !PeersDoNotDo(*fn))) {
        continue;
      }
      if (std::none_of(counted.begin(), counted.end(), [&](const FunctionOutlier* c) { return Nested(*c, *fn); })) {
        counted.push_back(fn);
      }
    }
    return counted;
  }

  // The same calls taking longer add to the rank's own time: a function its peers also run that is
  // slower on a rank whose local time is not (the rank was descheduled inside it and lost nothing
  // overall, or the time moved between functions) is timing noise, not extra work. A function the
  // peers never run (a thread of its own, e.g. a CPU hog) is work they do not do, wherever its
  // time goes — but untraced time at a place the peers have none is a gap like any other.
  bool ShowsInLocalTime(const FunctionOutlier& fn) const {
    if (fn.median_calls <= 0 && fn.kind != FunctionKind::kUntraced) return true;
    return ShowsInLocalTime(fn.rank, fn.excess_ns);
  }
  // A host phase every rank has (the time outside forward, backward... included) is the same case:
  // more of it on a rank whose local time is no longer than its peers' moved there from elsewhere.
  bool ShowsInLocalTime(uint32_t rank, double excess_ns) const {
    return rank < in_.slow->excess_ns.size() && in_.slow->excess_ns[rank] >= kShownShare * excess_ns;
  }

  bool HasHosts() const { return !in_.hosts->empty() && in_.hosts->front().source != HostSource::kNone; }

  Cost CostOf(const WhatIf& w, CostMethod method, double added_ns) const {
    Cost c;
    c.method = method;
    c.unit = in_.unit;
    c.saving_ns = w.saving_ns;
    c.step_ns = w.step_ns;
    c.estimated_step_ns = w.estimated_step_ns;
    c.added_ns = added_ns;
    return c;
  }

  static Severity SeverityOf(const Cost& c) {
    if (c.saving_ns <= 0) return Severity::kInfo;
    return c.step_ns > 0 && c.saving_ns >= kCriticalShare * c.step_ns ? Severity::kCritical : Severity::kWarning;
  }

  Evidence PhaseEvidence(const PhaseOutlier& p) const {
    Evidence e;
    e.kind = EvidenceKind::kPhase;
    e.rank = RankNo(p.rank);
    e.subject = StepPhaseName(p.phase);
    e.subject_kind = "phase";
    e.detail = p.gpu ? "GPU" : "CPU";
    e.Set("value_ns", p.value_ns).Set("median_ns", p.median_ns).Set("excess_ns", p.excess_ns)
        .Set("threshold_ns", p.threshold_ns);
    return e;
  }

  Evidence FunctionEvidence(const FunctionOutlier& fn) const {
    Evidence e;
    e.kind = EvidenceKind::kFunction;
    e.rank = RankNo(fn.rank);
    e.subject = fn.name;
    e.subject_kind = FunctionKindName(fn.kind);
    e.detail = fn.detail;
    e.Set("value_ns", fn.value_ns).Set("median_ns", fn.median_ns).Set("excess_ns", fn.excess_ns)
        .Set("threshold_ns", fn.threshold_ns).Set("calls", fn.calls).Set("median_calls", fn.median_calls)
        .Set("per_call_ns", static_cast<double>(fn.per_call_ns))
        .Set("median_per_call_ns", static_cast<double>(fn.median_per_call_ns)).Set("ranks_compared", fn.compared);
    if (fn.wait) e.Set("wait", 1);  // a sleep, a lock, a GPU synchronisation: cpu_contention.h reads it
    return e;
  }

  Evidence WhatIfEvidence(const Cost& c, std::string_view how) const {
    Evidence e;
    e.kind = EvidenceKind::kWhatIf;
    e.detail = std::string(how);
    e.Set("step_ns", c.step_ns).Set("estimated_step_ns", c.estimated_step_ns).Set("saving_ns", c.saving_ns);
    return e;
  }

  Finding SlowGroupFinding(const SlowGroup& g) const;
  void AddLocalEvidence(const SlowGroup& g, Finding* f) const;
  void AddArrivalEvidence(const SlowGroup& g, Finding* f) const;
  void AddHostEvidence(const SlowGroup& g, Finding* f) const;
  NextStep NextForSlowGroup(const SlowGroup& g, const Finding& f, const PhaseOutlier* phase,
                            const std::vector<const FunctionOutlier*>& functions) const;
  // The row of `whole` on the rank of `part` when it can hold it: not a wait, with at least its excess.
  static const FunctionOutlier* Holder(const std::vector<const FunctionOutlier*>& whole,
                                       const FunctionOutlier& part) {
    const auto row =
        std::find_if(whole.begin(), whole.end(), [&](const FunctionOutlier* q) { return q->rank == part.rank; });
    return row == whole.end() || (*row)->wait || (*row)->excess_ns < part.excess_ns ? nullptr : *row;
  }

  // Whether the rows of a Python path hold those of a part: the same ranks, on each a path that
  // is not a wait, with at least the part's excess. A CPU op is held only as extra calls made by
  // work the peers do not do (the path): a CPU op's calls come from some Python path, but which
  // one the tables do not say, and an op the peers call as often that is slower there can be
  // anywhere (autograd's backward functions under a slow forward path, with anomaly detection on).
  bool Holds(const std::vector<const FunctionOutlier*>& path, const std::vector<const FunctionOutlier*>& part) const {
    if (path.size() != part.size()) return false;
    for (const FunctionOutlier* p : part) {
      const FunctionOutlier* holder = Holder(path, *p);
      if (!holder || (p->kind == FunctionKind::kCpuOp && !(PeersDoNotDo(*holder) && CallsDiffer(*p)))) return false;
    }
    return true;
  }

  // Whether the rows of autograd's evaluate_function of a node hold a CPU op's: the same ranks, on
  // each with at least the op's excess, the op called more often than on the peers. Autograd runs
  // the user's hooks (tensor hooks, a DDP communication hook) inside it, so in a trace without
  // Python stacks the ops a hook adds are the node's: one fault, not one finding per op.
  bool HoldsAsHook(const std::vector<const FunctionOutlier*>& node,
                   const std::vector<const FunctionOutlier*>& op) const {
    if (node.size() != op.size() || !node.front()->name.starts_with("autograd::engine::evaluate_function: ")) {
      return false;
    }
    return std::all_of(op.begin(), op.end(),
                       [&](const FunctionOutlier* p) { return Holder(node, *p) && CallsDiffer(*p); });
  }

  std::vector<Finding> SlowFunctionFindings(
      const std::set<uint32_t>& covered,
      std::set<std::tuple<uint32_t, FunctionKind, std::string, std::string>>* reported) const;
  std::vector<Finding> ExtraWorkFindings(
      const std::set<uint32_t>& covered,
      const std::set<std::tuple<uint32_t, FunctionKind, std::string, std::string>>& reported) const;

  const FindingInputs& in_;
};

Finding Rules::SlowGroupFinding(const SlowGroup& g) const {
  Finding f;
  f.kind = g.scope == SlowScope::kNode ? FindingKind::kSlowNode : FindingKind::kSlowRank;
  f.ranks = RankNumbers(g.ranks);
  if (HasHosts()) f.hosts = {g.host};
  const std::set<uint32_t> mine(g.ranks.begin(), g.ranks.end());
  const PhaseOutlier* phase = nullptr;
  for (const PhaseOutlier& p : *in_.phases) {
    if (mine.count(p.rank)) {
      phase = &p;
      break;
    }
  }
  std::vector<const FunctionOutlier*> functions;
  for (const FunctionOutlier& fn : *in_.functions) {
    if (mine.count(fn.rank) && fn.kind != FunctionKind::kCollective && functions.size() < kFunctionsPerFinding &&
        fn.excess_ns >= kFunctionShareOfExcess * in_.slow->excess_ns[fn.rank]) {
      functions.push_back(&fn);
    }
  }
  std::vector<double> excess;
  for (uint32_t r : g.ranks) excess.push_back(in_.slow->excess_ns[r]);
  const double median_excess = ComputeRobustStats(excess).median;
  LeadWithExtraWork(&functions, median_excess);
  f.cost = CostOf(WhatIfLikeMedian(*in_.metrics, g.ranks), CostMethod::kWhatIfLikeMedian, median_excess);
  f.severity = SeverityOf(f.cost);
  if (phase) {
    f.subject = StepPhaseName(phase->phase);
    f.subject_kind = "phase";
  }
  AddLocalEvidence(g, &f);
  AddArrivalEvidence(g, &f);
  if (phase) f.evidence.push_back(PhaseEvidence(*phase));
  for (const FunctionOutlier* fn : functions) f.evidence.push_back(FunctionEvidence(*fn));
  for (const UtilizationOutlier& u : in_.utilization->outliers) {
    if (!mine.count(u.rank)) continue;
    Evidence e;
    e.kind = EvidenceKind::kUtilization;
    e.rank = RankNo(u.rank);
    e.Set("value_share", u.value).Set("median_share", in_.utilization->median);
    f.evidence.push_back(std::move(e));
  }
  AddHostEvidence(g, &f);
  f.evidence.push_back(WhatIfEvidence(f.cost, "like_median"));
  f.next = NextForSlowGroup(g, f, phase, functions);
  return f;
}

void Rules::AddLocalEvidence(const SlowGroup& g, Finding* f) const {
  const SlowRankAnalysis& s = *in_.slow;
  for (uint32_t r : g.ranks) {
    Evidence e;
    e.kind = EvidenceKind::kLocalTime;
    e.rank = RankNo(r);
    const RobustStats& peers = s.compared[r];
    e.Set("local_ns", M(r).local_ns).Set("median_local_ns", peers.median).Set("ranks_compared", peers.count)
        .Set("threshold_ns", s.compared_threshold_ns[r])
        .Set("peers", peers.count < s.local.count ? 1 : 0).Set("comm_wait_ns", M(r).comm_wait_ns)
        .Set("median_comm_wait_ns", MedianOf(&RankMetrics::comm_wait_ns)).Set("compute_ns", M(r).compute_ns)
        .Set("median_compute_ns", MedianOf(&RankMetrics::compute_ns));
    f->evidence.push_back(std::move(e));
  }
}

void Rules::AddArrivalEvidence(const SlowGroup& g, Finding* f) const {
  for (uint32_t r : g.ranks) {
    const RankArrival& a = in_.arrival->ranks[r];
    if (a.instances == 0) continue;
    const double steps = M(r).steps > 0 ? static_cast<double>(M(r).steps) : 1.0;
    Evidence e;
    e.kind = EvidenceKind::kArrival;
    e.rank = RankNo(r);
    e.Set("late_ns", static_cast<double>(a.late_sum_ns) / steps).Set("collectives", a.instances)
        .Set("median_lateness_ns", static_cast<double>(a.lateness_ns)).Set("last_arrivals", a.last_votes)
        .Set("imposed_wait_ns", static_cast<double>(a.imposed_wait_ns));
    f->evidence.push_back(std::move(e));
  }
}

void Rules::AddHostEvidence(const SlowGroup& g, Finding* f) const {
  if (!HasHosts()) return;
  Evidence e;
  e.kind = EvidenceKind::kHostPeers;
  e.host = g.host;
  e.detail = g.scope == SlowScope::kNode ? "node" : "rank";
  for (uint32_t r : g.host_ranks) {
    if (!in_.slow->slow[r]) e.ranks.push_back(RankNo(r));
  }
  std::sort(e.ranks.begin(), e.ranks.end());
  e.Set("slow_ranks", g.ranks.size()).Set("host_ranks", g.host_ranks.size());
  f->evidence.push_back(std::move(e));
}

NextStep Rules::NextForSlowGroup(const SlowGroup& g, const Finding& f, const PhaseOutlier* phase,
                                 const std::vector<const FunctionOutlier*>& functions) const {
  if (g.scope == SlowScope::kNode) return {NextStepKind::kCheckHost, g.host, ""};
  // A function explains the slowness when it holds at least half of the phase's excess; a
  // sleep or a stall in data loading has no function of its own, and a wait there (the loader's
  // queue, polled while its worker processes are behind) or the loader's own untraced time (its
  // dataset and collate code, untraced_time.h) is the input pipeline's.
  const bool waits_for_input = phase && phase->phase == StepPhase::kDataLoading && !functions.empty() &&
                               (functions.front()->wait || IsLoaderUntracedTime(*functions.front()));
  if (!functions.empty() && !waits_for_input &&
      (!phase || functions.front()->excess_ns >= 0.5 * phase->excess_ns)) {
    return {NextStepKind::kFunctionOnRanks, functions.front()->name, functions.front()->detail};
  }
  if (phase && phase->phase == StepPhase::kDataLoading) return {NextStepKind::kInputPipeline, f.subject, ""};
  if (phase) return {NextStepKind::kPhaseOnRanks, f.subject, ""};
  return {NextStepKind::kBeforeCollectives, "", ""};
}

std::vector<Finding> Rules::SlowFunctionFindings(
    const std::set<uint32_t>& covered,
    std::set<std::tuple<uint32_t, FunctionKind, std::string, std::string>>* reported) const {
  // One finding per function, over the ranks where it is abnormal and that no slow rank covers.
  using Key = std::tuple<FunctionKind, std::string, std::string>;
  std::map<Key, std::vector<const FunctionOutlier*>> by_function;
  std::vector<Key> order;
  for (const FunctionOutlier& fn : *in_.functions) {
    if (covered.count(fn.rank)) continue;
    Key key{fn.kind, fn.name, fn.detail};
    auto [it, inserted] = by_function.try_emplace(key);
    if (inserted) order.push_back(key);
    it->second.push_back(&fn);
  }
  // A call path inside a Python path abnormal on the same ranks, or a CPU op called more often
  // where such a path is work the peers do not do, its excess fitting inside the path's, is part
  // of it, not a fault of its own: evidence in the path's finding. Without such a path, a CPU op
  // called more often inside a slower autograd node is the node's (HoldsAsHook).
  std::map<Key, Key> container;
  for (const Key& key : order) {
    const FunctionKind kind = std::get<0>(key);
    if (kind != FunctionKind::kCpuOp && kind != FunctionKind::kPythonPath) continue;
    for (const Key& outer : order) {
      if (std::get<0>(outer) != FunctionKind::kPythonPath || outer == key) continue;
      const bool nested = kind == FunctionKind::kPythonPath && CallPathHolds(std::get<1>(outer), std::get<1>(key));
      if ((kind == FunctionKind::kCpuOp || nested) && Holds(by_function[outer], by_function[key])) {
        container.emplace(key, outer);
        break;
      }
    }
    if (kind != FunctionKind::kCpuOp || container.count(key)) continue;
    for (const Key& node : order) {
      const bool op = std::get<0>(node) == FunctionKind::kCpuOp;
      if (op && node != key && HoldsAsHook(by_function[node], by_function[key])) {
        container.emplace(key, node);
        break;
      }
    }
  }
  std::vector<Finding> out;
  std::map<Key, size_t> finding_of;
  for (const Key& key : order) {
    if (container.count(key)) continue;
    const std::vector<const FunctionOutlier*>& rows = by_function[key];
    std::vector<RankSaving> savings;
    std::vector<uint32_t> ranks;
    for (const FunctionOutlier* fn : rows) {
      ranks.push_back(fn->rank);
      // Waiting in a collective is not local work: finishing it sooner does not move the pace.
      // Nor is the communication kernel or op of the same work (issue 16): its time was never local.
      if (!IsCommunicationWork(fn->kind, fn->name)) savings.push_back({fn->rank, fn->excess_ns});
    }
    const WhatIf w = WhatIfFaster(*in_.metrics, savings);
    if (w.saving_ns < std::max(in_.min_excess_ns, Noise())) continue;  // left to extra_work
    const FunctionOutlier& top = *rows.front();
    Finding f;
    f.kind = FindingKind::kSlowFunction;
    f.ranks = RankNumbers(ranks);
    f.subject = top.name;
    f.subject_kind = FunctionKindName(top.kind);
    f.subject_detail = top.detail;
    f.cost = CostOf(w, CostMethod::kWhatIfFaster, top.excess_ns);
    f.severity = SeverityOf(f.cost);
    for (const FunctionOutlier* fn : rows) {
      f.evidence.push_back(FunctionEvidence(*fn));
      reported->insert({fn->rank, fn->kind, fn->name, fn->detail});
    }
    Evidence what_if = WhatIfEvidence(f.cost, "faster");
    what_if.Set("noise_ns", Noise());
    f.evidence.push_back(std::move(what_if));
    f.next = IsLoaderUntracedTime(top) ? NextStep{NextStepKind::kInputPipeline, top.name, ""}
                                       : NextStep{NextStepKind::kCompareFunction, top.name, top.detail};
    finding_of[key] = out.size();
    out.push_back(std::move(f));
  }
  std::map<size_t, size_t> parts_shown;  // per finding
  for (const Key& part : order) {  // largest excess first
    if (!container.count(part)) continue;
    Key whole = container.at(part);  // a part of a part: of the outermost path
    for (size_t hops = 0; container.count(whole) && hops < container.size(); ++hops) whole = container.at(whole);
    const auto it = finding_of.find(whole);
    if (it == finding_of.end()) continue;  // the path has no finding: neither has its part
    Finding& f = out[it->second];
    const bool shown = parts_shown[it->second]++ < kFunctionsPerFinding;
    // After the path's own rows and the larger parts, before the what-if.
    auto at = std::find_if(f.evidence.begin(), f.evidence.end(),
                           [](const Evidence& e) { return e.kind == EvidenceKind::kWhatIf; });
    for (const FunctionOutlier* fn : by_function[part]) {
      if (shown) at = f.evidence.insert(at, FunctionEvidence(*fn)) + 1;
      reported->insert({fn->rank, fn->kind, fn->name, fn->detail});
    }
  }
  return out;
}

std::vector<Finding> Rules::ExtraWorkFindings(
    const std::set<uint32_t>& covered,
    const std::set<std::tuple<uint32_t, FunctionKind, std::string, std::string>>& reported) const {
  // Per rank: its abnormal phases and (non-collective) functions that no finding above covers.
  std::map<uint32_t, std::pair<const PhaseOutlier*, std::vector<const FunctionOutlier*>>> by_rank;
  // A rank with a costed slow_function finding has its time explained there; its phase is not news.
  std::set<uint32_t> explained;
  for (const auto& key : reported) explained.insert(std::get<0>(key));
  for (const PhaseOutlier& p : *in_.phases) {
    if (covered.count(p.rank) || explained.count(p.rank) || p.excess_ns < Noise()) continue;
    if (!p.gpu && !ShowsInLocalTime(p.rank, p.excess_ns)) continue;  // GPU time is not host-local time
    if (by_rank[p.rank].first == nullptr) by_rank[p.rank].first = &p;
  }
  for (const FunctionOutlier& fn : *in_.functions) {
    if (covered.count(fn.rank) || IsCommunicationWork(fn.kind, fn.name)) continue;
    if (reported.count({fn.rank, fn.kind, fn.name, fn.detail})) continue;
    if (fn.excess_ns < in_.min_excess_ns || !(CallsDiffer(fn) || fn.excess_ns >= Noise())) continue;
    if (!CallsDiffer(fn) && !ShowsInLocalTime(fn)) continue;
    by_rank[fn.rank].second.push_back(&fn);
  }
  std::vector<Finding> out;
  for (auto& [rank, anomalies] : by_rank) {
    auto& [phase, functions] = anomalies;
    if (!phase && functions.empty()) continue;
    const double largest = functions.empty() ? 0 : functions.front()->excess_ns;
    LeadWithExtraWork(&functions);
    const std::vector<const FunctionOutlier*> added_functions = AddedFunctions(functions);
    // At least the largest anomaly (a caller holding the extra work that leads), more where
    // sibling paths add up.
    double added = functions.empty() ? phase->excess_ns : largest;
    double summed = 0;
    for (const FunctionOutlier* fn : added_functions) summed += fn->excess_ns;
    added = std::max(added, summed);
    Finding f;
    f.kind = FindingKind::kExtraWork;
    f.severity = Severity::kInfo;
    f.ranks = {RankNo(rank)};
    if (HasHosts()) f.hosts = {(*in_.hosts)[rank].host};
    f.cost = CostOf(WhatIf{JobStepNs(*in_.metrics), JobStepNs(*in_.metrics), 0}, CostMethod::kAddedWork, added);
    if (!functions.empty()) {
      f.subject = functions.front()->name;
      f.subject_kind = FunctionKindName(functions.front()->kind);
      f.subject_detail = functions.front()->detail;
    } else {
      f.subject = StepPhaseName(phase->phase);
      f.subject_kind = "phase";
    }
    for (size_t i = 0; i < functions.size() && i < kFunctionsPerFinding; ++i) {
      Evidence e = FunctionEvidence(*functions[i]);
      const bool in_added =
          std::find(added_functions.begin(), added_functions.end(), functions[i]) != added_functions.end();
      if (added_functions.size() > 1 && in_added) e.Set("in_added", 1);
      f.evidence.push_back(std::move(e));
    }
    if (phase) f.evidence.push_back(PhaseEvidence(*phase));
    Evidence local;
    local.kind = EvidenceKind::kLocalTime;
    local.rank = RankNo(rank);
    local.Set("local_ns", M(rank).local_ns).Set("median_local_ns", in_.slow->local.median)
        .Set("ranks_compared", in_.slow->local.count).Set("threshold_ns", in_.slow->threshold_ns)
        .Set("comm_wait_ns", M(rank).comm_wait_ns).Set("median_comm_wait_ns", MedianOf(&RankMetrics::comm_wait_ns))
        .Set("compute_ns", M(rank).compute_ns).Set("median_compute_ns", MedianOf(&RankMetrics::compute_ns))
        .Set("noise_ns", Noise());
    f.evidence.push_back(std::move(local));
    f.next = functions.empty() ? NextStep{NextStepKind::kPhaseOnRanks, f.subject, ""}
                               : NextStep{NextStepKind::kCompareFunction, f.subject, f.subject_detail};
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace

std::vector<Finding> BuildClusterFindings(const FindingInputs& in) { return Rules(in).Build(); }

bool IsAboutRanks(const Finding& f) {
  const bool kind = f.kind == FindingKind::kSlowRank || f.kind == FindingKind::kSlowNode ||
                    f.kind == FindingKind::kSlowFunction || f.kind == FindingKind::kExtraWork;
  return kind && !f.ranks.empty();
}

std::vector<uint32_t> RankIndices(const std::vector<int64_t>& rank_numbers, const std::vector<int64_t>& ranks) {
  std::vector<uint32_t> out;
  for (int64_t r : ranks) {
    const auto it = std::find(rank_numbers.begin(), rank_numbers.end(), r);
    if (it == rank_numbers.end()) return {};
    out.push_back(static_cast<uint32_t>(it - rank_numbers.begin()));
  }
  return out;
}

Severity BoundedSeverity(double saving_ns, double step_ns, double min_excess_ns) {
  return step_ns > 0 && saving_ns >= kCriticalShare * step_ns ? Severity::kCritical
         : saving_ns >= min_excess_ns                          ? Severity::kWarning
                                                               : Severity::kInfo;
}

}  // namespace rankscope

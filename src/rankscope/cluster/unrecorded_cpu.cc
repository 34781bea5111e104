#include "rankscope/cluster/unrecorded_cpu.h"

#include <algorithm>
#include <set>

namespace rankscope {
namespace {

// The rank's recorded host operations per unit (the union of the CPU ops of its training threads).
double RecordedCpuNs(const RankSummary& r, bool per_step) {
  const double units = per_step ? static_cast<double>(std::max<uint64_t>(r.steps_in_trace, 1)) : 1.0;
  return static_cast<double>(r.host_compute_ns) / units;
}

std::set<int64_t> RanksNamed(const std::vector<Finding>& findings) {
  std::set<int64_t> out;
  for (const Finding& f : findings) {
    const bool about_ranks = f.kind == FindingKind::kSlowRank || f.kind == FindingKind::kSlowNode ||
                             f.kind == FindingKind::kSlowFunction || f.kind == FindingKind::kExtraWork;
    if (about_ranks) out.insert(f.ranks.begin(), f.ranks.end());
  }
  return out;
}

std::vector<double> Sorted(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v;
}

}  // namespace

bool AddUnrecordedCpuFindings(const UnrecordedCpuInputs& in, std::vector<Finding>* findings) {
  const std::vector<RankSummary>& ranks = *in.ranks;
  const std::vector<RankCpuWait>& waits = *in.waits;
  std::vector<size_t> known;  // rank indices with the kernel's record
  for (size_t i = 0; i < waits.size() && i < ranks.size(); ++i) {
    if (waits[i].known) known.push_back(i);
  }
  if (known.size() < 3) return false;
  const bool per_step = in.unit == "step";
  std::vector<double> run, recorded, threads, comm_wait;
  for (size_t i : known) {
    run.push_back(waits[i].run_ns);
    recorded.push_back(RecordedCpuNs(ranks[i], per_step));
    threads.push_back(static_cast<double>(ranks[i].cpu_sched.threads));
    comm_wait.push_back(in.metrics && i < in.metrics->size() ? (*in.metrics)[i].comm_wait_ns : 0.0);
  }
  // From four ranks on each is tested against its peers (slow_ranks.h): with few ranks the tested
  // one widens the spread it is tested by.
  LeaveOneOutStats peers(run);
  const std::vector<double> recorded_sorted = Sorted(recorded), threads_sorted = Sorted(threads);
  const std::vector<double> comm_wait_sorted = Sorted(comm_wait);
  const RobustStats all = ComputeRobustStats(run);
  const std::set<int64_t> named = RanksNamed(*findings);
  bool added = false;
  for (size_t k = 0; k < known.size(); ++k) {
    const size_t i = known[k];
    const int64_t rank = (*in.rank_numbers)[i];
    const RobustStats against = known.size() >= 4 ? peers.Without(run[k]) : all;
    const double excess = run[k] - against.median;
    if (!in.rule.IsHigh(run[k], against) || excess < in.min_excess_ns || named.count(rank)) continue;
    const double peers_recorded = MedianWithout(recorded_sorted, {recorded[k]});  // the others' median
    const double recorded_excess = recorded[k] - peers_recorded;
    if (recorded_excess >= 0.5 * excess) continue;  // its operations show it: the other rules' case
    // Its longer wait for its peers may have run on a CPU (header): only the excess beyond it counts.
    const double peers_comm_wait = MedianWithout(comm_wait_sorted, {comm_wait[k]});
    if (excess - std::max(0.0, comm_wait[k] - peers_comm_wait) < in.min_excess_ns) continue;
    Finding f;
    f.kind = FindingKind::kExtraWork;
    f.severity = Severity::kInfo;
    f.ranks = {rank};
    const RankHost& host = (*in.hosts)[i];
    if (host.source != HostSource::kNone) f.hosts = {host.host};
    f.subject_kind = "cpu_time";
    f.subject = "CPU time the trace does not record";
    f.cost.method = CostMethod::kAddedWork;
    f.cost.unit = in.unit;
    f.cost.step_ns = f.cost.estimated_step_ns = in.step_ns;
    f.cost.added_ns = excess;
    Evidence e;
    e.kind = EvidenceKind::kCpuWait;
    e.detail = "unrecorded_cpu";
    e.rank = rank;
    e.Set("run_ns", run[k]).Set("peers_run_ns", against.median).Set("threshold_ns", in.rule.Threshold(against));
    e.Set("recorded_ns", recorded[k]).Set("peers_recorded_ns", peers_recorded);
    e.Set("threads", threads[k]).Set("peers_threads", MedianWithout(threads_sorted, {threads[k]}));
    e.Set("comm_wait_ns", comm_wait[k]).Set("peers_comm_wait_ns", peers_comm_wait);
    e.Set("peers", static_cast<double>(known.size() - 1));
    f.evidence.push_back(std::move(e));
    f.next = {NextStepKind::kCompareFunction, f.subject, ""};
    findings->push_back(std::move(f));
    added = true;
  }
  return added;
}

}  // namespace rankscope

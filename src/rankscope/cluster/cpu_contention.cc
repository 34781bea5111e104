#include "rankscope/cluster/cpu_contention.h"

#include <algorithm>
#include <unordered_map>

#include "rankscope/cluster/robust_rule.h"

namespace rankscope {
namespace {

Evidence CpuWaitEvidence(int64_t rank, const RankCpuWait& w) {
  Evidence e;
  e.kind = EvidenceKind::kCpuWait;
  e.rank = rank;
  e.Set("run_ns", w.run_ns);
  e.Set("wait_ns", w.wait_ns);
  return e;
}

// The finding, told as the host's contention: same ranks, subject and evidence, no saving.
Finding AsContention(const Finding& f, const std::vector<const RankCpuWait*>& waits) {
  Finding c = AsMachineNote(f, FindingKind::kCpuContention);
  for (size_t i = 0; i < waits.size(); ++i) c.evidence.push_back(CpuWaitEvidence(f.ranks[i], *waits[i]));
  c.next = {NextStepKind::kCheckHost, "", ""};
  return c;
}

// The finding's lead function when it is a wait (a sleep, a lock: its function evidence says
// "wait"), else null. The lead is the subject when that is a function, else (a phase, or none)
// the first function listed.
const Evidence* LeadingWait(const Finding& f) {
  const bool subject_is_function = !f.subject.empty() && f.subject_kind != "phase";
  for (const Evidence& e : f.evidence) {
    if (e.kind != EvidenceKind::kFunction || (subject_is_function && e.subject != f.subject)) continue;
    return e.Get("wait") > 0 ? &e : nullptr;
  }
  return nullptr;
}

}  // namespace

std::vector<RankCpuWait> MeasureCpuWait(const std::vector<RankSummary>& ranks, const std::vector<RankMetrics>& metrics) {
  std::vector<RankCpuWait> out(ranks.size());
  for (size_t i = 0; i < ranks.size() && i < metrics.size(); ++i) {
    const CpuSchedWindow& s = ranks[i].cpu_sched;
    if (!s.known()) continue;
    // The record covers the recorded steps; per step like every other number when there are steps.
    const double units =
        metrics[i].steps > 0 ? static_cast<double>(std::max<uint64_t>(ranks[i].steps_in_trace, 1)) : 1.0;
    out[i] = {true, static_cast<double>(s.run_ns) / units, static_cast<double>(s.wait_ns) / units};
  }
  return out;
}

void NoteContendedCpu(const std::vector<RankCpuWait>& waits, const std::vector<RankHost>& hosts,
                      const std::vector<int64_t>& rank_numbers, double min_excess_ns, std::vector<Finding>* findings) {
  if (waits.size() != hosts.size() || waits.size() != rank_numbers.size()) return;
  for (Finding& f : *findings) {
    const bool about_a_rank = f.kind == FindingKind::kSlowRank || f.kind == FindingKind::kSlowFunction ||
                              f.kind == FindingKind::kExtraWork;
    if (!about_a_rank || f.ranks.size() != 1) continue;
    const auto it = std::find(rank_numbers.begin(), rank_numbers.end(), f.ranks.front());
    if (it == rank_numbers.end()) continue;
    const size_t me = static_cast<size_t>(it - rank_numbers.begin());
    if (!waits[me].known) continue;
    std::vector<double> run, wait;  // the host's other ranks
    for (size_t j = 0; j < waits.size(); ++j) {
      if (j == me || !waits[j].known || hosts[j].source == HostSource::kNone || hosts[j].host != hosts[me].host) continue;
      run.push_back(waits[j].run_ns);
      wait.push_back(waits[j].wait_ns);
    }
    if (run.empty()) continue;
    const double peers_run = ComputeRobustStats(run).median;
    const double peers_wait = ComputeRobustStats(wait).median;
    const double extra = waits[me].run_ns - peers_run;
    const double noteworthy_ns = std::max(min_excess_ns, 1.0);  // below the minimum cost it is not news
    Evidence e = CpuWaitEvidence(f.ranks.front(), waits[me]);
    if (const Evidence* wait = LeadingWait(f)) {
      // Its CPU surplus, if any, is the effect of being late (it runs while its peers wait for it).
      if (f.cost.saving_ns <= 0 || peers_wait < noteworthy_ns) continue;
      e.detail = "wait_on_contended_cpu";
      e.subject = wait->subject;
      e.subject_kind = wait->subject_kind;
    } else if (extra >= noteworthy_ns && peers_wait >= extra) {
      e.detail = "extra_cpu";
    } else {
      continue;
    }
    e.host = hosts[me].host;
    e.Set("peers_run_ns", peers_run).Set("peers_wait_ns", peers_wait).Set("peers", static_cast<double>(run.size()));
    f.evidence.push_back(std::move(e));
  }
}

bool AttributeImbalanceToContention(const std::vector<RankCpuWait>& waits, const std::vector<int64_t>& rank_numbers,
                                    std::vector<Finding>* findings) {
  std::unordered_map<int64_t, const RankCpuWait*> by_rank;
  for (size_t i = 0; i < waits.size() && i < rank_numbers.size(); ++i) {
    if (waits[i].known) by_rank[rank_numbers[i]] = &waits[i];
  }
  bool changed = false;
  for (Finding& f : *findings) {
    const Evidence* imbalance = f.FindEvidence(EvidenceKind::kStepImbalance);
    if (f.kind != FindingKind::kPerStepImbalance || !imbalance || f.ranks.empty()) continue;
    std::vector<const RankCpuWait*> mine;
    std::vector<double> wait;
    for (int64_t r : f.ranks) {
      auto it = by_rank.find(r);
      if (it == by_rank.end()) break;
      mine.push_back(it->second);
      wait.push_back(it->second->wait_ns);
    }
    if (mine.size() != f.ranks.size()) continue;
    const double median_wait = ComputeRobustStats(wait).median;
    if (median_wait < kExplainedShare * imbalance->Get("mean_excess_ns")) continue;
    f = AsContention(f, mine);
    changed = true;
  }
  return changed;
}

}  // namespace rankscope

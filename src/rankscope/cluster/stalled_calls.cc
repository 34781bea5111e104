#include "rankscope/cluster/stalled_calls.h"

#include <cmath>
#include <map>
#include <set>
#include <string>
#include <tuple>

namespace rankscope {
namespace {

// (rank number, kind, name, detail): a function row as the findings' evidence names it.
using RowKey = std::tuple<int64_t, std::string, std::string, std::string>;
using Stalled = std::map<RowKey, const FunctionOutlier*>;

Evidence StalledEvidence(const FunctionOutlier& o, int64_t rank, const std::vector<RankMetrics>& metrics) {
  const double steps = o.rank < metrics.size() && metrics[o.rank].steps > 0 ? metrics[o.rank].steps : 1;
  Evidence e;
  e.kind = EvidenceKind::kStalledCalls;
  e.rank = rank;
  e.subject = o.name;
  e.subject_kind = std::string(FunctionKindName(o.kind));
  e.detail = o.detail;
  e.Set("value_ns", o.value_ns).Set("median_ns", o.median_ns).Set("excess_ns", o.excess_ns);
  e.Set("stall_ns", o.stall_ns).Set("stalled_calls", std::round(o.stalls * steps));
  e.Set("steady_ns", o.value_ns - o.stall_ns).Set("steady_median_ns", o.steady_median_ns);
  e.Set("calls", o.calls).Set("median_calls", o.median_calls);
  return e;
}

// The stalled outliers a function finding is made of, or empty when any of its rows is not one
// (or it is no function finding).
std::vector<const FunctionOutlier*> AllStalled(const Finding& f, const Stalled& stalled) {
  if (f.kind != FindingKind::kSlowFunction && f.kind != FindingKind::kExtraWork) return {};
  std::vector<const FunctionOutlier*> out;
  for (const Evidence& e : f.evidence) {
    if (e.kind != EvidenceKind::kFunction) continue;
    const auto it = stalled.find({e.rank, e.subject_kind, e.subject, e.detail});
    if (it == stalled.end()) return {};
    out.push_back(it->second);
  }
  return out;
}

}  // namespace

bool NoteStalledCalls(const std::vector<FunctionOutlier>& outliers, const std::vector<int64_t>& rank_numbers,
                      const std::vector<RankHost>& hosts, const std::vector<RankMetrics>& metrics,
                      std::vector<Finding>* findings) {
  Stalled stalled;
  for (const FunctionOutlier& o : outliers) {
    if (o.stalled && o.rank < rank_numbers.size()) {
      stalled.emplace(RowKey{rank_numbers[o.rank], std::string(FunctionKindName(o.kind)), o.name, o.detail}, &o);
    }
  }
  if (stalled.empty()) return false;
  Finding note;
  note.kind = FindingKind::kStalledCalls;
  note.severity = Severity::kInfo;
  note.subject_kind = "ranks";
  std::set<int64_t> ranks;
  std::set<std::string> host_names;
  std::set<const FunctionOutlier*> told;
  std::vector<bool> converted(findings->size(), false);
  for (size_t i = 0; i < findings->size(); ++i) {
    const Finding& f = (*findings)[i];
    const std::vector<const FunctionOutlier*> rows = AllStalled(f, stalled);
    if (rows.empty()) continue;
    converted[i] = true;
    note.cost.unit = f.cost.unit;  // no saving claimed: the step as it is
    note.cost.step_ns = note.cost.estimated_step_ns = f.cost.step_ns;
    for (const FunctionOutlier* o : rows) {
      if (!told.insert(o).second) continue;
      const int64_t rank = rank_numbers[o->rank];
      ranks.insert(rank);
      if (o->rank < hosts.size() && !hosts[o->rank].host.empty()) host_names.insert(hosts[o->rank].host);
      note.evidence.push_back(StalledEvidence(*o, rank, metrics));
    }
  }
  if (note.evidence.empty()) return false;
  note.ranks.assign(ranks.begin(), ranks.end());
  note.hosts.assign(host_names.begin(), host_names.end());
  note.next = {NextStepKind::kCheckHost, note.hosts.size() == 1 ? note.hosts.front() : "", ""};
  std::vector<Finding> kept;
  for (size_t i = 0; i < findings->size(); ++i) {
    if (!converted[i]) kept.push_back(std::move((*findings)[i]));
  }
  kept.push_back(std::move(note));
  *findings = std::move(kept);
  return true;
}

}  // namespace rankscope

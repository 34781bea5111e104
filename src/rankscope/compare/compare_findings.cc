#include "rankscope/compare/compare_findings.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

namespace rankscope::compare {

std::vector<Finding> CompareFindings(const std::vector<RankComparison>& ranks, size_t per_rank) {
  using Key = std::tuple<Cause, std::string, bool>;
  std::map<Key, Finding> by_key;
  std::map<Key, double> largest;
  for (const RankComparison& r : ranks) {
    size_t taken = 0;
    for (const Difference& d : r.differences) {
      if (!d.beyond_noise || taken >= per_rank) continue;
      ++taken;
      const bool slower = d.delta_ns() > 0;
      const Key key{d.cause, d.subject, slower};
      Finding& f = by_key[key];
      if (f.ranks.empty()) {
        f.kind = slower ? FindingKind::kCompareRegression : FindingKind::kCompareImprovement;
        f.subject = d.subject;
        f.subject_kind = std::string(CauseName(d.cause));
        f.cost.method = CostMethod::kDelta;
        f.cost.unit = "step";
        f.next = {NextStepKind::kCompareTable, d.subject,
                  d.subject_kind == "module" ? "modules" : d.cause == Cause::kCommunication ? "communication" : "operators"};
      }
      f.ranks.push_back(r.new_rank);
      const double magnitude = std::fabs(d.delta_ns());
      if (magnitude > largest[key]) {
        largest[key] = magnitude;
        f.cost.saving_ns = slower ? magnitude : 0;
        f.cost.added_ns = d.delta_ns();
        f.cost.step_ns = r.new_steps.mean_ns;
        f.cost.estimated_step_ns = r.new_steps.mean_ns - d.delta_ns();
        const double share = r.new_steps.mean_ns > 0 ? magnitude / r.new_steps.mean_ns : 0;
        f.severity = share >= 0.10 ? Severity::kWarning : Severity::kInfo;
      }
      if (f.evidence.size() < 8) {
        Evidence e;
        e.kind = EvidenceKind::kCompareDelta;
        e.rank = r.new_rank;
        e.subject = d.subject;
        e.subject_kind = d.subject_kind;
        e.detail = std::string(CauseName(d.cause));
        e.Set("base_ns", d.base_ns).Set("new_ns", d.new_ns).Set("delta_ns", d.delta_ns());
        e.Set("noise_ns", r.noise_ns).Set("step_delta_ns", r.delta_ns);
        if (d.base_count > 0 || d.new_count > 0) e.Set("base_count", d.base_count).Set("new_count", d.new_count);
        e.text = d.before.empty() ? "" : d.before + " -> " + d.after;
        f.evidence.push_back(std::move(e));
      }
    }
  }
  std::vector<Finding> out;
  for (auto& [key, f] : by_key) {
    std::sort(f.ranks.begin(), f.ranks.end());
    out.push_back(std::move(f));
  }
  RankFindings(&out);  // regressions by what reverting them is worth, then improvements
  return out;
}

}  // namespace rankscope::compare

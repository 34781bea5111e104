// Functions across ranks: for the heaviest functions of each kind (by the median rank's time
// per step), every rank's time per step — the values cluster diagnosis compares
// (CollectFunctionSamples) — with their five-number summary, and the ranks cluster diagnosis
// found abnormal for the function (cluster.functions). Functions with an outlier are always in.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "rankscope/analysis/stats.h"
#include "rankscope/report/view_data.h"

namespace rankscope {
namespace {

using nlohmann::json;

struct Key {
  FunctionKind kind;
  std::string name, detail;
  auto operator<=>(const Key&) const = default;
};

int64_t Ns(double v) { return std::llround(v); }

}  // namespace

json FunctionSpreadJson(const std::vector<RankSummary>& ranks, const ClusterDiagnosis& d, const ViewLimits& limits) {
  std::map<Key, std::vector<const FunctionOutlier*>> outliers;
  for (const FunctionOutlier& f : d.functions) outliers[{f.kind, f.name, f.detail}].push_back(&f);

  struct Row {
    const FunctionSamples* f;
    std::array<int64_t, 5> box;  // min, q1, median, q3, max of value_ns
  };
  const std::vector<FunctionSamples> all = CollectFunctionSamples(ranks, d.metrics, d.min_excess_ns);
  std::map<FunctionKind, std::vector<Row>> by_kind;
  for (const FunctionSamples& f : all) {
    if (f.samples.empty()) continue;
    std::vector<int64_t> v;
    v.reserve(f.samples.size());
    for (const FunctionValue& s : f.samples) v.push_back(Ns(s.value_ns));
    Row row{&f, {}};
    const double qs[5] = {0, 0.25, 0.5, 0.75, 1};
    for (int i = 0; i < 5; ++i) row.box[i] = Quantile(v, qs[i]);
    by_kind[f.kind].push_back(row);
  }
  json rank_numbers = json::array();
  for (size_t r = 0; r < ranks.size(); ++r) rank_numbers.push_back(d.rank_numbers[r]);
  json kinds = json::array();
  for (auto& [kind, rows] : by_kind) {
    std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.box[2] > b.box[2]; });
    json out_rows = json::array();
    size_t kept = 0, omitted = 0;
    for (const Row& row : rows) {
      const FunctionSamples& f = *row.f;
      auto o = outliers.find({f.kind, f.name, f.detail});
      if (kept >= limits.max_functions && o == outliers.end()) {
        ++omitted;
        continue;
      }
      ++kept;
      json values(ranks.size(), nullptr);  // by position in `ranks`; null: not compared
      for (const FunctionValue& s : f.samples) values[s.rank] = Ns(s.value_ns);
      json abnormal = json::array();
      if (o != outliers.end()) {
        for (const FunctionOutlier* x : o->second) {
          abnormal.push_back({{"rank", d.rank_numbers[x->rank]}, {"value_ns", Ns(x->value_ns)},
                              {"excess_ns", Ns(x->excess_ns)}, {"threshold_ns", Ns(x->threshold_ns)}});
        }
      }
      out_rows.push_back({{"name", f.name}, {"detail", f.detail}, {"compared", f.samples.size()},
                          {"min_ns", row.box[0]}, {"q1_ns", row.box[1]}, {"median_ns", row.box[2]},
                          {"q3_ns", row.box[3]}, {"max_ns", row.box[4]}, {"values_ns", std::move(values)},
                          {"outliers", std::move(abnormal)}});
    }
    kinds.push_back({{"kind", FunctionKindName(kind)}, {"functions", std::move(out_rows)}, {"omitted", omitted}});
  }
  return {{"schema", kViewsSchema}, {"view", "functions"}, {"unit", d.unit}, {"ranks", rank_numbers},
          {"kinds", std::move(kinds)}};
}

}  // namespace rankscope

// JSON for the report's `cluster` and `findings` sections. Ranks are written as rank numbers
// (the diagnosis indexes summaries); docs/report-schema.md documents every field and
// docs/cluster.md defines every number.
#include <cmath>

#include "rankscope/report/analysis_report.h"
#include "rankscope/report/layout_report.h"
#include "rankscope/report/replay_report.h"

namespace rankscope {
namespace {

using nlohmann::json;

int64_t Ns(double v) { return std::llround(v); }

class ClusterJson {
 public:
  explicit ClusterJson(const ClusterDiagnosis& d) : d_(d) {}

  json Cluster() const {
    return {{"options", Options()},
            {"unit", d_.unit},
            {"step_ns", Ns(d_.total.step_ns)},
            {"local_time", {{"median_ns", Ns(d_.slow.local.median)}, {"mad_ns", Ns(d_.slow.local.mad)},
                            {"threshold_ns", Ns(d_.slow.threshold_ns)}}},
            {"ranks", Ranks()},
            {"hosts", Hosts()},
            {"clock", Clock()},
            {"collectives", Collectives()},
            {"phases", Phases()},
            {"functions", Functions(d_.functions)},
            {"gpu_utilization", Utilization()},
            {"what_if", WhatIfJson(d_.total, SlowRanks())},
            {"what_if_findings", AllFindings()},
            {"layout", LayoutJson(d_.layout, d_.parallel)},
            {"replay", ReplayJson(d_.replay)}};
  }

 private:
  int64_t Rank(uint32_t i) const { return d_.rank_numbers[i]; }

  json RankNumbers(const std::vector<uint32_t>& ranks) const {
    json out = json::array();
    for (uint32_t r : ranks) out.push_back(Rank(r));
    return out;
  }

  std::vector<uint32_t> SlowRanks() const {
    std::vector<uint32_t> out;
    for (uint32_t r = 0; r < d_.slow.slow.size(); ++r) {
      if (d_.slow.slow[r]) out.push_back(r);
    }
    return out;
  }

  json Options() const {
    const ClusterOptions& o = d_.options;
    return {{"outlier_k", o.outlier_k},
            {"outlier_margin", o.outlier_margin},
            {"min_cost_share", o.min_cost_share},
            {"min_excess_ns", Ns(d_.min_excess_ns)},
            {"hosts_file", o.hosts_source.empty() ? json(nullptr) : json(o.hosts_source)},
            {"max_reported_instances", o.max_reported_instances}};
  }

  static json PhasesJson(const std::array<double, kNumStepPhases>& ns) {
    json j = json::object();
    for (int p = 0; p < kNumStepPhases; ++p) j[std::string(StepPhaseName(static_cast<StepPhase>(p)))] = Ns(ns[p]);
    return j;
  }

  json Ranks() const {
    json out = json::array();
    for (uint32_t r = 0; r < d_.metrics.size(); ++r) {
      const RankMetrics& m = d_.metrics[r];
      const RankArrival& a = d_.arrival.ranks[r];
      const bool gpu = m.gpu_utilization.has_value();
      out.push_back({{"rank", Rank(r)},
                     {"host", d_.hosts[r].host},
                     {"host_source", HostSourceName(d_.hosts[r].source)},
                     {"clock_offset_ns", d_.clock.offset_of[r]},
                     {"steps", m.steps},
                     {"step_ns", Ns(m.step_ns)},
                     {"mean_step_ns", Ns(m.mean_step_ns)},
                     {"comm_wait_ns", Ns(m.comm_wait_ns)},
                     {"local_ns", Ns(m.local_ns)},
                     {"local_excess_ns", Ns(d_.slow.excess_ns[r])},
                     {"compute_ns", Ns(m.compute_ns)},
                     {"cpu_phases_ns", m.steps > 0 ? PhasesJson(m.cpu_phase_ns) : json(nullptr)},
                     {"gpu_phases_ns", m.steps > 0 && gpu ? PhasesJson(m.gpu_phase_ns) : json(nullptr)},
                     {"gpu_utilization", gpu ? json(*m.gpu_utilization) : json(nullptr)},
                     {"collectives", a.instances},
                     {"last_arriver_votes", a.last_votes},
                     {"lateness_ns", a.lateness_ns},
                     {"late_sum_ns", a.late_sum_ns},
                     {"arrival_steps", a.arrival_steps},
                     {"late_steps", a.late_steps},
                     {"imposed_wait_ns", a.imposed_wait_ns},
                     {"outlier", static_cast<bool>(d_.slow.outlier[r])},
                     {"slow", static_cast<bool>(d_.slow.slow[r])}});
    }
    return out;
  }

  json Hosts() const {
    std::map<std::string, std::pair<std::vector<uint32_t>, std::vector<uint32_t>>> by_host;
    for (uint32_t r = 0; r < d_.hosts.size(); ++r) {
      auto& [all, slow] = by_host[d_.hosts[r].host];
      all.push_back(r);
      if (d_.slow.slow[r]) slow.push_back(r);
    }
    json out = json::array();
    for (const auto& [host, ranks] : by_host) {
      out.push_back({{"host", host}, {"ranks", RankNumbers(ranks.first)}, {"slow_ranks", RankNumbers(ranks.second)}});
    }
    return out;
  }

  json Clock() const {
    json domains = json::array();
    for (const ClockDomain& c : d_.clock.domains) {
      domains.push_back({{"host", c.host}, {"ranks", RankNumbers(c.ranks)}, {"offset_ns", c.offset_ns},
                         {"estimated", c.estimated}, {"spread_ns", c.spread_ns}, {"samples", c.samples}});
    }
    return {{"reference", d_.clock.domains.empty() ? json(nullptr) : json(d_.clock.domains.front().host)},
            {"iterations", d_.clock.iterations},
            {"domains", domains}};
  }

  json Collectives() const {
    const CollectiveMatching& m = d_.matching;
    json groups = json::array();
    uint64_t complete = 0;
    for (const CollectiveGroup& g : m.groups) {
      groups.push_back({{"name", g.name}, {"desc", g.desc}, {"ranks", g.ranks}, {"members", RankNumbers(g.members)},
                        {"match", MatchKindName(g.kind)}, {"instances", g.instances}, {"complete", g.complete}});
      complete += g.complete;
    }
    json rows = json::array();
    const size_t keep = std::min(d_.arrival.instances.size(), d_.options.max_reported_instances);
    for (size_t i = 0; i < keep; ++i) {
      const InstanceArrival& a = d_.arrival.instances[i];
      const MatchedCollective& c = m.instances[a.matched];
      auto opt = [](int64_t v) { return v >= 0 ? json(v) : json(nullptr); };
      rows.push_back({c.group, c.op, opt(c.seq), opt(c.step), c.ordinal, c.participants.size(), a.first_ns, a.median_ns,
                      a.last_ns, a.skew_ns, Rank(a.first_rank), a.last_rank == kNoRank ? json(nullptr) : json(Rank(a.last_rank)),
                      a.last_gap_ns});
    }
    return {{"matched", m.instances.size()},
            {"complete", complete},
            {"single", m.single},
            {"duplicates", m.duplicates},
            {"median_skew_ns", d_.arrival.median_skew_ns},
            {"max_skew_ns", d_.arrival.max_skew_ns},
            {"groups", groups},
            {"instance_columns", {"group", "op", "seq", "step", "ordinal", "participants", "first_arrival_ns",
                                  "median_arrival_ns", "last_arrival_ns", "skew_ns", "first_rank", "last_rank",
                                  "last_gap_ns"}},
            {"instances", rows},
            {"omitted_instances", d_.arrival.instances.size() - keep}};
  }

  json PhaseJson(const PhaseOutlier& p) const {
    return {{"phase", StepPhaseName(p.phase)}, {"side", p.gpu ? "gpu" : "cpu"}, {"rank", Rank(p.rank)},
            {"value_ns", Ns(p.value_ns)}, {"median_ns", Ns(p.median_ns)}, {"threshold_ns", Ns(p.threshold_ns)},
            {"excess_ns", Ns(p.excess_ns)}};
  }

  json Phases() const {
    json out = json::array();
    for (const PhaseOutlier& p : d_.phases) out.push_back(PhaseJson(p));
    return out;
  }

  json Functions(const std::vector<FunctionOutlier>& rows) const {
    json out = json::array();
    for (const FunctionOutlier& f : rows) {
      out.push_back({{"kind", FunctionKindName(f.kind)}, {"name", f.name}, {"detail", f.detail}, {"rank", Rank(f.rank)},
                     {"value_ns", Ns(f.value_ns)}, {"median_ns", Ns(f.median_ns)}, {"threshold_ns", Ns(f.threshold_ns)},
                     {"excess_ns", Ns(f.excess_ns)},
                     {"ratio", f.median_ns > 0 ? json(f.value_ns / f.median_ns) : json(nullptr)},
                     {"calls", f.calls}, {"median_calls", f.median_calls}, {"per_call_ns", f.per_call_ns},
                     {"median_per_call_ns", f.median_per_call_ns}, {"compared", f.compared}});
    }
    return out;
  }

  json Utilization() const {
    const UtilizationSummary& u = d_.utilization;
    if (u.ranks == 0) return nullptr;
    json abnormal = json::array();
    for (const UtilizationOutlier& o : u.outliers) abnormal.push_back({{"rank", Rank(o.rank)}, {"value", o.value}, {"low", o.low}});
    return {{"ranks", u.ranks}, {"min", u.min}, {"median", u.median}, {"max", u.max}, {"threshold", u.threshold},
            {"abnormal", abnormal}};
  }

  json WhatIfJson(const WhatIf& w, const std::vector<uint32_t>& ranks) const {
    return {{"ranks", RankNumbers(ranks)}, {"step_ns", Ns(w.step_ns)}, {"estimated_step_ns", Ns(w.estimated_step_ns)},
            {"saving_ns", Ns(w.saving_ns)}};
  }

  // Every finding about ranks fixed at once; null below two such findings.
  json AllFindings() const {
    const CombinedWhatIf& a = d_.all_findings;
    if (a.findings < 2) return nullptr;
    const WhatIf& w = a.what_if;
    return {{"findings", a.findings}, {"ranks", a.ranks}, {"step_ns", Ns(w.step_ns)},
            {"estimated_step_ns", Ns(w.estimated_step_ns)}, {"saving_ns", Ns(w.saving_ns)}};
  }

  const ClusterDiagnosis& d_;
};

}  // namespace

nlohmann::json ClusterToJson(const ClusterDiagnosis& d) { return ClusterJson(d).Cluster(); }

}  // namespace rankscope

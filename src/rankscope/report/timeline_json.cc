// The Marey timeline of one step: per rank, the step and its collective instances on the
// reference clock (each host's clock offset removed, as cluster diagnosis aligns arrivals), and
// per matched instance who arrived first and last. Times are ns relative to `origin_unix_ns`
// (the earliest aligned step start), so they stay exact as JavaScript numbers.
#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "rankscope/report/view_data.h"

namespace rankscope {
namespace {

using nlohmann::json;

int64_t MiddleStep(const std::vector<int64_t>& steps) { return steps[(steps.size() - 1) / 2]; }

const StepSummary* FindStep(const RankSummary& r, int64_t number) {
  for (const StepSummary& s : r.steps) {
    if (s.number == number) return &s;
  }
  return nullptr;
}

json PhasesJson(const std::array<int64_t, kNumStepPhases>& ns) {
  json j = json::object();
  for (int p = 0; p < kNumStepPhases; ++p) j[std::string(StepPhaseName(static_cast<StepPhase>(p)))] = ns[p];
  return j;
}

}  // namespace

std::vector<int64_t> TimelineSteps(const std::vector<RankSummary>& ranks) {
  if (ranks.empty()) return {};
  std::set<int64_t> common;
  for (const StepSummary& s : ranks.front().steps) common.insert(s.number);
  for (size_t r = 1; r < ranks.size(); ++r) {
    std::set<int64_t> here;
    for (const StepSummary& s : ranks[r].steps) {
      if (common.count(s.number)) here.insert(s.number);
    }
    common.swap(here);
  }
  return {common.begin(), common.end()};
}

json TimelineJson(const std::vector<RankSummary>& ranks, const ClusterDiagnosis& d, std::optional<int64_t> step,
                  const ViewLimits& limits) {
  const std::vector<int64_t> steps = TimelineSteps(ranks);
  json out = {{"schema", kViewsSchema}, {"view", "timeline"}, {"steps", steps}};
  if (steps.empty()) {
    out["step"] = nullptr;
    out["error"] = "no profiler step is present on every rank: the timeline needs steps";
    return out;
  }
  const int64_t number = step.value_or(MiddleStep(steps));
  if (!std::binary_search(steps.begin(), steps.end(), number)) {
    out["step"] = nullptr;
    out["error"] = fmt::format("step {} is not present on every rank", number);
    return out;
  }
  out["step"] = number;
  auto offset = [&](size_t r) { return r < d.clock.offset_of.size() ? d.clock.offset_of[r] : 0; };

  int64_t origin = INT64_MAX;
  for (size_t r = 0; r < ranks.size(); ++r) origin = std::min(origin, FindStep(ranks[r], number)->start_ns - offset(r));

  // Matched instances of this step: (rank index, instance index) -> matched index.
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> matched_of;
  std::map<uint32_t, const InstanceArrival*> arrival_of;
  for (const InstanceArrival& a : d.arrival.instances) arrival_of[a.matched] = &a;
  std::vector<uint32_t> in_step;
  for (uint32_t m = 0; m < d.matching.instances.size(); ++m) {
    const MatchedCollective& c = d.matching.instances[m];
    bool here = false;
    for (const Participant& p : c.participants) {
      if (ranks[p.rank].collectives[p.instance].step == number) here = true;
    }
    if (!here) continue;
    in_step.push_back(m);
    for (const Participant& p : c.participants) matched_of[{p.rank, p.instance}] = m;
  }
  std::map<uint32_t, uint32_t> id_of;  // matched index -> id in this document
  json collectives = json::array();
  std::vector<uint64_t> last_votes(ranks.size(), 0);
  for (uint32_t m : in_step) {
    const MatchedCollective& c = d.matching.instances[m];
    id_of[m] = static_cast<uint32_t>(collectives.size());
    json row = {{"op", c.op}, {"group", c.group}, {"seq", c.seq >= 0 ? json(c.seq) : json(nullptr)},
                {"participants", c.participants.size()}, {"complete", c.complete}};
    if (auto it = arrival_of.find(m); it != arrival_of.end()) {
      const InstanceArrival& a = *it->second;
      row["first_arrival_ns"] = a.first_ns - origin;
      row["median_arrival_ns"] = a.median_ns - origin;
      row["last_arrival_ns"] = a.last_ns - origin;
      row["skew_ns"] = a.skew_ns;
      row["first_rank"] = d.rank_numbers[a.first_rank];
      row["last_rank"] = a.last_rank == kNoRank ? json(nullptr) : json(d.rank_numbers[a.last_rank]);
      row["last_gap_ns"] = a.last_gap_ns;
      if (a.last_rank != kNoRank) ++last_votes[a.last_rank];
    } else {
      row["last_rank"] = nullptr;
    }
    collectives.push_back(std::move(row));
  }

  std::vector<std::string> ops;
  std::map<std::string, uint32_t> op_index;
  auto op_id = [&](const std::string& op) {
    auto [it, added] = op_index.emplace(op, static_cast<uint32_t>(ops.size()));
    if (added) ops.push_back(op);
    return it->second;
  };
  const size_t per_rank_cap = std::max<size_t>(1, limits.max_timeline_spans / std::max<size_t>(1, ranks.size()));
  uint64_t omitted = 0;
  json lanes = json::array();
  for (uint32_t r = 0; r < ranks.size(); ++r) {
    const RankSummary& s = ranks[r];
    const StepSummary& st = *FindStep(s, number);
    const int64_t shift = offset(r) + origin;
    json spans = json::array();
    for (uint32_t i = 0; i < s.collectives.size(); ++i) {
      const CollectiveInstance& c = s.collectives[i];
      if (c.step != number) continue;
      if (spans.size() >= per_rank_cap) {
        ++omitted;
        continue;
      }
      auto m = matched_of.find({r, i});
      spans.push_back({c.start_ns - shift, c.end_ns - shift, op_id(s.collective_types[c.type].op),
                       m == matched_of.end() ? json(nullptr) : json(id_of[m->second])});
    }
    json lane = {{"rank", d.rank_numbers.empty() ? s.rank.rank : d.rank_numbers[r]},
                 {"host", r < d.hosts.size() ? d.hosts[r].host : s.host_name},
                 {"start_ns", st.start_ns - shift},
                 {"end_ns", st.end_ns - shift},
                 {"gpu_start_ns", st.gpu_start_ns >= 0 ? json(st.gpu_start_ns - shift) : json(nullptr)},
                 {"gpu_end_ns", st.gpu_end_ns >= 0 ? json(st.gpu_end_ns - shift) : json(nullptr)},
                 {"cpu_phases_ns", PhasesJson(st.cpu_phase_ns)},
                 {"comm_exposed_ns", st.comm_exposed_ns},
                 {"last_votes", last_votes[r]},
                 {"spans", std::move(spans)}};
    lanes.push_back(std::move(lane));
  }
  out["origin_unix_ns"] = origin;
  out["reference_host"] = d.clock.domains.empty() ? json(nullptr) : json(d.clock.domains.front().host);
  out["ops"] = ops;
  out["span_columns"] = {"start_ns", "end_ns", "op", "collective"};
  out["ranks"] = std::move(lanes);
  out["collectives"] = std::move(collectives);
  out["omitted_spans"] = omitted;
  return out;
}

}  // namespace rankscope

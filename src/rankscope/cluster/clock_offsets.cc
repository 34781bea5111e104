#include "rankscope/cluster/clock_offsets.h"

#include <algorithm>
#include <map>

#include "rankscope/cluster/robust_rule.h"

namespace rankscope {
namespace {

constexpr int kMaxIterations = 50;

// Domains in order of their lowest rank, so the reference (the lowest rank's host) comes first.
void BuildDomains(const std::vector<RankSummary>& ranks, const std::vector<RankHost>& hosts, ClockEstimate* out) {
  std::vector<uint32_t> order(ranks.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return ranks[a].rank.rank < ranks[b].rank.rank; });
  std::map<std::string, uint32_t> by_host;
  out->domain_of.assign(ranks.size(), 0);
  for (uint32_t r : order) {
    auto [it, inserted] = by_host.try_emplace(hosts[r].host, static_cast<uint32_t>(out->domains.size()));
    if (inserted) out->domains.push_back({hosts[r].host, {}, 0, false, 0, 0});
    out->domains[it->second].ranks.push_back(r);
    out->domain_of[r] = it->second;
  }
}

// Instances whose participants span two or more domains carry information about offsets.
std::vector<const MatchedCollective*> CrossDomainInstances(const CollectiveMatching& m, const ClockEstimate& e) {
  std::vector<const MatchedCollective*> out;
  for (const MatchedCollective& c : m.instances) {
    const uint32_t d0 = e.domain_of[c.participants.front().rank];
    for (const Participant& p : c.participants) {
      if (e.domain_of[p.rank] != d0) {
        out.push_back(&c);
        break;
      }
    }
  }
  return out;
}

// Domains reachable from the reference through shared instances.
std::vector<bool> LinkedToReference(const std::vector<const MatchedCollective*>& instances, const ClockEstimate& e) {
  std::vector<bool> linked(e.domains.size(), false);
  if (linked.empty()) return linked;
  linked[0] = true;
  for (bool changed = true; changed;) {
    changed = false;
    for (const MatchedCollective* c : instances) {
      bool any = false;
      for (const Participant& p : c->participants) any = any || linked[e.domain_of[p.rank]];
      if (!any) continue;
      for (const Participant& p : c->participants) {
        if (!linked[e.domain_of[p.rank]]) linked[e.domain_of[p.rank]] = changed = true;
      }
    }
  }
  return linked;
}

class Solver {
 public:
  Solver(const std::vector<RankSummary>& ranks, const std::vector<const MatchedCollective*>& instances, ClockEstimate* e)
      : ranks_(ranks), instances_(instances), e_(e), offset_(e->domains.size(), 0), t_(instances.size(), 0) {}

  void Run() {
    for (e_->iterations = 1; e_->iterations <= kMaxIterations; ++e_->iterations) {
      UpdateInstanceTimes();
      if (!UpdateOffsets()) break;
    }
    UpdateInstanceTimes();
    Spread();
  }

  const std::vector<int64_t>& offsets() const { return offset_; }

 private:
  int64_t End(const Participant& p) const { return ranks_[p.rank].collectives[p.instance].end_ns; }

  void UpdateInstanceTimes() {
    std::vector<int64_t> v;
    for (size_t i = 0; i < instances_.size(); ++i) {
      v.clear();
      for (const Participant& p : instances_[i]->participants) v.push_back(End(p) - offset_[e_->domain_of[p.rank]]);
      t_[i] = ExactMedian(v);
    }
  }

  // Returns whether any offset moved.
  bool UpdateOffsets() {
    std::vector<std::vector<int64_t>> samples(offset_.size());
    for (size_t i = 0; i < instances_.size(); ++i) {
      for (const Participant& p : instances_[i]->participants) samples[e_->domain_of[p.rank]].push_back(End(p) - t_[i]);
    }
    std::vector<int64_t> next(offset_.size(), 0);
    for (size_t d = 0; d < next.size(); ++d) next[d] = ExactMedian(samples[d]);
    const int64_t reference = next.empty() ? 0 : next[0];
    for (int64_t& o : next) o -= reference;
    const bool moved = next != offset_;
    offset_ = std::move(next);
    return moved;
  }

  void Spread() {
    std::vector<std::vector<int64_t>> residuals(offset_.size());
    for (size_t i = 0; i < instances_.size(); ++i) {
      for (const Participant& p : instances_[i]->participants) {
        const uint32_t d = e_->domain_of[p.rank];
        residuals[d].push_back(std::abs(End(p) - offset_[d] - t_[i]));
      }
    }
    for (size_t d = 0; d < residuals.size(); ++d) {
      e_->domains[d].samples = residuals[d].size();
      e_->domains[d].spread_ns = ExactMedian(residuals[d]);
    }
  }

  const std::vector<RankSummary>& ranks_;
  const std::vector<const MatchedCollective*>& instances_;
  ClockEstimate* e_;
  std::vector<int64_t> offset_;  // per domain
  std::vector<int64_t> t_;       // per instance: its end on the reference clock
};

}  // namespace

ClockEstimate EstimateClockOffsets(const std::vector<RankSummary>& ranks, const std::vector<RankHost>& hosts,
                                   const CollectiveMatching& matching) {
  ClockEstimate e;
  BuildDomains(ranks, hosts, &e);
  e.offset_of.assign(ranks.size(), 0);
  if (e.domains.empty()) return e;
  e.domains[0].estimated = true;  // the reference, by definition
  if (e.domains.size() == 1) return e;
  const std::vector<const MatchedCollective*> instances = CrossDomainInstances(matching, e);
  const std::vector<bool> linked = LinkedToReference(instances, e);
  // Only the reference's component is solved: elsewhere there is nothing to tie the clocks to.
  std::vector<const MatchedCollective*> usable;
  for (const MatchedCollective* c : instances) {
    if (linked[e.domain_of[c->participants.front().rank]]) usable.push_back(c);
  }
  if (usable.empty()) return e;
  Solver solver(ranks, usable, &e);
  solver.Run();
  for (size_t d = 0; d < e.domains.size(); ++d) {
    e.domains[d].estimated = linked[d];
    e.domains[d].offset_ns = linked[d] ? solver.offsets()[d] : 0;
  }
  for (uint32_t r = 0; r < ranks.size(); ++r) e.offset_of[r] = e.domains[e.domain_of[r]].offset_ns;
  return e;
}

}  // namespace rankscope

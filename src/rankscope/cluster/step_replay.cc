#include "rankscope/cluster/step_replay.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <tuple>
#include <unordered_map>

#include "rankscope/cluster/communication_work.h"
#include "rankscope/cluster/robust_rule.h"

namespace rankscope {
namespace {

constexpr double kNone = std::numeric_limits<double>::quiet_NaN();

// Medians of `values` with one element left out, each in O(1) after one sort.
class LeaveOneOutMedian {
 public:
  explicit LeaveOneOutMedian(std::vector<double> values) : sorted_(std::move(values)) {
    std::sort(sorted_.begin(), sorted_.end());
  }
  // The median of the values without one occurrence of `own`; NaN when nothing is left.
  double Without(double own) const {
    const size_t n = sorted_.size();
    if (n < 2) return kNone;
    const size_t i = static_cast<size_t>(std::lower_bound(sorted_.begin(), sorted_.end(), own) - sorted_.begin());
    auto at = [&](size_t j) { return sorted_[j < i ? j : j + 1]; };  // j-th of the n - 1 left
    const size_t m = n - 1;
    return m % 2 == 1 ? at(m / 2) : 0.5 * (at(m / 2 - 1) + at(m / 2));
  }

 private:
  std::vector<double> sorted_;
};

// t - offset - origin in int64 arithmetic (absolute ns do not survive a double); a summary with
// times at the ends of int64 saturates instead of overflowing.
int64_t Relative(int64_t t, int64_t offset, int64_t origin) {
  int64_t a = 0, b = 0;
  if (__builtin_sub_overflow(t, offset, &a)) return offset > 0 ? INT64_MIN : INT64_MAX;
  if (__builtin_sub_overflow(a, origin, &b)) return origin > 0 ? INT64_MIN : INT64_MAX;
  return b;
}

// A segment made like its peers' median, only when that is faster. A negative segment is an
// overlap, not work (a collective posted before the previous one ended: DDP's bucket all-reduces
// run asynchronously beside the backward), and no segment is made negative by a what-if: a
// peers' median of overlaps taken as "faster" replayed a rank's steps to nothing (a gloo DDP job
// with gradient accumulation whose rank 0 checkpoints every third step: -0.3 ms per step).
double LikePeer(double own, double peer) {
  if (std::isnan(peer) || own <= 0) return own;
  return std::min(own, std::max(peer, 0.0));
}

double Mean(const std::vector<double>& v) {
  if (v.empty()) return 0;
  double sum = 0;
  for (double x : v) sum += x;
  return sum / static_cast<double>(v.size());
}

struct Participation {
  int64_t start_ns;  // aligned, relative to the origin
  int64_t end_ns;
  uint32_t matched;  // index into CollectiveMatching::instances
  uint32_t instance; // index into the rank's collectives
  int32_t part;      // which part of the matched instance (SplitByLayout)
};

// A rank's participations in a step in the order its chain takes them: start order, except that
// collectives the rank ran at the same time (overlapping spans: gloo runs a step's DDP buckets on
// two worker threads) take the order of their members' median start. Their own start order is a
// race between those threads: a rank whose second bucket's span began 11 us before its first
// contradicted its peers' order, and the replay found a cycle where there was none.
template <typename KeyOf>
void OrderParticipations(const std::unordered_map<uint64_t, double>& median_start, KeyOf key_of,
                         std::vector<Participation>* in_step) {
  std::sort(in_step->begin(), in_step->end(), [](const Participation& a, const Participation& b) {
    return std::tie(a.start_ns, a.end_ns, a.matched) < std::tie(b.start_ns, b.end_ns, b.matched);
  });
  auto median_of = [&](const Participation& p) {
    const auto it = median_start.find(key_of(p.matched, p.part));
    return it != median_start.end() ? it->second : static_cast<double>(p.start_ns);
  };
  size_t first = 0;
  int64_t reach = INT64_MIN;  // the latest end of the spans since `first`
  for (size_t i = 0; i <= in_step->size(); ++i) {
    if (i == in_step->size() || (i > first && (*in_step)[i].start_ns >= reach)) {
      std::stable_sort(in_step->begin() + static_cast<std::ptrdiff_t>(first),
                       in_step->begin() + static_cast<std::ptrdiff_t>(i),
                       [&](const Participation& a, const Participation& b) { return median_of(a) < median_of(b); });
      first = i;
    }
    if (i < in_step->size()) reach = i == first ? (*in_step)[i].end_ns : std::max(reach, (*in_step)[i].end_ns);
  }
}

// A span recorded around the wait starts a little after the op that posted the transfer
// (gloo:recv after c10d::recv_, 40-60 us on a CPU), so a member that left just before the last
// recorded arrival still waited for it, the more likely the longer it was inside.
double WaitTolerance(double span_ns) { return 0.05 * std::max(0.0, span_ns); }

// A collective of a process group the traces do not name (gloo's spans carry no group) is
// matched across every rank that runs it in that order; the layout's groups tell which ranks
// really took part together: a transfer stays within its pipeline group, anything else within
// its data-parallel group. -1: no split.
class SplitByLayout {
 public:
  SplitByLayout(const JobLayout& layout, const std::vector<int64_t>& rank_numbers) {
    pipeline_.assign(rank_numbers.size(), -1);
    data_.assign(rank_numbers.size(), -1);
    for (size_t g = 0; g < layout.groups.size(); ++g) {
      const LayoutGroup& lg = layout.groups[g];
      std::vector<int32_t>* of = lg.role == GroupRole::kPipeline ? &pipeline_ : lg.role == GroupRole::kData ? &data_ : nullptr;
      if (of == nullptr) continue;
      for (size_t r = 0; r < rank_numbers.size(); ++r) {
        if (std::binary_search(lg.ranks.begin(), lg.ranks.end(), rank_numbers[r])) (*of)[r] = static_cast<int32_t>(g);
      }
    }
  }
  int32_t PartOf(uint32_t rank, std::string_view op, bool whole) const {
    if (whole) return -1;
    return IsPointToPointOp(op) ? pipeline_[rank] : data_[rank];
  }

 private:
  std::vector<int32_t> pipeline_, data_;  // per rank index: its layout group, or -1
};

}  // namespace

StepGraph::StepGraph(const std::vector<RankSummary>& ranks, const CollectiveMatching& matching,
                     const ClockEstimate& clock, const JobLayout& layout) {
  for (const RankSummary& r : ranks) rank_numbers_.push_back(r.rank.rank);
  stage_ = layout.stage;
  stage_.resize(ranks.size(), 0);
  Build(ranks, matching, clock, layout);
  if (!built()) return;
  ComputePeerMedians();
  ClassifySegments();
  base_ = Replay(MeasuredSegments(), NoTransferCaps());
  if (!base_.complete) {
    not_built_ = "the ranks take part in their collectives in orders that contradict each other (a cycle)";
  }
}

void StepGraph::Build(const std::vector<RankSummary>& ranks, const CollectiveMatching& matching,
                      const ClockEstimate& clock, const JobLayout& layout) {
  if (ranks.size() < 2) {
    not_built_ = "fewer than two ranks";
    return;
  }
  // The steps every rank has.
  std::vector<std::map<int64_t, const StepSummary*>> by_number(ranks.size());
  for (size_t r = 0; r < ranks.size(); ++r) {
    for (const StepSummary& s : ranks[r].steps) by_number[r][s.number] = &s;
  }
  std::vector<int64_t> numbers;
  for (const auto& [number, step] : by_number.front()) {
    if (std::all_of(by_number.begin(), by_number.end(), [n = number](const auto& m) { return m.count(n) > 0; })) {
      numbers.push_back(number);
    }
  }
  if (numbers.empty()) {
    not_built_ = "the ranks share no profiled step";
    return;
  }
  steps_ = numbers.size();
  auto offset = [&](size_t r) { return r < clock.offset_of.size() ? clock.offset_of[r] : 0; };
  int64_t origin = std::numeric_limits<int64_t>::max();
  for (size_t r = 0; r < ranks.size(); ++r) {
    origin = std::min(origin, Relative(by_number[r].at(numbers.front())->start_ns, offset(r), 0));
  }
  std::map<int64_t, size_t> step_index;
  for (size_t i = 0; i < numbers.size(); ++i) step_index[numbers[i]] = i;

  // Participations per rank and step, from the matched instances with two or more members.
  std::vector<std::vector<std::vector<Participation>>> parts(ranks.size(),
                                                             std::vector<std::vector<Participation>>(steps_));
  // Per (matched instance, part): members, senders and receivers.
  struct PartCount {
    uint32_t members = 0, sends = 0, recvs = 0;
  };
  auto key_of = [](uint32_t m, int32_t part) { return (uint64_t{m} << 32) | static_cast<uint32_t>(part + 1); };
  std::unordered_map<uint64_t, PartCount> part_count;
  part_count.reserve(matching.instances.size());
  const SplitByLayout split(layout, rank_numbers_);
  for (uint32_t m = 0; m < matching.instances.size(); ++m) {
    const MatchedCollective& mc = matching.instances[m];
    if (mc.participants.size() < 2) continue;
    // A named group, or a transfer paired by its two ends, is one instance already.
    const bool whole = !matching.groups[mc.group].ranks.empty() || mc.pair;
    for (const Participant& p : mc.participants) {
      const RankSummary& rs = ranks[p.rank];
      const CollectiveInstance& c = rs.collectives[p.instance];
      // A view of the type's own string (a ternary with "" made a temporary std::string: dangling).
      const std::string_view op =
          c.type < rs.collective_types.size() ? std::string_view(rs.collective_types[c.type].op) : std::string_view();
      const int64_t start = Relative(c.start_ns, offset(p.rank), origin);
      const int64_t end = Relative(c.end_ns, offset(p.rank), origin);
      int64_t s = -1;
      if (auto it = step_index.find(c.step); c.step >= 0 && it != step_index.end()) {
        s = static_cast<int64_t>(it->second);
      } else if (c.step < 0) {
        for (size_t i = 0; i < steps_; ++i) {
          const StepSummary& st = *by_number[p.rank].at(numbers[i]);
          if (c.start_ns >= st.start_ns && c.start_ns < st.end_ns) s = static_cast<int64_t>(i);
        }
      }
      if (s < 0) continue;
      const int32_t part = split.PartOf(p.rank, op, whole);
      parts[p.rank][static_cast<size_t>(s)].push_back({start, end, m, p.instance, part});
      PartCount& n = part_count[key_of(m, part)];
      ++n.members;
      n.sends += op == "send" ? 1 : 0;
      n.recvs += op == "recv" ? 1 : 0;
    }
  }
  // Barriers: parts with two or more chained members. A transfer whose part is not one sender
  // and one receiver cannot be paired (a pipeline of more than two stages whose traces name no
  // peer): it stays inside the compute segments, and the replay says how many.
  // In key order, so barrier numbers do not depend on the hash table's.
  std::vector<std::pair<uint64_t, PartCount>> counted(part_count.begin(), part_count.end());
  std::sort(counted.begin(), counted.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::unordered_map<uint64_t, int32_t> barrier_of;
  barrier_of.reserve(counted.size());
  for (const auto& [key, n] : counted) {
    if (n.members < 2) continue;
    if (n.sends + n.recvs > 0 && (n.sends != 1 || n.recvs != 1 || n.members != 2)) {
      ++unpaired_;
      continue;
    }
    barrier_of[key] = static_cast<int32_t>(barriers_.size());
    barriers_.push_back({});
    barriers_.back().op = matching.instances[key >> 32].op;
  }
  if (barriers_.empty() && unpaired_ > 0) {
    not_built_ = std::to_string(unpaired_) +
                 " point-to-point transfers name no peer and the process groups do not pair them (a pipeline of more "
                 "than two stages traced with gloo), and no other collective links the ranks";
    return;
  }
  if (barriers_.empty()) {
    not_built_ = "no collective links the ranks within their common steps";
    return;
  }
  // Where each part's members started, at the median: the order of collectives a rank ran at once.
  std::unordered_map<uint64_t, double> median_start;
  {
    std::unordered_map<uint64_t, std::vector<double>> starts;
    for (const auto& of_rank : parts) {
      for (const auto& in_step : of_rank) {
        for (const Participation& p : in_step) {
          if (barrier_of.count(key_of(p.matched, p.part))) {
            starts[key_of(p.matched, p.part)].push_back(static_cast<double>(p.start_ns));
          }
        }
      }
    }
    for (auto& [key, v] : starts) median_start[key] = ComputeRobustStats(std::move(v)).median;
  }
  // The member's own op, interned (a point-to-point instance is a send on one side, a receive
  // on the other).
  std::map<std::string, uint16_t> op_ids;
  auto OpId = [&](const RankSummary& rs, const Participation& p) -> uint16_t {
    const CollectiveInstance& c = rs.collectives[p.instance];
    const std::string op = c.type < rs.collective_types.size() ? rs.collective_types[c.type].op : "";
    const auto [it, inserted] = op_ids.try_emplace(op, static_cast<uint16_t>(std::min<size_t>(ops_.size(), 65535)));
    if (inserted && ops_.size() < 65535) ops_.push_back(op);
    return it->second;
  };
  // Chains.
  chains_.resize(ranks.size());
  std::vector<double> arrival_max(barriers_.size(), -std::numeric_limits<double>::infinity());
  struct MemberTimes {
    double arrive, exit;
  };
  std::vector<std::vector<MemberTimes>> times(barriers_.size());
  for (size_t r = 0; r < ranks.size(); ++r) {
    Chain& ch = chains_[r];
    double previous_exit = 0;
    for (size_t s = 0; s < steps_; ++s) {
      const StepSummary& st = *by_number[r].at(numbers[s]);
      const double start = static_cast<double>(Relative(st.start_ns, offset(r), origin));
      const double end = static_cast<double>(Relative(st.end_ns, offset(r), origin));
      ch.measured_start_ns.push_back(start);
      ch.measured_end_ns.push_back(end);
      ch.barrier.push_back(kStepStart);
      ch.member.push_back(0);
      ch.segment_ns.push_back(start - previous_exit);
      previous_exit = start;
      std::vector<Participation>& in_step = parts[r][s];
      OrderParticipations(median_start, key_of, &in_step);
      for (const Participation& p : in_step) {
        const auto it = barrier_of.find(key_of(p.matched, p.part));
        if (it == barrier_of.end()) continue;
        const int32_t b = it->second;
        Barrier& bar = barriers_[static_cast<size_t>(b)];
        const double arrive = static_cast<double>(p.start_ns), exit = static_cast<double>(p.end_ns);
        ch.barrier.push_back(b);
        ch.member.push_back(static_cast<uint32_t>(bar.members.size()));
        ch.segment_ns.push_back(arrive - previous_exit);
        bar.members.push_back({static_cast<uint32_t>(r), static_cast<uint32_t>(ch.barrier.size() - 1), true,
                               OpId(ranks[r], p), exit - arrive});
        times[static_cast<size_t>(b)].push_back({arrive, exit});
        arrival_max[static_cast<size_t>(b)] = std::max(arrival_max[static_cast<size_t>(b)], arrive);
        previous_exit = exit;
      }
      ch.barrier.push_back(kStepEnd);
      ch.member.push_back(0);
      ch.segment_ns.push_back(end - previous_exit);
      previous_exit = end;
    }
  }
  // Who waited for the last arrival, then which ops do not block (MarkAsynchronousOps).
  std::vector<size_t> last_of(barriers_.size(), 0);
  for (size_t b = 0; b < barriers_.size(); ++b) {
    Barrier& bar = barriers_[b];
    size_t& last = last_of[b];
    for (size_t i = 0; i < bar.members.size(); ++i) {
      if (times[b][i].arrive > times[b][last].arrive) last = i;
    }
    for (size_t i = 0; i < bar.members.size(); ++i) {
      const double span = times[b][i].exit - times[b][i].arrive;
      bar.members[i].waits = times[b][i].exit >= arrival_max[b] - WaitTolerance(span);
    }
  }
  MarkAsynchronousOps(last_of);
  // Causality: a receive cannot end before its sender has started. Where the spans say it did,
  // they do not bound the transfer (or the pairing is wrong), and no replay of them is evidence.
  for (size_t b = 0; b < barriers_.size(); ++b) {
    const Barrier& bar = barriers_[b];
    for (size_t i = 0; i < bar.members.size(); ++i) {
      if (ops_[bar.members[i].op] != "recv") continue;
      for (size_t j = 0; j < bar.members.size(); ++j) {
        if (j != i && times[b][i].exit + WaitTolerance(times[b][i].exit - times[b][i].arrive) < times[b][j].arrive) {
          ++acausal_;
        }
      }
    }
  }
  // Each waiting member's own time after the collective could complete (the last waiting
  // arrival, and what the asynchronous members sent being there), and the instance's transfer:
  // the median of those.
  for (size_t b = 0; b < barriers_.size(); ++b) {
    Barrier& bar = barriers_[b];
    double ready = -std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < bar.members.size(); ++i) {
      const Member& m = bar.members[i];
      ready = std::max(ready, m.waits ? times[b][i].arrive : times[b][i].arrive + m.span_ns);
    }
    std::vector<double> after;
    for (size_t i = 0; i < bar.members.size(); ++i) {
      if (!bar.members[i].waits) continue;
      bar.members[i].after_ns = std::max(0.0, times[b][i].exit - ready);
      after.push_back(bar.members[i].after_ns);
    }
    bar.transfer_ns = after.empty() ? 0 : ComputeRobustStats(std::move(after)).median;
  }
}

// The last arriver of an instance trivially "waited" for everyone. Whether its op blocks it is
// told by the instances where it came early: an op (per rank) that let the rank go before the
// others arrived in most of those is asynchronous for it everywhere (gloo's send; a NCCL send
// waits for its receiver and stays synchronous); a rank that was never early with the op takes
// the other ranks' evidence. Otherwise a what-if in which the sender comes first would hold it
// until its receiver posts.
void StepGraph::MarkAsynchronousOps(const std::vector<size_t>& last_of) {
  using Evidence = std::pair<uint64_t, uint64_t>;  // (left early, waited)
  std::map<std::pair<uint32_t, uint16_t>, Evidence> by_rank;
  std::map<uint16_t, Evidence> by_op;
  for (size_t b = 0; b < barriers_.size(); ++b) {
    for (size_t i = 0; i < barriers_[b].members.size(); ++i) {
      if (i == last_of[b]) continue;
      const Member& m = barriers_[b].members[i];
      Evidence& own = by_rank[{m.rank, m.op}];
      Evidence& all = by_op[m.op];
      ++(m.waits ? own.second : own.first);
      ++(m.waits ? all.second : all.first);
    }
  }
  for (Barrier& bar : barriers_) {
    for (Member& m : bar.members) {
      const auto own = by_rank.find({m.rank, m.op});
      const Evidence e = own != by_rank.end() ? own->second : by_op[m.op];
      if (e.first > e.second) m.waits = false;
    }
  }
}

void StepGraph::ComputePeerMedians() {
  // Segments: peers are the ranks of the same stage whose chain has the same shape in the step.
  using Shape = std::tuple<int64_t /*stage*/, size_t /*step*/, size_t /*links*/>;
  std::map<Shape, std::vector<uint32_t>> groups;
  std::vector<std::vector<size_t>> first(chains_.size());  // [rank][step]: first link of the step
  for (uint32_t r = 0; r < chains_.size(); ++r) {
    const Chain& ch = chains_[r];
    for (size_t i = 0; i < ch.barrier.size(); ++i) {
      if (ch.barrier[i] == kStepStart) first[r].push_back(i);
    }
    for (size_t s = 0; s < steps_; ++s) {
      const size_t end = s + 1 < steps_ ? first[r][s + 1] : ch.barrier.size();
      groups[{stage_[r], s, end - first[r][s]}].push_back(r);
    }
  }
  for (Chain& ch : chains_) ch.peer_ns.assign(ch.segment_ns.size(), kNone);
  for (const auto& [shape, members] : groups) {
    if (members.size() < 2) continue;
    const auto [stage, s, links] = shape;
    // The first link of the first step is where the rank's recording starts, not work.
    for (size_t k = s == 0 ? 1 : 0; k < links; ++k) {
      std::vector<double> values;
      for (uint32_t r : members) values.push_back(chains_[r].segment_ns[first[r][s] + k]);
      const LeaveOneOutMedian median(values);
      for (uint32_t r : members) {
        const size_t i = first[r][s] + k;
        chains_[r].peer_ns[i] = median.Without(chains_[r].segment_ns[i]);
      }
    }
  }
  // Transfers: the instances of the same op and group size.
  std::map<std::pair<std::string, size_t>, std::vector<uint32_t>> by_op;
  for (uint32_t b = 0; b < barriers_.size(); ++b) by_op[{barriers_[b].op, barriers_[b].members.size()}].push_back(b);
  for (const auto& [key, list] : by_op) {
    std::vector<double> values;
    for (uint32_t b : list) values.push_back(barriers_[b].transfer_ns);
    const LeaveOneOutMedian median(values);
    for (uint32_t b : list) {
      const double m = median.Without(barriers_[b].transfer_ns);
      barriers_[b].peer_transfer_ns = std::isnan(m) ? -1 : m;
    }
  }
}

StepGraph::Segments StepGraph::MeasuredSegments() const {
  Segments out;
  for (const Chain& ch : chains_) out.push_back(ch.segment_ns);
  return out;
}

// No what-if transfer: every waiting member keeps its own time after completion.
std::vector<double> StepGraph::NoTransferCaps() const {
  std::vector<double> out;
  out.assign(barriers_.size(), std::numeric_limits<double>::infinity());
  return out;
}

// Event-driven: each rank runs along its chain until it must wait at a barrier whose members
// have not all arrived; the last arrival releases the waiting members.
StepGraph::Replayed StepGraph::Replay(const Segments& segments, const std::vector<double>& transfers) const {
  const size_t n = chains_.size();
  std::vector<size_t> cursor(n, 0);
  std::vector<double> now(n, 0);
  std::vector<int32_t> blocked_at(n, -1);
  std::vector<uint32_t> arrived(barriers_.size(), 0);
  std::vector<double> last_arrival(barriers_.size(), -std::numeric_limits<double>::infinity());
  std::vector<double> sent_by(barriers_.size(), -std::numeric_limits<double>::infinity());
  std::vector<std::vector<double>> start(n, std::vector<double>(steps_, 0)), end(n, std::vector<double>(steps_, 0));
  std::vector<uint32_t> runnable;
  for (uint32_t r = 0; r < n; ++r) runnable.push_back(r);
  std::vector<size_t> step_of(n, 0);

  while (!runnable.empty()) {
    const uint32_t r = runnable.back();
    runnable.pop_back();
    const Chain& ch = chains_[r];
    while (cursor[r] < ch.barrier.size()) {
      const size_t i = cursor[r]++;
      double t = now[r] + segments[r][i];
      const int32_t b = ch.barrier[i];
      if (b == kStepStart) {
        start[r][step_of[r]] = t;
      } else if (b == kStepEnd) {
        end[r][step_of[r]++] = t;
      } else {
        const Barrier& bar = barriers_[static_cast<size_t>(b)];
        const Member& me = bar.members[ch.member[i]];
        double& last = last_arrival[static_cast<size_t>(b)];
        double& sent = sent_by[static_cast<size_t>(b)];
        if (me.waits) last = std::max(last, t);
        else sent = std::max(sent, t + me.span_ns);
        const bool complete = ++arrived[static_cast<size_t>(b)] == bar.members.size();
        // A waiting member leaves its own time after the collective could complete, no later
        // than the what-if's transfer for the instance (`transfers`: +inf for the measured one).
        const double ready = std::max(last, sent), cap = transfers[static_cast<size_t>(b)];
        if (complete) {
          for (const Member& other : bar.members) {
            if (blocked_at[other.rank] != b) continue;
            blocked_at[other.rank] = -1;
            now[other.rank] = ready + std::min(other.after_ns, cap);
            runnable.push_back(other.rank);
          }
        }
        if (!me.waits) {
          t += me.span_ns;
        } else if (complete) {
          t = ready + std::min(me.after_ns, cap);
        } else {
          blocked_at[r] = b;
          now[r] = t;
          break;
        }
      }
      now[r] = t;
    }
  }
  Replayed out;
  for (uint32_t r = 0; r < n; ++r) {
    if (cursor[r] < chains_[r].barrier.size() || blocked_at[r] >= 0) return out;
  }
  out.complete = true;
  for (size_t s = 0; s < steps_; ++s) {
    double sum = 0;
    for (size_t r = 0; r < n; ++r) sum += end[r][s] - start[r][s];
    out.step_ns.push_back(sum / static_cast<double>(n));
  }
  out.mean_step_ns = Mean(out.step_ns);
  return out;
}

ReplayWhatIf StepGraph::WhatIf(std::string what, const Segments& segments, const std::vector<double>& transfers) const {
  ReplayWhatIf w;
  w.what = std::move(what);
  w.step_ns = base_.mean_step_ns;
  const Replayed r = Replay(segments, transfers);
  w.estimated_step_ns = r.complete ? std::min(r.mean_step_ns, base_.mean_step_ns) : base_.mean_step_ns;
  w.saving_ns = w.step_ns - w.estimated_step_ns;
  return w;
}

void StepGraph::LikePeers(const std::vector<uint32_t>& fixed, Segments* segments) const {
  for (uint32_t r : fixed) {
    if (r >= chains_.size()) continue;
    const Chain& ch = chains_[r];
    for (size_t i = 0; i < ch.peer_ns.size(); ++i) {
      (*segments)[r][i] = LikePeer((*segments)[r][i], ch.peer_ns[i]);
    }
  }
}

ReplayWhatIf StepGraph::RanksLikePeers(const std::vector<uint32_t>& fixed) const {
  if (!built()) return {};
  Segments segments = MeasuredSegments();
  LikePeers(fixed, &segments);
  ReplayWhatIf w = WhatIf("rank", segments, NoTransferCaps());
  if (fixed.size() == 1 && fixed.front() < rank_numbers_.size()) w.rank = rank_numbers_[fixed.front()];
  return w;
}

ReplayWhatIf StepGraph::RanksWithoutExcess(const std::vector<uint32_t>& fixed,
                                           const std::vector<double>& excess_ns) const {
  if (!built() || fixed.size() != excess_ns.size()) return {};
  Segments segments = MeasuredSegments();
  for (size_t k = 0; k < fixed.size(); ++k) {
    const uint32_t r = fixed[k];
    if (r >= chains_.size() || excess_ns[k] <= 0) continue;
    const Chain& ch = chains_[r];
    std::vector<double>& own = segments[r];
    std::vector<double> above(ch.peer_ns.size());  // per segment: the rank's time above its peers'
    double over = 0;
    for (size_t i = 0; i < above.size(); ++i) over += above[i] = own[i] - LikePeer(own[i], ch.peer_ns[i]);
    if (over <= 0) continue;
    const double share = std::min(1.0, excess_ns[k] * static_cast<double>(steps_) / over);
    for (size_t i = 0; i < above.size(); ++i) own[i] -= share * above[i];
  }
  ReplayWhatIf w = WhatIf("rank", segments, NoTransferCaps());
  if (fixed.size() == 1 && fixed.front() < rank_numbers_.size()) w.rank = rank_numbers_[fixed.front()];
  return w;
}

// The stage of the other end of a point-to-point `op` ("send" or "recv") at `link` of rank `r`'s
// chain; -1 when the link is not one.
int64_t StepGraph::PeerStage(uint32_t r, size_t link, std::string_view op) const {
  const Chain& ch = chains_[r];
  if (link >= ch.barrier.size() || ch.barrier[link] < 0) return -1;
  const Barrier& bar = barriers_[static_cast<size_t>(ch.barrier[link])];
  const uint32_t me = ch.member[link];
  if (bar.members.size() != 2 || me >= 2 || ops_[bar.members[me].op] != op) return -1;
  return stage_[bar.members[1 - me].rank];
}

// The direction of the segment before `link` (Direction: a send to a later stage ends forward
// work, a receive from an earlier one starts it; gradients flow the other way).
StepGraph::Direction StepGraph::SegmentDirection(uint32_t r, size_t link) const {
  const int64_t mine = stage_[r];
  if (const int64_t to = PeerStage(r, link, "send"); to >= 0 && to != mine) {
    return to > mine ? Direction::kForward : Direction::kBackward;
  }
  if (link == 0) return Direction::kOther;
  if (const int64_t from = PeerStage(r, link - 1, "recv"); from >= 0 && from != mine) {
    return from < mine ? Direction::kForward : Direction::kBackward;
  }
  return Direction::kOther;
}

void StepGraph::ClassifySegments() {
  for (uint32_t r = 0; r < chains_.size(); ++r) {
    Chain& ch = chains_[r];
    ch.direction.resize(ch.barrier.size());
    for (size_t i = 0; i < ch.barrier.size(); ++i) ch.direction[i] = SegmentDirection(r, i);
  }
}

// Per rank index and direction: its compute per step (positive segments, recording start left out).
std::vector<std::array<double, StepGraph::kDirections>> StepGraph::StageCompute(const Segments& segments) const {
  std::vector<std::array<double, kDirections>> out;
  for (uint32_t r = 0; r < chains_.size(); ++r) {
    std::array<double, kDirections> sum{};
    for (size_t i = 1; i < segments[r].size(); ++i) {
      sum[static_cast<size_t>(chains_[r].direction[i])] += std::max(0.0, segments[r][i]);
    }
    for (double& v : sum) v = steps_ > 0 ? v / static_cast<double>(steps_) : 0;
    out.push_back(sum);
  }
  return out;
}

// A stage slower than the others, balanced: its forward, backward and other compute each scaled
// down to the other stages' median of the same (a stage slowed in its forward only — one slow
// layer, a slow worker alone in its stage — is not also made faster in a backward that was never
// slow, which in a pipeline is often off the critical path). With `workers_first`, those ranks are
// first made like their stage peers, and the saving is what balancing adds to that: a stage slow
// only because of one slow worker has no partition imbalance left.
ReplayWhatIf StepGraph::StageBalanced(int64_t stage, const std::vector<uint32_t>& workers_first) const {
  ReplayWhatIf w;
  w.what = "stage_balance";
  w.stage = stage;
  w.step_ns = base_.mean_step_ns;
  w.estimated_step_ns = base_.mean_step_ns;
  if (!built()) return w;
  Segments segments = MeasuredSegments();
  if (!workers_first.empty()) {
    LikePeers(workers_first, &segments);
    const Replayed fixed = Replay(segments, NoTransferCaps());
    if (!fixed.complete) return w;
    w.step_ns = w.estimated_step_ns = fixed.mean_step_ns;
  }
  const std::vector<std::array<double, kDirections>> compute = StageCompute(segments);
  std::map<int64_t, std::vector<std::array<double, kDirections>>> by_stage;
  for (size_t r = 0; r < chains_.size(); ++r) by_stage[stage_[r]].push_back(compute[r]);
  if (by_stage.size() < 2 || !by_stage.count(stage)) return w;
  // The median over a set of ranks of one direction (or of the total, d = kDirections).
  auto median_of = [](const std::vector<std::array<double, kDirections>>& ranks, size_t d) {
    std::vector<double> v;
    for (const auto& c : ranks) v.push_back(d < kDirections ? c[d] : std::accumulate(c.begin(), c.end(), 0.0));
    return ComputeRobustStats(v).median;
  };
  std::array<double, kDirections + 1> own{}, target{};
  for (size_t d = 0; d <= kDirections; ++d) {
    std::vector<double> others;
    for (const auto& [s, ranks] : by_stage) {
      if (s != stage) others.push_back(median_of(ranks, d));
    }
    own[d] = median_of(by_stage[stage], d);
    target[d] = ComputeRobustStats(others).median;
  }
  if (own[kDirections] <= 0 || target[kDirections] >= own[kDirections]) return w;  // not a slower stage
  std::array<double, kDirections> ratio{};
  for (size_t d = 0; d < kDirections; ++d) ratio[d] = own[d] > 0 && target[d] < own[d] ? target[d] / own[d] : 1.0;
  for (uint32_t r = 0; r < chains_.size(); ++r) {
    if (stage_[r] != stage) continue;
    for (size_t i = 1; i < segments[r].size(); ++i) {
      if (segments[r][i] > 0) segments[r][i] *= ratio[static_cast<size_t>(chains_[r].direction[i])];
    }
  }
  const Replayed balanced = Replay(segments, NoTransferCaps());
  if (balanced.complete) w.estimated_step_ns = std::min(balanced.mean_step_ns, w.step_ns);
  w.saving_ns = w.step_ns - w.estimated_step_ns;
  return w;
}

StepReplay StepGraph::Summarize() const {
  StepReplay out;
  out.ranks = chains_.size();
  out.steps = steps_;
  if (!built()) {
    out.not_built = not_built_;
    return out;
  }
  out.built = true;
  out.barriers = barriers_.size();
  out.unpaired = unpaired_;
  out.acausal = acausal_;
  for (const Chain& ch : chains_) out.segments += ch.segment_ns.size();
  for (const Barrier& b : barriers_) {
    for (const Member& m : b.members) out.asynchronous += m.waits ? 0 : 1;
  }
  // Fidelity: the measured durations replayed against the measured steps.
  const Segments measured = MeasuredSegments();
  const std::vector<double> transfers = NoTransferCaps();
  const Replayed& base = base_;
  std::vector<double> measured_steps, errors;
  for (size_t s = 0; s < steps_; ++s) {
    double sum = 0;
    for (const Chain& ch : chains_) sum += ch.measured_end_ns[s] - ch.measured_start_ns[s];
    measured_steps.push_back(sum / static_cast<double>(chains_.size()));
    const double m = measured_steps.back();
    errors.push_back(m > 0 ? std::abs(base.step_ns[s] - m) / m : 0);
  }
  out.measured_step_ns = Mean(measured_steps);
  out.replayed_step_ns = base.mean_step_ns;
  out.max_step_error = *std::max_element(errors.begin(), errors.end());
  out.mean_step_error = Mean(errors);

  // The standard what-ifs.
  Segments all = measured;
  for (size_t r = 0; r < chains_.size(); ++r) {
    for (size_t i = 0; i < all[r].size(); ++i) {
      all[r][i] = LikePeer(all[r][i], chains_[r].peer_ns[i]);
    }
  }
  std::vector<double> fast_transfers = transfers;
  for (size_t b = 0; b < barriers_.size(); ++b) {
    if (barriers_[b].peer_transfer_ns >= 0) fast_transfers[b] = barriers_[b].peer_transfer_ns;
  }
  out.all = WhatIf("all", all, fast_transfers);
  out.compute = WhatIf("compute", all, transfers);
  std::set<std::string> ops;
  for (const Barrier& b : barriers_) ops.insert(b.op);
  for (const std::string& op : ops) {
    std::vector<double> t = transfers;
    for (size_t b = 0; b < barriers_.size(); ++b) {
      if (barriers_[b].op == op) t[b] = fast_transfers[b];
    }
    ReplayWhatIf w = WhatIf("communication", measured, t);
    w.op = op;
    out.communication.push_back(std::move(w));
  }
  // Ranks: those whose segments exceed their peers' most (per step), at most kMaxRankReplays.
  std::vector<std::pair<double, uint32_t>> excess;
  for (uint32_t r = 0; r < chains_.size(); ++r) {
    double sum = 0;
    for (size_t i = 0; i < measured[r].size(); ++i) sum += measured[r][i] - all[r][i];
    if (sum > 0) excess.push_back({sum, r});
  }
  std::sort(excess.begin(), excess.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  excess.resize(std::min(excess.size(), kMaxRankReplays));
  for (const auto& [sum, r] : excess) out.by_rank.push_back(RanksLikePeers({r}));
  std::sort(out.by_rank.begin(), out.by_rank.end(),
            [](const ReplayWhatIf& a, const ReplayWhatIf& b) { return a.saving_ns > b.saving_ns; });
  // Stages.
  std::map<int64_t, std::vector<uint32_t>> stages;
  for (uint32_t r = 0; r < chains_.size(); ++r) stages[stage_[r]].push_back(r);
  for (const auto& [stage, members] : stages) {
    ReplayWhatIf w = RanksLikePeers(members);
    w.what = "stage_workers";
    w.rank = -1;
    w.stage = stage;
    out.stage_workers.push_back(std::move(w));
    if (stages.size() > 1) {
      ReplayWhatIf b = StageBalanced(stage);
      if (b.saving_ns > 0) out.stage_balance.push_back(std::move(b));
    }
  }
  return out;
}

namespace {

// The rank indices of the slow workers found among a slow stage's ranks.
template <typename IndexOf>
std::vector<uint32_t> SlowWorkersWithin(const Finding& stage, const std::vector<Finding>& findings, IndexOf index_of) {
  std::vector<uint32_t> out;
  for (const Finding& f : findings) {
    if (f.kind != FindingKind::kSlowWorker) continue;
    for (int64_t r : f.ranks) {
      const int64_t i = index_of(r);
      if (i >= 0 && std::find(stage.ranks.begin(), stage.ranks.end(), r) != stage.ranks.end()) {
        out.push_back(static_cast<uint32_t>(i));
      }
    }
  }
  return out;
}

}  // namespace

void CostByReplay(const StepGraph& graph, const std::vector<int64_t>& rank_numbers, double min_excess_ns,
                  std::vector<Finding>* findings) {
  if (!graph.built()) return;
  auto index_of = [&](int64_t rank) -> int64_t {
    const auto it = std::find(rank_numbers.begin(), rank_numbers.end(), rank);
    return it == rank_numbers.end() ? -1 : it - rank_numbers.begin();
  };
  // A slow stage is a claim about the step: when balancing it in the faithful replay saves less
  // than the minimum cost, its extra work hides in the pipeline's waits (the middle stages of a
  // deeper pipeline both receive and send) and there is no partition imbalance to name.
  std::vector<bool> drop(findings->size(), false);
  for (size_t k = 0; k < findings->size(); ++k) {
    Finding& f = (*findings)[k];
    ReplayWhatIf w;
    if (f.kind == FindingKind::kSlowStage) {
      w = graph.StageBalanced(std::stoll(f.subject), SlowWorkersWithin(f, *findings, index_of));
    } else if (f.kind == FindingKind::kSlowWorker || f.kind == FindingKind::kSlowRank ||
               f.kind == FindingKind::kPerStepImbalance) {
      std::vector<uint32_t> fixed;
      for (int64_t r : f.ranks) {
        if (const int64_t i = index_of(r); i >= 0) fixed.push_back(static_cast<uint32_t>(i));
      }
      if (fixed.size() != f.ranks.size()) continue;
      w = graph.RanksLikePeers(fixed);
    } else {
      continue;
    }
    if (w.step_ns <= 0) continue;
    if (f.kind == FindingKind::kSlowStage && w.saving_ns < min_excess_ns) {
      drop[k] = true;
      continue;
    }
    // The cost it had before, unless a what-if evidence of the finding already shows it.
    const bool shown = std::any_of(f.evidence.begin(), f.evidence.end(), [&](const Evidence& e) {
      return e.kind == EvidenceKind::kWhatIf && std::fabs(e.Get("saving_ns") - f.cost.saving_ns) < 1.0;
    });
    if (!shown) {
      Evidence before;
      before.kind = EvidenceKind::kWhatIf;
      before.detail = "previous_estimate";
      before.Set("step_ns", f.cost.step_ns).Set("saving_ns", f.cost.saving_ns).Set("estimated_step_ns", f.cost.estimated_step_ns);
      f.evidence.push_back(std::move(before));
    }
    // The replay's step is the mean over ranks; the finding keeps the job's step and takes the saving.
    f.cost.method = CostMethod::kWhatIfReplay;
    f.cost.saving_ns = std::clamp(w.saving_ns, 0.0, f.cost.step_ns > 0 ? f.cost.step_ns : w.step_ns);
    if (f.cost.step_ns <= 0) f.cost.step_ns = w.step_ns;
    f.cost.estimated_step_ns = f.cost.step_ns - f.cost.saving_ns;
    // Below the minimum cost the replay shows nobody waits for it measurably: still reported
    // (the rule found it), as information.
    f.severity = f.cost.saving_ns >= 0.10 * f.cost.step_ns ? Severity::kCritical
                 : f.cost.saving_ns >= min_excess_ns      ? Severity::kWarning
                                                          : Severity::kInfo;
    Evidence e;
    e.kind = EvidenceKind::kWhatIf;
    e.detail = "replay";
    e.Set("step_ns", w.step_ns).Set("estimated_step_ns", w.estimated_step_ns).Set("saving_ns", w.saving_ns);
    f.evidence.push_back(std::move(e));
  }
  size_t kept = 0;
  for (size_t k = 0; k < findings->size(); ++k) {
    if (drop[k]) continue;
    if (kept != k) (*findings)[kept] = std::move((*findings)[k]);
    ++kept;
  }
  findings->resize(kept);
}

StepReplay ReplaySteps(const std::vector<RankSummary>& ranks, const CollectiveMatching& matching,
                       const ClockEstimate& clock, const JobLayout& layout) {
  return StepGraph(ranks, matching, clock, layout).Summarize();
}

}  // namespace rankscope

// The replayed what-if (issue 16): the profiled steps rebuilt as a dependency graph and
// replayed with chosen operations made no slower than their peers'.
//
// The graph, from the rank summaries alone:
//  - per rank, one chain over the profiled steps every rank has: step start, its matched
//    collective participations in (clock-aligned) start order, step end. Between two links is a
//    *compute segment*: whatever the rank did there (CPU ops, kernels, waits the trace does not
//    call communication). Segments are signed: on a GPU the kernels of a step can outlive the
//    CPU's step, and gloo runs a step's buckets on several threads at once.
//  - every collective instance that two or more chained ranks took part in is a *barrier*. A
//    participant that was still inside the collective when the last member arrived waited for
//    it; one that left before did not (an asynchronous send), and an op that lets a rank go
//    early wherever it came early is asynchronous for that rank everywhere (the last arriver
//    trivially "waits"). An asynchronous member leaves after its own span, and what it sent is
//    there no earlier than that; a waiting member leaves its own measured time after the
//    collective could complete (the last waiting arrival, and the data sent being there). The
//    instance's *transfer* is the median of those times over its waiting members.
//  - a step's time is the mean over ranks of (end - start); the job's step time is the mean over
//    the steps.
//
// Fidelity: replaying the measured durations must give back the measured step times. Every
// duration is the operation's own (segments, asynchronous spans, each waiting member's time after
// the collective could complete), so the check measures the graph: the clock alignment, the
// pairing of instances, who waits for whom; findings take their cost from the replay only when
// every step is reproduced within kReplayFidelity, no transfer is left unpaired and no receive
// ends before its sender started.
//
// What-if: a segment is replaced by the median of its peers' (the ranks of its pipeline stage
// with the same chain shape in that step, at the same position; the rank itself left out), a
// transfer by the median transfer of the instances of its group, op and size — each only when
// that is faster (a member's time after completion capped at the peers' transfer). Replayed
// for: every operation (the total S), compute or one collective op alone, one rank, one stage's
// ranks (a worker problem), and a stage whose forward, backward and other compute are each
// scaled to the other stages' median (a partition problem). Saving = replayed step - what-if step.
//
// Bounds: the graph holds one 16-byte link per participation, and one segment and its direction
// per link (the summaries bound the participations: kDefaultMaxCollectiveInstances per rank); a replay is
// linear in the links. Per-rank what-ifs are replayed for at most kMaxRankReplays ranks, those
// whose segments exceed their peers' most.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "rankscope/analysis/rank_summary.h"
#include "rankscope/cluster/clock_offsets.h"
#include "rankscope/cluster/collective_matching.h"
#include "rankscope/cluster/layout.h"
#include "rankscope/findings/finding.h"

namespace rankscope {

inline constexpr double kReplayFidelity = 0.02;  // largest relative step error a faithful replay has
inline constexpr size_t kMaxRankReplays = 16;

struct ReplayWhatIf {
  std::string what;     // "all", "compute", "communication", "rank", "stage_workers", "stage_balance"
  std::string op;       // communication: the collective op
  int64_t rank = -1;    // rank: its number
  int64_t stage = -1;   // stage_*: the stage
  double step_ns = 0;            // the replayed step with the measured durations
  double estimated_step_ns = 0;  // ... with the change
  double saving_ns = 0;          // step_ns - estimated_step_ns (never negative)
};

struct StepReplay {
  bool built = false;
  std::string not_built;        // why not, when !built
  size_t steps = 0;
  size_t ranks = 0;
  uint64_t segments = 0;        // compute segments
  uint64_t barriers = 0;        // collective instances replayed as barriers
  uint64_t asynchronous = 0;    // participations that left before the last member arrived
  uint64_t unpaired = 0;        // point-to-point instances whose sender and receiver are unknown
  uint64_t acausal = 0;         // receives that end before their sender starts (spans that do not bound the transfer)
  double measured_step_ns = 0;  // mean over the steps of the measured step time
  double replayed_step_ns = 0;  // ... replayed with the measured durations
  double max_step_error = 0;    // max over steps of |replayed - measured| / measured
  double mean_step_error = 0;
  // Faithful: every step reproduced, no transfer left out of the graph, none against causality.
  bool faithful() const { return built && unpaired == 0 && acausal == 0 && max_step_error <= kReplayFidelity; }

  ReplayWhatIf all;                          // every operation no slower than its peers: S
  ReplayWhatIf compute;                      // compute segments only
  std::vector<ReplayWhatIf> communication;   // transfers of one collective op only
  std::vector<ReplayWhatIf> by_rank;         // the ranks most slower than their peers
  std::vector<ReplayWhatIf> stage_workers;   // per stage: its ranks like their stage peers
  std::vector<ReplayWhatIf> stage_balance;   // per slower stage: each direction of its compute scaled to the others' median
};

// The graph and its replays. Built once per diagnosis; findings ask it for their ranks' cost.
class StepGraph {
 public:
  // `ranks`: the analysed summaries (indices as in `matching` and `clock`); `layout` gives the
  // stages (every rank one stage without a pipeline). Never fails: an unbuilt graph says why.
  StepGraph(const std::vector<RankSummary>& ranks, const CollectiveMatching& matching, const ClockEstimate& clock,
            const JobLayout& layout);

  bool built() const { return not_built_.empty(); }
  const std::string& not_built() const { return not_built_; }

  // Fidelity and the standard what-ifs (the report's replay section).
  StepReplay Summarize() const;
  // `fixed` (rank indices) no slower than their stage peers, segment by segment.
  ReplayWhatIf RanksLikePeers(const std::vector<uint32_t>& fixed) const;
  // Part of ranks' excess removed: `excess_ns[i]` per step off rank `fixed[i]`'s segments where they
  // exceed their peers' median, in proportion to what each exceeds by and never below the median
  // (all of it: RanksLikePeers). The graph does not know which operation a segment's time went
  // to, only where the rank was slower than its peers; a function's excess is taken from there.
  ReplayWhatIf RanksWithoutExcess(const std::vector<uint32_t>& fixed, const std::vector<double>& excess_ns) const;
  // `stage`'s forward, backward and other compute each scaled to the other stages' median of the
  // same (no change when the stage is not slower in all).
  // With `workers_first` (rank indices), those ranks are made like their stage peers first and the
  // saving is what balancing adds (a stage slow only through one slow worker: none).
  ReplayWhatIf StageBalanced(int64_t stage, const std::vector<uint32_t>& workers_first = {}) const;

  // The graph (public for tests and the benchmark; see the file comment).
  static constexpr int32_t kStepStart = -2;
  static constexpr int32_t kStepEnd = -1;
  struct Member {
    uint32_t rank = 0;
    uint32_t link = 0;
    bool waits = true;     // left after the last arrival: it waited for the others
    uint16_t op = 0;       // its own op (send or recv of one instance), index into ops()
    double span_ns = 0;    // its own measured span (arrival to exit)
    double after_ns = 0;   // waiting members: its exit after the collective could complete
  };
  struct Barrier {
    std::vector<Member> members;
    double transfer_ns = 0;  // the median of its waiting members' after_ns
    double peer_transfer_ns = -1;  // median transfer of the group's instances of its op and size (-1: none)
    std::string op;
  };
  // Which way a compute segment's work flows through the pipeline: forward work ends by sending
  // to a later stage or starts from what an earlier stage sent, backward work the reverse, other
  // work is the rest (the optimizer, data-parallel all-reduces, the gaps between a send and the
  // next receive). StageBalanced scales each direction on its own.
  enum class Direction : uint8_t { kForward, kBackward, kOther };
  static constexpr size_t kDirections = 3;
  struct Chain {
    std::vector<int32_t> barrier;      // per link: barrier index, kStepStart or kStepEnd
    std::vector<uint32_t> member;      // per link: member index within the barrier
    std::vector<double> segment_ns;    // per link: time since the previous link's exit
    std::vector<double> peer_ns;       // per link: the peers' median segment (NaN: no peers / not replaceable)
    std::vector<Direction> direction;  // per link: the direction of the segment before it
    std::vector<double> measured_start_ns, measured_end_ns;  // per step, relative to the origin
  };

  const std::vector<Chain>& chains() const { return chains_; }
  const std::vector<Barrier>& barriers() const { return barriers_; }
  const std::vector<std::string>& ops() const { return ops_; }

 private:
  struct Replayed {
    bool complete = false;
    std::vector<double> step_ns;  // per step: mean over ranks of end - start
    double mean_step_ns = 0;
  };
  using Segments = std::vector<std::vector<double>>;  // [rank][link]

  Replayed Replay(const Segments& segments, const std::vector<double>& transfers) const;
  Segments MeasuredSegments() const;
  std::vector<double> NoTransferCaps() const;
  ReplayWhatIf WhatIf(std::string what, const Segments& segments, const std::vector<double>& transfers) const;
  void Build(const std::vector<RankSummary>& ranks, const CollectiveMatching& matching, const ClockEstimate& clock,
             const JobLayout& layout);
  void MarkAsynchronousOps(const std::vector<size_t>& last_of);
  void ComputePeerMedians();
  int64_t PeerStage(uint32_t r, size_t link, std::string_view op) const;
  Direction SegmentDirection(uint32_t r, size_t link) const;
  void ClassifySegments();
  std::vector<std::array<double, kDirections>> StageCompute(const Segments& segments) const;
  void LikePeers(const std::vector<uint32_t>& fixed, Segments* segments) const;

  std::string not_built_;
  uint64_t unpaired_ = 0;
  uint64_t acausal_ = 0;
  std::vector<int64_t> rank_numbers_;
  std::vector<int64_t> stage_;   // per rank index
  size_t steps_ = 0;
  std::vector<Chain> chains_;
  std::vector<Barrier> barriers_;
  std::vector<std::string> ops_;  // the members' ops, interned
  Replayed base_;                // the replay of the measured durations (fidelity, every what-if's baseline)
};

// Re-costs, from the replay, the findings about ranks and stages it can replay: slow_worker and
// slow_rank (the rank like its stage peers), slow_stage (the stage's compute balanced with the
// other stages'), per_step_imbalance (the stage's ranks like their peers, step by step). The
// previous cost stays as evidence; the caller ranks the findings again. Only for a faithful graph.
// A finding whose replayed saving is below `min_excess_ns` becomes information; a slow_stage is
// dropped instead (a stage whose balancing saves nothing is not a partition imbalance).
void CostByReplay(const StepGraph& graph, const std::vector<int64_t>& rank_numbers, double min_excess_ns,
                  std::vector<Finding>* findings);

// Builds the graph and summarises it (StepGraph::Summarize).
StepReplay ReplaySteps(const std::vector<RankSummary>& ranks, const CollectiveMatching& matching,
                       const ClockEstimate& clock, const JobLayout& layout);

}  // namespace rankscope

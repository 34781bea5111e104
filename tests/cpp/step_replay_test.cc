// The replayed what-if (cluster/step_replay.h) on semi-synthetic pipeline jobs whose waiting is
// physically consistent (synthetic_pipeline.h): the replay must reproduce the simulated steps,
// and its savings must match what simulating the job again without the fault measures.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "rankscope/cluster/cluster_diagnosis.h"
#include "rankscope/cluster/step_replay.h"
#include "synthetic_pipeline.h"

namespace rankscope {
namespace {

using testing::MeanStepNs;
using testing::PipelineJob;
using testing::SimulatePipeline;

struct Replayed {
  StepReplay summary;
  std::vector<RankSummary> ranks;
};

StepGraph GraphOf(const std::vector<RankSummary>& ranks, JobLayout* layout, CollectiveMatching* matching,
                  ClockEstimate* clock) {
  *matching = MatchCollectives(ranks);
  std::vector<RankHost> hosts;
  for (const RankSummary& r : ranks) hosts.push_back({r.host_name, HostSource::kTrace});
  *clock = EstimateClockOffsets(ranks, hosts, *matching);
  *layout = InferLayout(ranks, nullptr);
  return StepGraph(ranks, *matching, *clock, *layout);
}

StepReplay Summary(const std::vector<RankSummary>& ranks) {
  JobLayout layout;
  CollectiveMatching matching;
  ClockEstimate clock;
  return GraphOf(ranks, &layout, &matching, &clock).Summarize();
}

// The saving a re-run without the fault measures.
double MeasuredSaving(const PipelineJob& faulty, const PipelineJob& fixed) {
  return MeanStepNs(SimulatePipeline(faulty)) - MeanStepNs(SimulatePipeline(fixed));
}

TEST(StepReplay, ReproducesEverySimulatedStep) {
  for (int stages : {1, 2, 4}) {
    PipelineJob job;
    job.stages = stages;
    job.data = stages == 1 ? 4 : 2;
    job.rank_extra_ms = {0, 1.5};
    const StepReplay r = Summary(SimulatePipeline(job));
    ASSERT_TRUE(r.built) << r.not_built;
    EXPECT_EQ(r.steps, 5u);
    // Not exact: a send that ends just after its receiver was posted counts as waiting for it
    // (the barrier model), which moves its end by up to the receive's 10 us.
    EXPECT_LT(r.max_step_error, 1e-3) << stages << " stages";
    EXPECT_TRUE(r.faithful());
    EXPECT_NEAR(r.replayed_step_ns, MeanStepNs(SimulatePipeline(job)), 1e-3 * r.replayed_step_ns);
  }
}

TEST(StepReplay, ASlowWorkersSavingMatchesTheRerun) {
  PipelineJob job;
  job.stages = 2;
  job.data = 3;
  job.rank_extra_ms = {0, 1.0};  // rank 1 (stage 0): 1 ms more in each of its 4 forwards
  PipelineJob fixed = job;
  fixed.rank_extra_ms.clear();
  const double truth = MeasuredSaving(job, fixed);
  ASSERT_GT(truth, 1e6);
  const std::vector<RankSummary> ranks = SimulatePipeline(job);
  const StepReplay r = Summary(ranks);
  ASSERT_FALSE(r.by_rank.empty());
  EXPECT_EQ(r.by_rank.front().rank, 1);
  EXPECT_NEAR(r.by_rank.front().saving_ns, truth, 0.05 * truth);
  // A worker problem: fixing stage 0's ranks saves it; balancing the stages does not.
  ASSERT_EQ(r.stage_workers.size(), 2u);
  EXPECT_NEAR(r.stage_workers[0].saving_ns, truth, 0.05 * truth);
  EXPECT_LT(r.stage_workers[1].saving_ns, 0.05 * truth);
  EXPECT_NEAR(r.all.saving_ns, truth, 0.05 * truth);
}

TEST(StepReplay, ASlowStagesSavingMatchesTheRerun) {
  PipelineJob job;
  job.stages = 4;
  job.data = 2;
  job.microbatches = 8;
  job.stage_scale = {1, 1, 1, 1.5};  // the last stage has half again as many layers
  PipelineJob fixed = job;
  fixed.stage_scale.clear();
  const double truth = MeasuredSaving(job, fixed);
  const StepReplay r = Summary(SimulatePipeline(job));
  ASSERT_TRUE(r.faithful());
  // A partition problem: no rank is slower than its stage peers ...
  for (const ReplayWhatIf& w : r.stage_workers) EXPECT_LT(w.saving_ns, 0.02 * truth);
  // ... and balancing the last stage with the others gives the re-run's saving.
  ASSERT_EQ(r.stage_balance.size(), 1u);
  EXPECT_EQ(r.stage_balance[0].stage, 3);
  EXPECT_NEAR(r.stage_balance[0].saving_ns, truth, 0.05 * truth);
}

// A stage slowed in its forward only (a slow layer, or a slow worker alone in its stage): its
// backward was never slow, and scaling all its compute by one ratio would make the backward
// faster and the forward not fast enough (one ratio for all: 4.8 ms of the re-run's 8.0 ms).
// Balanced direction by direction, the replay gives 7.4 ms: the segments are then exactly the
// fault-free job's, and the rest is the barrier model's (a waiting receive keeps the time after
// completion it had in the faulty schedule).
TEST(StepReplay, AStageSlowInItsForwardOnlyIsBalancedInItsForward) {
  PipelineJob job;
  job.stages = 4;
  job.data = 2;
  job.rank_extra_ms = {0, 0, 2.0, 2.0};  // stage 1 (ranks 2, 3): each forward 2 ms -> 4 ms
  PipelineJob fixed = job;
  fixed.rank_extra_ms.clear();
  const double truth = MeasuredSaving(job, fixed);
  ASSERT_GT(truth, 4e6);
  const StepReplay r = Summary(SimulatePipeline(job));
  ASSERT_TRUE(r.faithful());
  ASSERT_EQ(r.stage_balance.size(), 1u);
  EXPECT_EQ(r.stage_balance[0].stage, 1);
  EXPECT_NEAR(r.stage_balance[0].saving_ns, truth, 0.10 * truth);
}

// One slow worker makes its stage's median slower too, but that is not a partition imbalance:
// with the worker made like its peer first, balancing the stage adds nothing, and only the
// slow worker is reported.
TEST(StepReplay, AStageSlowOnlyThroughItsSlowWorkerIsNotASlowStage) {
  PipelineJob job;
  job.stages = 2;
  job.data = 2;
  job.rank_extra_ms = {0, 3.0};  // rank 1 of stage 0
  const std::vector<RankSummary> ranks = SimulatePipeline(job);
  auto d = DiagnoseCluster(ranks, ClusterOptions{});
  ASSERT_TRUE(d.ok()) << d.status().message();
  ASSERT_TRUE(d->replay.faithful());
  ASSERT_FALSE(d->findings.empty());
  EXPECT_EQ(d->findings.front().kind, FindingKind::kSlowWorker);
  EXPECT_EQ(d->findings.front().ranks, std::vector<int64_t>{1});
  for (const Finding& f : d->findings) EXPECT_NE(f.kind, FindingKind::kSlowStage) << f.subject;
}

TEST(StepReplay, PerStepImbalanceIsSavedByEveryRankLikeItsPeersStepByStep) {
  PipelineJob job;
  job.stages = 1;
  job.data = 4;
  // The slowest rank changes every step.
  job.step_rank_extra_ms = {{2, 0, 0, 0}, {0, 2, 0, 0}, {0, 0, 2, 0}, {0, 0, 0, 2}, {2, 0, 0, 0}};
  PipelineJob fixed = job;
  fixed.step_rank_extra_ms.clear();
  const double truth = MeasuredSaving(job, fixed);
  const StepReplay r = Summary(SimulatePipeline(job));
  ASSERT_TRUE(r.faithful());
  EXPECT_NEAR(r.stage_workers[0].saving_ns, truth, 0.05 * truth);
  // No one rank explains it: each alone saves about a fifth to two fifths of it.
  for (const ReplayWhatIf& w : r.by_rank) EXPECT_LT(w.saving_ns, 0.5 * truth);
}

TEST(StepReplay, ACleanJobSavesNothing) {
  PipelineJob job;
  job.stages = 2;
  const StepReplay r = Summary(SimulatePipeline(job));
  ASSERT_TRUE(r.faithful());
  EXPECT_LT(r.all.saving_ns, 1e3);
  EXPECT_TRUE(r.stage_balance.empty());
}

// The same job as gloo with record_shapes traces it: its spans carry no group and no sequence
// number (every transfer and all-reduce in one unnamed group), but c10d's send/recv ops name
// the peer. `with_peers` false: as before record_shapes (no peer).
std::vector<RankSummary> AsGlooTraces(std::vector<RankSummary> ranks, int data, bool with_peers) {
  // (pipeline column, sequence number) -> the sender and the receiver of that transfer.
  std::map<std::pair<int64_t, int64_t>, std::pair<int64_t, int64_t>> ends;
  for (const RankSummary& r : ranks) {
    for (const CollectiveInstance& c : r.collectives) {
      if (c.type > 1) continue;
      auto& e = ends.try_emplace({r.rank.rank % data, c.seq}, std::pair<int64_t, int64_t>{-1, -1}).first->second;
      (c.type == 0 ? e.first : e.second) = r.rank.rank;
    }
  }
  for (RankSummary& r : ranks) {
    for (CollectiveInstance& c : r.collectives) {
      if (c.type <= 1 && with_peers) {
        const auto& [from, to] = ends.at({r.rank.rank % data, c.seq});
        c.peer = static_cast<int32_t>(c.type == 0 ? to : from);
      }
      c.seq = -1;
      c.group = 3;
    }
    r.process_groups.push_back({"", "", "", -1});
  }
  return ranks;
}

TEST(StepReplay, GlooTransfersOfADeepPipelinePairByTheirPeers) {
  PipelineJob job;
  job.stages = 4;
  job.data = 2;
  job.rank_extra_ms = {0, 0, 1.5};  // rank 2 (stage 1)
  const std::vector<RankSummary> named = SimulatePipeline(job);
  const StepReplay reference = Summary(named);
  ASSERT_TRUE(reference.faithful());
  // Without peers, four stages' transfers cannot be paired: the replay says so.
  const StepReplay blind = Summary(AsGlooTraces(named, job.data, false));
  EXPECT_GT(blind.unpaired, 0u);
  EXPECT_FALSE(blind.faithful());
  // With them, every transfer is one sender and one receiver, and the replay is the same.
  const std::vector<RankSummary> gloo = AsGlooTraces(named, job.data, true);
  const CollectiveMatching matching = MatchCollectives(gloo);
  uint64_t pairs = 0;
  for (const MatchedCollective& m : matching.instances) {
    if (!m.pair) continue;
    ++pairs;
    EXPECT_EQ(m.participants.size(), 2u);
    EXPECT_TRUE(m.complete);
  }
  // 5 steps x 2 columns x 3 links x 4 micro-batches x 2 directions.
  EXPECT_EQ(pairs, 5u * 2 * 3 * 4 * 2);
  const StepReplay r = Summary(gloo);
  ASSERT_TRUE(r.faithful()) << r.not_built;
  EXPECT_EQ(r.unpaired, 0u);
  EXPECT_NEAR(r.replayed_step_ns, reference.replayed_step_ns, 1e-6 * reference.replayed_step_ns);
  ASSERT_FALSE(r.by_rank.empty());
  EXPECT_EQ(r.by_rank.front().rank, 2);
  EXPECT_NEAR(r.by_rank.front().saving_ns, reference.by_rank.front().saving_ns, 1e-3 * reference.by_rank.front().saving_ns);
}

TEST(StepReplay, SaysWhyItIsNotBuilt) {
  PipelineJob job;
  job.stages = 1;
  job.data = 1;
  EXPECT_EQ(Summary(SimulatePipeline(job)).not_built, "fewer than two ranks");
  job.data = 2;
  std::vector<RankSummary> ranks = SimulatePipeline(job);
  for (RankSummary& r : ranks) r.collectives.clear();
  EXPECT_EQ(Summary(ranks).not_built, "no collective links the ranks within their common steps");
  ranks = SimulatePipeline(job);
  for (StepSummary& s : ranks[1].steps) s.number += 100;
  EXPECT_EQ(Summary(ranks).not_built, "the ranks share no profiled step");
}

TEST(StepReplay, ContradictoryOrdersAreACycleNotAHang) {
  PipelineJob job;
  job.stages = 1;
  job.data = 2;
  job.steps = 1;
  std::vector<RankSummary> ranks = SimulatePipeline(job);
  // A second all-reduce B that rank 0 enters after the first one (A) and rank 1 long before it
  // (so long that B's members started before A's, at the median); both wait in B until the later
  // arrival: A then B on rank 0, B then A on rank 1.
  const int64_t len = ranks[0].collectives.front().end_ns - ranks[0].collectives.front().start_ns;
  const int64_t b0 = ranks[0].collectives.front().end_ns + 1000;
  const int64_t b1 = ranks[1].collectives.front().start_ns - 2 * len - 10000;
  for (RankSummary& r : ranks) {
    CollectiveInstance second = r.collectives.front();
    second.seq += 1000;
    second.start_ns = r.rank.rank == 0 ? b0 : b1;
    second.end_ns = std::max(b0, b1) + len;
    r.collectives.push_back(second);
  }
  const StepReplay r = Summary(ranks);
  EXPECT_FALSE(r.built);
  EXPECT_NE(r.not_built.find("cycle"), std::string::npos);
}

// gloo runs a step's DDP buckets on two worker threads: the two all-reduces of a step overlap on
// every rank, and which span starts first is a race between the threads. A rank whose second
// bucket's span began 11 us before its first one took them in the other order than its peers,
// and the replay found a cycle (4 of 92 recorded CPU jobs); they take their members' order.
TEST(StepReplay, CollectivesARankRanAtOnceTakeTheirPeersOrder) {
  PipelineJob job;
  job.stages = 1;
  job.data = 4;
  std::vector<RankSummary> ranks = SimulatePipeline(job);
  const double measured = MeanStepNs(ranks);
  for (RankSummary& r : ranks) {
    const size_t n = r.collectives.size();
    for (size_t i = 0; i < n; ++i) {
      CollectiveInstance second = r.collectives[i];
      second.seq += 1000;
      second.start_ns = r.collectives[i].start_ns + (r.rank.rank == 2 && i == 3 ? -11000 : 5000);
      second.end_ns = r.collectives[i].end_ns + 20000;
      r.collectives.push_back(second);
    }
  }
  const StepReplay r = Summary(ranks);
  ASSERT_TRUE(r.built) << r.not_built;
  EXPECT_TRUE(r.faithful());
  EXPECT_LT(r.max_step_error, 1e-3);
  EXPECT_NEAR(r.replayed_step_ns, measured, 1e-3 * measured);
}

TEST(StepReplay, TheSlowWorkerFindingTakesItsCostFromTheReplay) {
  PipelineJob job;
  job.stages = 2;
  job.data = 3;
  job.rank_extra_ms = {0, 1.0};
  PipelineJob fixed = job;
  fixed.rank_extra_ms.clear();
  const double truth = MeasuredSaving(job, fixed);
  const std::vector<RankSummary> ranks = SimulatePipeline(job);
  ClusterOptions options;
  auto d = DiagnoseCluster(ranks, options);
  ASSERT_TRUE(d.ok()) << d.status().message();
  ASSERT_TRUE(d->replay.faithful());
  ASSERT_FALSE(d->findings.empty());
  const Finding& top = d->findings.front();
  EXPECT_EQ(top.kind, FindingKind::kSlowWorker);
  EXPECT_EQ(top.ranks, std::vector<int64_t>{1});
  EXPECT_EQ(top.cost.method, CostMethod::kWhatIfReplay);
  EXPECT_NEAR(top.cost.saving_ns, truth, 0.05 * truth);
}

}  // namespace
}  // namespace rankscope

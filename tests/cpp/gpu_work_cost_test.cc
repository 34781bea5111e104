// GPU work costed on the collectives' timeline (cluster/gpu_work_cost.h) and the replay of part of
// a rank's excess it uses (StepGraph::RanksWithoutExcess), on semi-synthetic data-parallel jobs
// whose waiting is physically consistent (synthetic_pipeline.h): the answer is what simulating
// the job again with the fault reduced measures.
#include <gtest/gtest.h>

#include <memory>

#include "rankscope/cluster/clock_offsets.h"
#include "rankscope/cluster/collective_matching.h"
#include "rankscope/cluster/gpu_work_cost.h"
#include "rankscope/cluster/layout.h"
#include "rankscope/cluster/step_replay.h"
#include "synthetic_pipeline.h"

namespace rankscope {
namespace {

using testing::MeanStepNs;
using testing::PipelineJob;
using testing::SimulatePipeline;

constexpr double kMs = 1e6;

// Four data-parallel ranks; rank 1 runs `extra_ms` more in each of its 4 forwards.
PipelineJob DataParallel(double extra_ms) {
  PipelineJob job;
  job.stages = 1;
  job.data = 4;
  job.rank_extra_ms = {0, extra_ms};
  return job;
}

struct Graph {
  explicit Graph(std::vector<RankSummary> r) : ranks(std::move(r)) {
    hosts.assign(ranks.size(), {"node0", HostSource::kTrace});
    matching = MatchCollectives(ranks);
    clock = EstimateClockOffsets(ranks, hosts, matching);
    layout = InferLayout(ranks, nullptr);
    graph = std::make_unique<StepGraph>(ranks, matching, clock, layout);
    replay = graph->Summarize();
    for (const RankSummary& s : ranks) rank_numbers.push_back(s.rank.rank);
  }
  std::vector<RankSummary> ranks;
  std::vector<RankHost> hosts;
  CollectiveMatching matching;
  ClockEstimate clock;
  JobLayout layout;
  std::unique_ptr<StepGraph> graph;
  StepReplay replay;
  std::vector<int64_t> rank_numbers;
};

// A slow_function finding about rank 1's kernel, costed `per_step_ns` by the per-step model.
Finding KernelFinding(double excess_ns, double per_step_ns, double step_ns) {
  Finding f;
  f.kind = FindingKind::kSlowFunction;
  f.ranks = {1};
  f.subject = "sm90_xmma_gemm";
  f.subject_kind = "kernel";
  f.cost.method = CostMethod::kWhatIfFaster;
  f.cost.added_ns = excess_ns;
  f.cost.step_ns = step_ns;
  f.cost.saving_ns = per_step_ns;
  f.cost.estimated_step_ns = step_ns - per_step_ns;
  Evidence e;
  e.kind = EvidenceKind::kFunction;
  e.rank = 1;
  e.subject = f.subject;
  e.Set("excess_ns", excess_ns);
  f.evidence.push_back(e);
  return f;
}

TEST(GpuWorkCost, PartOfARanksExcessSavesWhatARerunWithoutThatPartMeasures) {
  const std::vector<RankSummary> faulty = SimulatePipeline(DataParallel(2.0));  // 8 ms per step
  const Graph g(faulty);
  ASSERT_TRUE(g.replay.faithful()) << g.graph->not_built();
  const double half = MeanStepNs(faulty) - MeanStepNs(SimulatePipeline(DataParallel(1.0)));
  const double all = MeanStepNs(faulty) - MeanStepNs(SimulatePipeline(DataParallel(0.0)));
  ASSERT_GT(half, 3 * kMs);
  EXPECT_NEAR(g.graph->RanksWithoutExcess({1}, {4 * kMs}).saving_ns, half, 0.02 * half);
  // All of it, or more than it has: the rank like its peers.
  EXPECT_NEAR(g.graph->RanksWithoutExcess({1}, {8 * kMs}).saving_ns, all, 0.02 * all);
  EXPECT_DOUBLE_EQ(g.graph->RanksWithoutExcess({1}, {50 * kMs}).saving_ns, g.graph->RanksLikePeers({1}).saving_ns);
  EXPECT_DOUBLE_EQ(g.graph->RanksWithoutExcess({1}, {0}).saving_ns, 0);
}

TEST(GpuWorkCost, AKernelFindingIsCostedByTheReplayUnlessItsRankSharesItsGpu) {
  Graph g(SimulatePipeline(DataParallel(1.0)));
  ASSERT_TRUE(g.replay.faithful());
  const double truth = MeanStepNs(g.ranks) - MeanStepNs(SimulatePipeline(DataParallel(0.0)));
  for (size_t i = 0; i < g.ranks.size(); ++i) g.ranks[i].gpu.devices = {static_cast<int32_t>(i)};
  // The per-step model had it at half its worth (a host that ran ahead of its GPU).
  std::vector<Finding> findings = {KernelFinding(4 * kMs, truth / 2, MeanStepNs(g.ranks))};
  const GpuWorkCostInput in{g.graph.get(), &g.replay, &g.ranks, &g.hosts, &g.rank_numbers, 0.5 * kMs};
  CostWorkOfGpuRanksByReplay(in, &findings);
  EXPECT_NEAR(findings[0].cost.saving_ns, truth, 0.02 * truth);
  EXPECT_NE(findings[0].severity, Severity::kInfo);
  const Evidence* replayed = nullptr;
  for (const Evidence& e : findings[0].evidence) {
    if (e.kind == EvidenceKind::kWhatIf && e.detail == "replay_excess") replayed = &e;
  }
  ASSERT_NE(replayed, nullptr);
  EXPECT_DOUBLE_EQ(replayed->Get("saving_ns"), findings[0].cost.saving_ns);
  EXPECT_EQ(findings[0].evidence.back().detail, "replay_excess");

  // Ranks 1 and 3 on one GPU of the host: they slow each other through it, which the replay
  // cannot see; the per-step estimate stands.
  g.ranks[3].gpu.devices = {1};
  EXPECT_TRUE(SharesGpu(g.ranks, g.hosts, 1));
  EXPECT_FALSE(SharesGpu(g.ranks, g.hosts, 2));
  findings = {KernelFinding(4 * kMs, truth / 2, MeanStepNs(g.ranks))};
  CostWorkOfGpuRanksByReplay(in, &findings);
  EXPECT_DOUBLE_EQ(findings[0].cost.saving_ns, truth / 2);
  // ... and so do ranks on a GPU of the same number on hosts nobody named.
  for (RankHost& h : g.hosts) h.source = HostSource::kNone;
  EXPECT_FALSE(SharesGpu(g.ranks, g.hosts, 1));
}

TEST(GpuWorkCost, WorkOnTheHostKeepsItsPerStepCost) {
  Graph g(SimulatePipeline(DataParallel(1.0)));
  for (size_t i = 0; i < g.ranks.size(); ++i) g.ranks[i].gpu.devices = {static_cast<int32_t>(i)};
  std::vector<Finding> findings = {KernelFinding(4 * kMs, 1 * kMs, MeanStepNs(g.ranks))};
  findings[0].subject_kind = "cpu_op";
  const GpuWorkCostInput in{g.graph.get(), &g.replay, &g.ranks, &g.hosts, &g.rank_numbers, 0.5 * kMs};
  CostWorkOfGpuRanksByReplay(in, &findings);
  EXPECT_DOUBLE_EQ(findings[0].cost.saving_ns, 1 * kMs);
}

}  // namespace
}  // namespace rankscope

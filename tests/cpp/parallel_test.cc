// Parallel layout and the stage / peer findings (cluster/layout.h, cluster/parallel_findings.h)
// on inline summaries: every number is set here, so each rule's decision is known exactly.
#include <gtest/gtest.h>

#include "rankscope/base/student_t.h"
#include "rankscope/cluster/consistent_excess.h"
#include "rankscope/cluster/layout.h"
#include "rankscope/cluster/parallel_findings.h"

namespace rankscope {
namespace {

constexpr int64_t kMs = 1'000'000;

// A rank with `steps` steps of `step_ms`, of which `wait_ms` exposed communication.
RankSummary Rank(int64_t rank, std::vector<ProcessGroupRef> groups, std::vector<double> local_ms, double wait_ms = 10) {
  RankSummary r;
  r.rank.rank = rank;
  r.world_size = 4;
  r.pg_config = std::move(groups);
  int64_t t = 0;
  for (size_t i = 0; i < local_ms.size(); ++i) {
    StepSummary s;
    s.number = static_cast<int64_t>(i);
    s.start_ns = t;
    s.comm_exposed_ns = static_cast<int64_t>(wait_ms * kMs);
    s.end_ns = t + static_cast<int64_t>(local_ms[i] * kMs) + s.comm_exposed_ns;
    t = s.end_ns;
    r.steps.push_back(s);
  }
  return r;
}

// 2 stages x 2 data ranks, rank = dp + 2 * stage; groups named as pipeline_train.py names them.
std::vector<ProcessGroupRef> Groups(int64_t rank) {
  const int64_t dp = rank % 2, stage = rank / 2;
  return {{"0", "default_pg", "[0, 1, 2, 3]", 4},
          {std::to_string(1 + dp), "pp", dp == 0 ? "[0, 2]" : "[1, 3]", 2},
          {std::to_string(3 + stage), "dp", stage == 0 ? "[0, 1]" : "[2, 3]", 2}};
}

std::vector<RankMetrics> Metrics(const std::vector<RankSummary>& ranks) {
  std::vector<RankMetrics> m;
  for (const RankSummary& r : ranks) m.push_back(ComputeRankMetrics(r, true));
  return m;
}

std::vector<Finding> Find(const std::vector<RankSummary>& ranks, const JobLayout& layout) {
  const std::vector<RankMetrics> m = Metrics(ranks);
  return FindParallelProblems({&ranks, &m, &layout, OutlierRule{3.0, 0.10}, "step", 2 * kMs, {}}).findings;
}

TEST(Layout, ParsesSpecAndRejectsBadInput) {
  auto spec = ParseLayoutSpec("dp=2,pp=4,tp=2,order=tp-dp-cp-pp");
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(spec->dp, 2);
  EXPECT_EQ(spec->pp, 4);
  EXPECT_EQ(spec->order, (std::vector<std::string>{"tp", "dp", "cp", "pp"}));
  EXPECT_FALSE(ParseLayoutSpec("dp=0").ok());
  EXPECT_FALSE(ParseLayoutSpec("xx=2").ok());
  EXPECT_FALSE(ParseLayoutSpec("dp=2,order=tp-dp").ok());
  EXPECT_FALSE(ParseLayoutSpec("").ok());
}

TEST(Layout, FromSpecMegatronOrder) {
  std::vector<RankSummary> ranks;
  for (int64_t r = 0; r < 4; ++r) ranks.push_back(Rank(r, {}, {10, 10, 10}));
  LayoutSpec spec = *ParseLayoutSpec("dp=2,pp=2");
  const JobLayout l = InferLayout(ranks, &spec);
  EXPECT_EQ(l.source, "--layout");
  EXPECT_EQ(l.stages, 2);
  EXPECT_EQ(l.stage, (std::vector<int64_t>{0, 0, 1, 1}));
  EXPECT_EQ(l.data_index, (std::vector<int64_t>{0, 1, 0, 1}));
}

TEST(Layout, FromPgConfigDescriptions) {
  std::vector<RankSummary> ranks;
  for (int64_t r = 0; r < 4; ++r) ranks.push_back(Rank(r, Groups(r), {10, 10, 10}));
  const JobLayout l = InferLayout(ranks, nullptr);
  EXPECT_EQ(l.source, "traces");
  EXPECT_EQ(l.stages, 2);
  EXPECT_EQ(l.data_parallel, 2);
  EXPECT_EQ(l.stage, (std::vector<int64_t>{0, 0, 1, 1}));
  EXPECT_TRUE(l.notes.empty());
}

TEST(Layout, UntracedAndMissingGroupsAreSaid) {
  // Only ranks 0 and 2 traced: the groups name 1 and 3; the layout still holds for 0 and 2.
  std::vector<RankSummary> ranks = {Rank(0, Groups(0), {10}), Rank(2, Groups(2), {10})};
  const JobLayout l = InferLayout(ranks, nullptr);
  EXPECT_EQ(l.stage, (std::vector<int64_t>{0, 1}));
  EXPECT_FALSE(l.notes.empty());
  // No group information at all: one stage, and a note.
  std::vector<RankSummary> bare = {Rank(0, {}, {10}), Rank(1, {}, {10})};
  const JobLayout n = InferLayout(bare, nullptr);
  EXPECT_EQ(n.source, "none");
  EXPECT_EQ(n.stages, 1);
  EXPECT_EQ(n.notes.size(), 1u);
}

TEST(Layout, OverlappingPipelineGroupsAreDropped) {
  std::vector<RankSummary> ranks;
  for (int64_t r = 0; r < 4; ++r) {
    std::vector<ProcessGroupRef> g = Groups(r);
    g.push_back({"9", "pp", "[0, 1]", 2});  // contradicts [0, 2] for rank 0
    ranks.push_back(Rank(r, g, {10}));
  }
  const JobLayout l = InferLayout(ranks, nullptr);
  EXPECT_EQ(l.stage, (std::vector<int64_t>{0, 0, 1, 1}));
  EXPECT_FALSE(l.notes.empty());
}

TEST(ParallelFindings, SlowStage) {
  std::vector<RankSummary> ranks;
  for (int64_t r = 0; r < 4; ++r) ranks.push_back(Rank(r, Groups(r), r >= 2 ? std::vector<double>{40, 40, 40, 40} : std::vector<double>{20, 20, 20, 20}));
  const std::vector<Finding> f = Find(ranks, InferLayout(ranks, nullptr));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].kind, FindingKind::kSlowStage);
  EXPECT_EQ(f[0].ranks, (std::vector<int64_t>{2, 3}));
  EXPECT_DOUBLE_EQ(f[0].cost.saving_ns, 20.0 * kMs);  // no point-to-point data: factor 1
}

TEST(ParallelFindings, SlowWorkerWithinItsStage) {
  std::vector<RankSummary> ranks;
  for (int64_t r = 0; r < 4; ++r) ranks.push_back(Rank(r, Groups(r), r == 1 ? std::vector<double>{35, 35, 35, 35} : std::vector<double>{20, 20, 20, 20}));
  const std::vector<Finding> f = Find(ranks, InferLayout(ranks, nullptr));
  // Stage 0 as a whole (median 27.5 ms vs 20 ms) is also a slow stage; both are said.
  bool worker = false;
  for (const Finding& x : f) {
    if (x.kind == FindingKind::kSlowWorker) {
      worker = true;
      EXPECT_EQ(x.ranks, (std::vector<int64_t>{1}));
      EXPECT_DOUBLE_EQ(x.cost.saving_ns, 15.0 * kMs);
    }
  }
  EXPECT_TRUE(worker);
}

TEST(ParallelFindings, PerStepImbalanceNeedsAChangingSlowestRank) {
  std::vector<RankSummary> ranks;
  // Stage 0: ranks 0 and 1 alternate being 30 ms vs 20 ms; their medians are equal (25 ms).
  ranks.push_back(Rank(0, Groups(0), {30, 20, 30, 20}));
  ranks.push_back(Rank(1, Groups(1), {20, 30, 20, 30}));
  ranks.push_back(Rank(2, Groups(2), {25, 25, 25, 25}));
  ranks.push_back(Rank(3, Groups(3), {25, 25, 25, 25}));
  const std::vector<Finding> f = Find(ranks, InferLayout(ranks, nullptr));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].kind, FindingKind::kPerStepImbalance);
  EXPECT_EQ(f[0].ranks, (std::vector<int64_t>{0, 1}));
  EXPECT_DOUBLE_EQ(f[0].cost.saving_ns, 5.0 * kMs);  // max - median (the mean of two) per step
  // The same times, but always rank 0 slowest: a slow worker, not an imbalance.
  ranks[0] = Rank(0, Groups(0), {30, 30, 30, 30});
  ranks[1] = Rank(1, Groups(1), {20, 20, 20, 20});
  for (const Finding& x : Find(ranks, InferLayout(ranks, nullptr))) EXPECT_NE(x.kind, FindingKind::kPerStepImbalance);
}

// A straggler that the job-wide findings already name (ParallelInputs::stragglers) owns the steps
// it is the slowest in; the imbalance is judged on the rest. Stage 0: rank 0 is slowest in steps
// 0, 2, 4 (its own extra work), rank 1 in 1, 3 (noise on a shared GPU): without the straggler
// the alternation is an imbalance; with it, two steps are left, fewer than the three it needs.
// Four data ranks, no pipeline: rank 0 (the straggler) slowest in steps 0 and 2, ranks 1 and 2 in
// the other four, in turn: four steps left, still an imbalance.
TEST(ParallelFindings, AKnownStragglersStepsAreNotAnImbalance) {
  std::vector<RankSummary> ranks;
  ranks.push_back(Rank(0, Groups(0), {30, 20, 30, 20, 30}));
  ranks.push_back(Rank(1, Groups(1), {20, 30, 20, 30, 20}));
  ranks.push_back(Rank(2, Groups(2), {25, 25, 25, 25, 25}));
  ranks.push_back(Rank(3, Groups(3), {25, 25, 25, 25, 25}));
  const JobLayout layout = InferLayout(ranks, nullptr);
  const std::vector<RankMetrics> m = Metrics(ranks);
  auto kinds = [&](std::vector<int64_t> stragglers) {
    std::vector<FindingKind> out;
    for (const Finding& f :
         FindParallelProblems({&ranks, &m, &layout, OutlierRule{3.0, 0.10}, "step", 2 * kMs, stragglers}).findings) {
      out.push_back(f.kind);
    }
    return out;
  };
  EXPECT_EQ(kinds({}), (std::vector<FindingKind>{FindingKind::kPerStepImbalance}));
  EXPECT_EQ(kinds({0}), (std::vector<FindingKind>{}));
  EXPECT_EQ(kinds({2}), (std::vector<FindingKind>{FindingKind::kPerStepImbalance}));  // another stage's

  const std::vector<ProcessGroupRef> world = {{"0", "default_pg", "[0, 1, 2, 3]", 4}};
  std::vector<RankSummary> flat = {Rank(0, world, {30, 20, 30, 20, 20, 20}), Rank(1, world, {20, 30, 20, 20, 30, 20}),
                                   Rank(2, world, {20, 20, 20, 30, 20, 30}), Rank(3, world, {20, 20, 20, 20, 20, 20})};
  const JobLayout one_stage = InferLayout(flat, nullptr);
  const std::vector<RankMetrics> m6 = Metrics(flat);
  const std::vector<Finding> f =
      FindParallelProblems({&flat, &m6, &one_stage, OutlierRule{3.0, 0.10}, "step", 2 * kMs, {0}}).findings;
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].kind, FindingKind::kPerStepImbalance);
  const Evidence* e = f[0].FindEvidence(EvidenceKind::kStepImbalance);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->Get("steps"), 4);  // the straggler's two steps left out
  EXPECT_EQ(e->ranks, (std::vector<int64_t>{1, 2, 1, 2}));
}

// Where the slowest rank of each step spends its excess: four data ranks take turns waiting 12 ms
// longer for their batch. The phases hold the peers' waits too (their backward ends in the wait for
// the all-reduce), so only the slowest rank's excesses count: data loading, 12 ms per step.
TEST(ParallelFindings, AnImbalanceSaysWhichPhaseTheSlowestRankSpendsItsExcessIn) {
  const std::vector<ProcessGroupRef> world = {{"0", "default_pg", "[0, 1, 2, 3]", 4}};
  std::vector<RankSummary> ranks;
  for (int64_t r = 0; r < 4; ++r) {
    std::vector<double> local;
    for (int64_t s = 0; s < 8; ++s) local.push_back(s % 4 == r ? 32 : 20);
    ranks.push_back(Rank(r, world, local));
    for (size_t s = 0; s < 8; ++s) {
      StepSummary& st = ranks.back().steps[s];
      const bool slowest = static_cast<int64_t>(s % 4) == r;
      st.cpu_phase_ns[static_cast<int>(StepPhase::kDataLoading)] = (slowest ? 15 : 3) * kMs;
      st.cpu_phase_ns[static_cast<int>(StepPhase::kForward)] = 7 * kMs;
      st.cpu_phase_ns[static_cast<int>(StepPhase::kBackward)] = (slowest ? 10 : 22) * kMs;  // peers wait here
      st.cpu_phase_ns[static_cast<int>(StepPhase::kOther)] = st.duration_ns() - 32 * kMs;  // 32 ms above, each
    }
  }
  const std::vector<Finding> f = Find(ranks, InferLayout(ranks, nullptr));
  ASSERT_EQ(f.size(), 1u);
  ASSERT_EQ(f[0].kind, FindingKind::kPerStepImbalance);
  const Evidence* e = f[0].FindEvidence(EvidenceKind::kStepImbalance);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->detail, "data_loading");
  EXPECT_DOUBLE_EQ(e->Get("excess_data_loading_ns"), 12.0 * kMs);
  EXPECT_DOUBLE_EQ(e->Get("excess_backward_ns"), 0);
  // Spent in forward (more tokens on that rank): no phase outside the model's work.
  for (RankSummary& r : ranks) {
    for (size_t s = 0; s < 8; ++s) {
      StepSummary& st = r.steps[s];
      const bool slowest = static_cast<int64_t>(s % 4) == r.rank.rank;
      st.cpu_phase_ns[static_cast<int>(StepPhase::kDataLoading)] = 3 * kMs;
      st.cpu_phase_ns[static_cast<int>(StepPhase::kForward)] = (slowest ? 19 : 7) * kMs;
    }
  }
  const std::vector<Finding> g = Find(ranks, InferLayout(ranks, nullptr));
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].FindEvidence(EvidenceKind::kStepImbalance)->detail, "forward");
}

// Stage 0's rank 0 has the larger median (40 vs 25 ms) but is faster than rank 1 in two of six
// steps: its median comes from the steps' draws (variable batch lengths on two data ranks), so it
// is a per-step imbalance, not a slow worker. Slower in every step but one, it is a slow worker.
TEST(ParallelFindings, ASlowerMedianFromTheStepsDrawsIsAnImbalanceNotASlowWorker) {
  std::vector<RankSummary> ranks;
  ranks.push_back(Rank(0, Groups(0), {40, 40, 40, 20, 20, 40}));
  ranks.push_back(Rank(1, Groups(1), {20, 20, 30, 30, 30, 20}));
  ranks.push_back(Rank(2, Groups(2), {30, 30, 30, 30, 30, 30}));
  ranks.push_back(Rank(3, Groups(3), {30, 30, 30, 30, 30, 30}));
  std::vector<FindingKind> kinds;
  for (const Finding& x : Find(ranks, InferLayout(ranks, nullptr))) {
    kinds.push_back(x.kind);
    if (x.kind == FindingKind::kPerStepImbalance) EXPECT_EQ(x.ranks, (std::vector<int64_t>{0, 1}));
  }
  EXPECT_NE(std::find(kinds.begin(), kinds.end(), FindingKind::kPerStepImbalance), kinds.end());
  EXPECT_EQ(std::find(kinds.begin(), kinds.end(), FindingKind::kSlowWorker), kinds.end());

  ranks[0] = Rank(0, Groups(0), {40, 40, 40, 40, 20, 40});  // faster in one step only
  ranks[1] = Rank(1, Groups(1), {20, 20, 25, 25, 30, 20});  // excess 20 20 15 15 -10 20: t = 2.79 > 2.571
  kinds.clear();
  for (const Finding& x : Find(ranks, InferLayout(ranks, nullptr))) {
    kinds.push_back(x.kind);
    if (x.kind == FindingKind::kSlowWorker) {
      EXPECT_EQ(x.ranks, (std::vector<int64_t>{0}));
      const Evidence* e = x.FindEvidence(EvidenceKind::kLocalTime);
      ASSERT_NE(e, nullptr);
      EXPECT_EQ(e->Get("slower_steps"), 5);
      EXPECT_EQ(e->Get("steps"), 6);
    }
  }
  EXPECT_NE(std::find(kinds.begin(), kinds.end(), FindingKind::kSlowWorker), kinds.end());
  EXPECT_EQ(std::find(kinds.begin(), kinds.end(), FindingKind::kPerStepImbalance), kinds.end());
}

// A recorded 2 x 2 pipeline whose every data rank computes a random share of its batch each step
// (bench/accuracy/pipeline_accuracy.py, imbalance-all, 4 profiled steps; local ms per step). Rank 1
// is slower than rank 0 in three of the four steps — a slow worker by the count of steps, and it
// was reported as one — but by 33.6, 21.4, -1.2 and 14.4 ms: t = 2.34 with 3 degrees of freedom,
// well inside what the draws make (3.18). Stage 1's slowest rank changes (3 2 2 3): an imbalance.
TEST(ParallelFindings, FourStepsOfRandomDrawsAreNotASlowWorker) {
  std::vector<RankSummary> ranks;
  ranks.push_back(Rank(0, Groups(0), {40.8, 56.9, 49.6, 54.5}));
  ranks.push_back(Rank(1, Groups(1), {74.4, 78.3, 48.4, 68.9}));
  ranks.push_back(Rank(2, Groups(2), {55.6, 74.0, 57.6, 54.3}));
  ranks.push_back(Rank(3, Groups(3), {66.6, 71.5, 46.8, 71.6}));
  std::vector<FindingKind> kinds;
  for (const Finding& x : Find(ranks, InferLayout(ranks, nullptr))) {
    kinds.push_back(x.kind);
    if (x.kind == FindingKind::kPerStepImbalance) EXPECT_EQ(x.ranks, (std::vector<int64_t>{2, 3}));
  }
  EXPECT_EQ(std::find(kinds.begin(), kinds.end(), FindingKind::kSlowWorker), kinds.end());
  EXPECT_NE(std::find(kinds.begin(), kinds.end(), FindingKind::kPerStepImbalance), kinds.end());

  // The same stage with a steady excess (slower by 14-22 ms in every step): a slow worker.
  ranks[1] = Rank(1, Groups(1), {60.8, 71.9, 71.6, 70.5});
  kinds.clear();
  for (const Finding& x : Find(ranks, InferLayout(ranks, nullptr))) {
    kinds.push_back(x.kind);
    if (x.kind == FindingKind::kSlowWorker) {
      EXPECT_EQ(x.ranks, (std::vector<int64_t>{1}));
      const Evidence* e = x.FindEvidence(EvidenceKind::kLocalTime);
      ASSERT_NE(e, nullptr);
      EXPECT_GT(e->Get("step_excess_t"), e->Get("t_critical"));
    }
  }
  EXPECT_NE(std::find(kinds.begin(), kinds.end(), FindingKind::kSlowWorker), kinds.end());
}

TEST(ConsistentExcess, StudentsTAgainstZero) {
  EXPECT_DOUBLE_EQ(StudentT975(3), 3.182);
  EXPECT_DOUBLE_EQ(StudentT975(11), 2.228);  // between 10 and 12: the larger quantile
  EXPECT_DOUBLE_EQ(StudentT975(1000), 1.960);
  const ConsistentExcess draws = TestConsistentExcess({33.6, 21.4, -1.2, 14.4});
  EXPECT_NEAR(draws.t, 2.34, 0.01);
  EXPECT_FALSE(draws.consistent);
  EXPECT_TRUE(TestConsistentExcess({20, 21, 19, 20}).consistent);
  EXPECT_TRUE(TestConsistentExcess({5, 5, 5}).consistent);  // no variation at all
  EXPECT_FALSE(TestConsistentExcess({-5, -5, -5}).consistent);
  EXPECT_FALSE(TestConsistentExcess({10}).consistent);  // one step: nothing to test against
}

}  // namespace
}  // namespace rankscope

// The per-step stages of cluster diagnosis on hand-built step tables whose answers are known:
// the significance test (significance.h), the per-step what-if (cost_model.h) and slow hosts
// (host_outliers.h), then end to end through DiagnoseCluster.
#include <gtest/gtest.h>

#include <algorithm>

#include "rankscope/cluster/cluster_diagnosis.h"
#include "rankscope/cluster/cost_model.h"
#include "rankscope/cluster/host_outliers.h"
#include "rankscope/cluster/replay_bound.h"
#include "rankscope/cluster/robust_rule.h"
#include "rankscope/cluster/significance.h"
#include "rankscope/cluster/step_series.h"
#include "rankscope/report/finding_text.h"

namespace rankscope {
namespace {

constexpr double kMs = 1e6;

// Local times [rank][step]: 100 ms, plus a deterministic wobble per rank and step of up to 2 ms.
StepSeries Series(size_t ranks, size_t steps) {
  StepSeries s;
  for (size_t i = 0; i < steps; ++i) s.numbers.push_back(static_cast<int64_t>(i));
  s.local_ns.assign(ranks, std::vector<double>(steps, 0));
  s.cpu_phase_ns.assign(ranks, std::vector<PhaseValues>(steps, PhaseValues{}));
  s.gpu_phase_ns = s.cpu_phase_ns;
  for (size_t r = 0; r < ranks; ++r) {
    for (size_t i = 0; i < steps; ++i) {
      const double wobble = static_cast<double>((r * 7 + i * 3) % 5) * 0.5 * kMs;
      s.local_ns[r][i] = 100 * kMs + wobble;
      s.cpu_phase_ns[r][i][static_cast<int>(StepPhase::kForward)] = 40 * kMs + wobble;
    }
  }
  return s;
}

std::vector<bool> Only(size_t n, std::vector<uint32_t> members) {
  std::vector<bool> g(n, false);
  for (uint32_t r : members) g[r] = true;
  return g;
}

TEST(StepSignificance, AnExcessInEveryStepCountsAFewLongStepsDoNot) {
  StepSeries s = Series(6, 8);
  for (size_t i = 0; i < 8; ++i) s.local_ns[2][i] += 10 * kMs;       // the fault: every step
  for (size_t i : {1, 4, 6}) s.local_ns[4][i] += 40 * kMs;            // noise: three long steps
  const StepSignificance fault = TestStepExcess(s.local_ns, Only(6, {2}));
  EXPECT_TRUE(fault.significant);
  EXPECT_EQ(fault.exceeding, 8u);
  EXPECT_NEAR(fault.median_excess_ns, 10 * kMs, 2 * kMs);
  const StepSignificance noise = TestStepExcess(s.local_ns, Only(6, {4}));
  EXPECT_FALSE(noise.significant);
  EXPECT_EQ(noise.exceeding, 3u);
  EXPECT_FALSE(TestStepExcess(s.local_ns, Only(6, {0})).significant);  // a healthy rank
  EXPECT_FALSE(TestStepExcess(s.local_ns, std::vector<bool>(6, true)).significant);  // no peers
}

TEST(StepSignificance, DropsAPhaseOutlierOfAFewStepsAndASlowRankOfAFewSteps) {
  StepSeries s = Series(4, 8);
  for (size_t i = 0; i < 8; ++i) s.cpu_phase_ns[1][i][static_cast<int>(StepPhase::kForward)] += 10 * kMs;
  for (size_t i : {0, 5}) s.cpu_phase_ns[3][i][static_cast<int>(StepPhase::kForward)] += 60 * kMs;
  for (size_t i : {2, 3}) s.local_ns[3][i] += 60 * kMs;
  std::vector<PhaseOutlier> phases = {{StepPhase::kForward, false, 1, 50 * kMs, 40 * kMs, 1 * kMs, 10 * kMs},
                                      {StepPhase::kForward, false, 3, 55 * kMs, 40 * kMs, 1 * kMs, 15 * kMs}};
  SlowRankAnalysis slow;
  slow.slow = {false, false, false, true};
  slow.excess_ns = {0, 0, 0, 15 * kMs};
  std::vector<RankHost> hosts(4, {"h", HostSource::kTrace});
  slow.groups = GroupSlowRanks(slow, hosts);
  ASSERT_EQ(slow.groups.size(), 1u);
  ApplyStepSignificance(s, hosts, &slow, &phases);
  ASSERT_EQ(phases.size(), 1u);
  EXPECT_EQ(phases[0].rank, 1u);
  EXPECT_FALSE(slow.slow[3]);
  EXPECT_TRUE(slow.groups.empty());
}

// The fast paths for thousands of ranks give exactly the numbers of the direct computations
// they replace (the reports must not change by a bit): ties, negative values, a group of equal
// values, groups of one and of all but one, tables with a short row.
TEST(StepSignificance, TheTesterOfManyGroupsGivesExactlyTheDirectNumbers) {
  std::vector<std::vector<double>> values(23);
  for (size_t r = 0; r < values.size(); ++r) {
    for (size_t s = 0; s < 7; ++s) {
      // few distinct values (ties), some negative, one rank much slower
      values[r].push_back(static_cast<double>((r * 5 + s * 3) % 6) * 0.25 * kMs - (r == 4 ? 0.5 * kMs : 0) +
                          (r == 17 ? 30 * kMs : 0));
    }
  }
  values[9].pop_back();  // a short row reads as 0 in that step
  const StepExcessTester tester(values);
  std::vector<std::vector<uint32_t>> groups = {{0}, {17}, {4}, {16, 17, 18}, {0, 1, 2, 3, 4, 5, 6, 7}, {9, 10}};
  std::vector<uint32_t> all_but_one;
  for (uint32_t r = 0; r + 1 < values.size(); ++r) all_but_one.push_back(r);
  groups.push_back(all_but_one);
  for (const std::vector<uint32_t>& members : groups) {
    const std::vector<bool> group = Only(values.size(), members);
    const StepSignificance direct = TestStepExcess(values, group), fast = tester.Test(members);
    EXPECT_EQ(fast.steps, direct.steps);
    EXPECT_EQ(fast.exceeding, direct.exceeding);
    EXPECT_EQ(fast.median_excess_ns, direct.median_excess_ns);
    EXPECT_EQ(fast.significant, direct.significant);
    for (size_t s = 0; s < 7; ++s) {
      const PeerBand a = PeersOf(StepColumn(values, s), group), b = tester.Peers(s, members);
      EXPECT_EQ(b.count, a.count);
      EXPECT_EQ(b.median, a.median);
      EXPECT_EQ(b.iqr, a.iqr);
    }
  }
}

TEST(RobustRule, LeaveOneOutStatsAreExactlyTheStatsOfTheOthers) {
  for (size_t n : {1, 2, 3, 4, 5, 8, 9, 40, 41}) {
    std::vector<double> values;
    for (size_t i = 0; i < n; ++i) values.push_back(static_cast<double>((i * 7919) % 13) * 1.5 - 4 + (i == 3 ? 100 : 0));
    LeaveOneOutStats loo(values);
    for (size_t i = 0; i < n; ++i) {
      std::vector<double> others = values;
      others.erase(others.begin() + static_cast<std::ptrdiff_t>(i));
      const RobustStats direct = ComputeRobustStats(others), fast = loo.Without(values[i]);
      EXPECT_EQ(fast.count, direct.count) << n << " " << i;
      EXPECT_EQ(fast.median, direct.median) << n << " " << i;
      EXPECT_EQ(fast.mad, direct.mad) << n << " " << i;
    }
  }
}

TEST(RobustRule, TheMedianWithoutSomeValuesIsExactlyTheMedianOfTheRest) {
  std::vector<double> values;
  for (size_t i = 0; i < 30; ++i) values.push_back(static_cast<double>((i * 7919) % 11) * 0.75 - 2 + (i == 5 ? 50 : 0));
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  const std::vector<std::vector<size_t>> removals = {{}, {0}, {5}, {1, 2}, {3, 14, 25}, {0, 11, 22, 3, 4, 5, 6, 7}};
  for (const std::vector<size_t>& removal : removals) {
    std::vector<double> removed, rest;
    for (size_t i = 0; i < values.size(); ++i) {
      (std::find(removal.begin(), removal.end(), i) != removal.end() ? removed : rest).push_back(values[i]);
    }
    EXPECT_EQ(MedianWithout(sorted, removed), ComputeRobustStats(rest).median) << removal.size();
  }
}

TEST(CostModel, TheSavingIsRecomputedThroughEachStepsSlowestRank) {
  StepSeries s;
  s.numbers = {0, 1, 2, 3};
  // Rank 0 does 10 ms of extra work every step; rank 1 is slower than rank 0's healthy time in
  // steps 2 and 3 (by 4 ms), so fixing rank 0 saves 10 ms in steps 0-1 and 6 ms in steps 2-3.
  s.local_ns = {{110 * kMs, 110 * kMs, 110 * kMs, 110 * kMs},
                {100 * kMs, 100 * kMs, 104 * kMs, 104 * kMs},
                {100 * kMs, 100 * kMs, 100 * kMs, 100 * kMs}};
  const WhatIf w = WhatIfByStep(s, WithoutExcess(s, 0, 10 * kMs), 130 * kMs);
  EXPECT_DOUBLE_EQ(w.saving_ns, 8 * kMs);
  EXPECT_DOUBLE_EQ(w.estimated_step_ns, 122 * kMs);
  // Like its peers: rank 0 at the peers' median (102 ms in steps 2-3).
  EXPECT_DOUBLE_EQ(WhatIfByStep(s, LikePeers(s, Only(3, {0})), 130 * kMs).saving_ns, 8 * kMs);
  // A rank that never sets the pace saves nothing.
  EXPECT_DOUBLE_EQ(WhatIfByStep(s, WithoutExcess(s, 2, 5 * kMs), 130 * kMs).saving_ns, 0);
}

Finding ExtraWork(int64_t rank, double added_ns) {
  Finding f;
  f.kind = FindingKind::kExtraWork;
  f.severity = Severity::kInfo;
  f.ranks = {rank};
  f.subject = "ground_truth.py(126): run";
  f.subject_kind = "python_path";
  f.cost.method = CostMethod::kAddedWork;
  f.cost.added_ns = added_ns;
  return f;
}

TEST(CostModel, ExtraWorkIsCostedWhenItsPeersWaitAndStaysUncostedOtherwise) {
  StepSeries s = Series(4, 6);
  for (size_t i = 0; i < 6; ++i) s.local_ns[3][i] += 10 * kMs;
  std::vector<Finding> findings = {ExtraWork(0, 6 * kMs), ExtraWork(13, 10 * kMs)};
  CostExtraWork(s, ArrivalAnalysis{}, {10, 11, 12, 13}, 120 * kMs, 2 * kMs, &findings);
  EXPECT_EQ(findings[0].cost.method, CostMethod::kAddedWork);  // rank 10 does not set the pace
  EXPECT_EQ(findings[0].cost.saving_ns, 0);
  EXPECT_EQ(findings[1].cost.method, CostMethod::kWhatIfFaster);
  EXPECT_GT(findings[1].cost.saving_ns, 8 * kMs);
  EXPECT_LE(findings[1].cost.saving_ns, 10 * kMs);
  EXPECT_EQ(findings[1].severity, Severity::kWarning);
  ASSERT_NE(findings[1].FindEvidence(EvidenceKind::kWhatIf), nullptr);
  EXPECT_EQ(findings[1].FindEvidence(EvidenceKind::kWhatIf)->detail, "per_step");
}

// Rank 3 (rank number 13) of `s` 18 ms slower in `steps`.
StepSeries WithStall(StepSeries s, const std::vector<size_t>& steps) {
  for (size_t i : steps) s.local_ns[3][i] += 18 * kMs;
  return s;
}

// The per-step cost CostExtraWork gives an extra_work finding of `added_ns` per step on rank 13.
double ExtraWorkCostOnRank3(const StepSeries& s, double added_ns) {
  std::vector<Finding> findings = {ExtraWork(13, added_ns)};
  CostExtraWork(s, ArrivalAnalysis{}, {10, 11, 12, 13}, 120 * kMs, 2 * kMs, &findings);
  return findings[0].cost.saving_ns;
}

TEST(CostModel, AFunctionCalledInSomeStepsIsCostedInThoseSteps) {
  // Rank 3 stalls 60 ms every fourth step (steps 0, 4, 8 of 10: a checkpoint, a sleep): its
  // function finding says 18 ms per step, 0.3 calls per step. Spread over every step, 18 ms less
  // leaves rank 3 the slowest by 42 ms in its stall steps and saves 3 x 18 / 10 = 5.4 ms; put in
  // the three steps where rank 3 exceeds its peers the most, it saves about 60 ms in each.
  StepSeries s = Series(4, 10);
  for (size_t i : {0u, 4u, 8u}) s.local_ns[3][i] += 60 * kMs;
  Finding f = ExtraWork(13, 18 * kMs);
  Evidence e;
  e.kind = EvidenceKind::kFunction;
  e.rank = 13;
  e.subject = f.subject;
  e.Set("calls", 0.3).Set("median_calls", 0).Set("excess_ns", 18 * kMs);
  f.evidence.push_back(e);
  std::vector<Finding> findings = {f};
  CostExtraWork(s, ArrivalAnalysis{}, {10, 11, 12, 13}, 120 * kMs, 2 * kMs, &findings);
  EXPECT_EQ(findings[0].cost.method, CostMethod::kWhatIfFaster);
  EXPECT_GT(findings[0].cost.saving_ns, 17 * kMs);  // 3 x ~59 ms / 10 (the wobble moves the peers)
  EXPECT_LE(findings[0].cost.saving_ns, 18 * kMs);
  const StepTable after = WithoutIntermittentExcess(s, 3, 18 * kMs, 3);
  for (size_t i = 0; i < 10; ++i) {
    if (i % 4 == 0) {
      EXPECT_LE(after[3][i], 102 * kMs) << i;  // the stall removed, down to about its peers
    } else {
      EXPECT_EQ(after[3][i], s.local_ns[3][i]) << i;  // the other steps untouched
    }
  }
  // Without a call count (or called several times in the stall steps: a checkpoint saving eight
  // tensors every fourth step), the rank's steps show where the excess is: the same cost.
  EXPECT_GT(ExtraWorkCostOnRank3(s, 18 * kMs), 17 * kMs);
  EXPECT_LE(ExtraWorkCostOnRank3(s, 18 * kMs), 18 * kMs);
  // Work in every step is taken from every step: the cost of the excess spread evenly.
  const StepSeries every = WithStall(Series(4, 10), {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  EXPECT_DOUBLE_EQ(ExtraWorkCostOnRank3(every, 18 * kMs),
                   WhatIfByStep(every, WithoutExcess(every, 3, 18 * kMs), 120 * kMs).saving_ns);
  // Every other step: costed in those steps (9 ms per step, not the 4.5 that spreading gives).
  EXPECT_GT(ExtraWorkCostOnRank3(WithStall(Series(4, 10), {0, 2, 4, 6, 8}), 9 * kMs), 8 * kMs);
  // In 7 of 10 steps: more than half the steps, spread as work in most steps is (the side that a
  // noisy excess in every step falls on: no cost of such a fault changes).
  const StepSeries most = WithStall(Series(4, 10), {0, 1, 2, 3, 4, 5, 6});
  EXPECT_DOUBLE_EQ(ExtraWorkCostOnRank3(most, 12.6 * kMs),
                   WhatIfByStep(most, WithoutExcess(most, 3, 12.6 * kMs), 120 * kMs).saving_ns);
}

// The finding carries the step-by-step what-if evidence (SetPerStepCost's).
void ExpectPerStepWhatIf(const Finding& f) {
  const Evidence* per_step = f.FindEvidence(EvidenceKind::kWhatIf);
  ASSERT_NE(per_step, nullptr);
  EXPECT_EQ(per_step->detail, "per_step");
}

// A slow_function finding as the median what-if costs it (findings.cc): `saving_ns` from the
// ranks' median local times, which a stall in a few steps seldom moves.
Finding SlowFunction(int64_t rank, double added_ns, double calls, double saving_ns) {
  Finding f = ExtraWork(rank, added_ns);
  f.kind = FindingKind::kSlowFunction;
  f.severity = Severity::kWarning;
  f.subject = "probe.py(43): <module>|probe.py(23): hiccup|<built-in function sleep>";
  f.cost.method = CostMethod::kWhatIfFaster;
  f.cost.saving_ns = saving_ns;
  f.cost.step_ns = 120 * kMs;
  f.cost.estimated_step_ns = 120 * kMs - saving_ns;
  Evidence e;
  e.kind = EvidenceKind::kFunction;
  e.rank = rank;
  e.subject = f.subject;
  e.Set("calls", calls).Set("excess_ns", added_ns);
  f.evidence.push_back(e);
  return f;
}

TEST(CostModel, ASlowFunctionOfAFewStepsIsCostedInThoseSteps) {
  // Rank 3 sleeps 60 ms in steps 0, 4 and 8 of 10: 18 ms per step over its median rank, which
  // the median what-if takes off rank 3's median step (4 ms saved, say). In its own steps the
  // stall sets the pace: about 3 x 58 ms / 10.
  StepSeries s = Series(4, 10);
  for (size_t i : {0u, 4u, 8u}) s.local_ns[3][i] += 60 * kMs;
  for (size_t i : {1u, 5u}) s.local_ns[2][i] += 15 * kMs;  // rank 12: long in two steps
  std::vector<Finding> findings = {SlowFunction(13, 18 * kMs, 0.3, 4 * kMs),
                                   SlowFunction(12, 3 * kMs, 1.0, 2.5 * kMs)};
  CostSlowFunctionsByStep(s, {10, 11, 12, 13}, 120 * kMs, 2 * kMs, &findings);
  EXPECT_GT(findings[0].cost.saving_ns, 17 * kMs);
  EXPECT_LE(findings[0].cost.saving_ns, 18 * kMs);
  EXPECT_EQ(findings[0].severity, Severity::kCritical);
  ExpectPerStepWhatIf(findings[0]);
  // A function the peers run too, called in every step, loses its excess in every step, not in the
  // few steps where its rank is long (rank 12: as likely the noise of a small excess): 3 ms off
  // steps 1 and 5, where rank 12 sets the pace, is 0.6 ms/step; the median what-if said 2.5, the
  // two long steps alone would say 3. Below the minimum cost (2 ms) it stays, as information.
  EXPECT_DOUBLE_EQ(findings[1].cost.saving_ns, 0.6 * kMs);
  EXPECT_EQ(findings[1].severity, Severity::kInfo);
  ASSERT_NE(findings[1].FindEvidence(EvidenceKind::kWhatIf), nullptr);
}

TEST(CostModel, AFunctionSlowerInEveryStepCostsTheStepsWhereItsRankArrivesLast) {
  // Rank 12's function is 10 ms slower in every step; the median what-if takes the 10 ms off its
  // median step. Rank 11 is 15 ms slower in the odd steps for reasons of its own: there the job
  // waits for rank 11 with or without the fix, so fixing rank 12 saves about 10 ms in half the
  // steps. On 6 ranks of a busy host a 5 % fault (4 ms) was costed 3.7-4.5 ms/step the median way
  // and saved 1.4-3.2 ms measured (docs/cluster.md, "Accuracy", round 16).
  StepSeries s = Series(4, 10);
  for (size_t i = 0; i < 10; ++i) s.local_ns[2][i] += 10 * kMs;
  for (size_t i = 1; i < 10; i += 2) s.local_ns[1][i] += 15 * kMs;
  std::vector<Finding> findings = {SlowFunction(12, 10 * kMs, 1.0, 10 * kMs)};
  CostSlowFunctionsByStep(s, {10, 11, 12, 13}, 110 * kMs, 2 * kMs, &findings);
  EXPECT_GT(findings[0].cost.saving_ns, 4 * kMs);
  EXPECT_LT(findings[0].cost.saving_ns, 5.5 * kMs);
  EXPECT_EQ(findings[0].severity, Severity::kWarning);
  ExpectPerStepWhatIf(findings[0]);
}

TEST(CostModel, FixingEveryFindingAtOnceSavesWhatNoneSavesAlone) {
  // Ranks 1 and 3 each do 20 ms of extra work every step: fixing either leaves the other setting
  // the pace (a saving within the peers' wobble), fixing both saves about the 20 ms.
  StepSeries s = Series(4, 8);
  for (uint32_t r : {1u, 3u}) {
    for (size_t i = 0; i < 8; ++i) s.local_ns[r][i] += 20 * kMs;
  }
  std::vector<Finding> findings = {ExtraWork(11, 20 * kMs), ExtraWork(13, 20 * kMs)};
  for (Finding& f : findings) {
    f.cost.method = CostMethod::kWhatIfFaster;
    f.cost.saving_ns = 1 * kMs;  // as CostExtraWork leaves it: each alone saves little
  }
  const std::vector<int64_t> ranks = {10, 11, 12, 13};
  for (const Finding& f : findings) {
    EXPECT_LT(WhatIfByStep(s, WithoutExcess(s, static_cast<uint32_t>(f.ranks.front() - 10), 20 * kMs), 140 * kMs)
                  .saving_ns, 2 * kMs);
  }
  const CombinedWhatIf all = WhatIfAllFindings(s, ranks, 140 * kMs, findings);
  EXPECT_EQ(all.findings, 2u);
  EXPECT_EQ(all.ranks, (std::vector<int64_t>{11, 13}));
  EXPECT_GT(all.what_if.saving_ns, 18 * kMs);
  EXPECT_LE(all.what_if.saving_ns, 20 * kMs);
  EXPECT_DOUBLE_EQ(all.what_if.estimated_step_ns, 140 * kMs - all.what_if.saving_ns);

  // A slow rank like its peers and an extra_work finding no peer measurably waits for alone
  // (uncosted, work added): fixed together they save the 20 ms.
  Finding slow;
  slow.kind = FindingKind::kSlowRank;
  slow.ranks = {11};
  slow.cost.method = CostMethod::kWhatIfLikeMedian;
  slow.cost.saving_ns = 1 * kMs;
  const Finding uncosted = ExtraWork(13, 20 * kMs);
  const CombinedWhatIf with_uncosted = WhatIfAllFindings(s, ranks, 140 * kMs, {slow, uncosted});
  EXPECT_EQ(with_uncosted.findings, 2u);
  EXPECT_GT(with_uncosted.what_if.saving_ns, 18 * kMs);
  // Neither a cost nor added work (a slow rank the rules left uncosted): not counted.
  Finding uncosted_slow = slow;
  uncosted_slow.cost.saving_ns = 0;
  EXPECT_EQ(WhatIfAllFindings(s, ranks, 140 * kMs, {uncosted_slow, uncosted}).findings, 1u);
  // Two findings about the same rank: their excesses add (down to the unnamed ranks' median).
  const CombinedWhatIf same = WhatIfAllFindings(s, ranks, 140 * kMs, {findings[1], findings[1]});
  EXPECT_EQ(same.findings, 2u);
  EXPECT_LE(same.what_if.saving_ns, 1 * kMs);  // rank 11 still sets the pace
  // A call path and one inside it (torch.save and the records it writes): the inner one's time is
  // in the outer one's, not added to it (rank 13 does 40 ms more; the findings say 20 and 12 ms).
  StepSeries heavy = Series(4, 8);
  for (size_t i = 0; i < 8; ++i) heavy.local_ns[3][i] += 40 * kMs;
  Finding outer = ExtraWork(13, 20 * kMs), inner = ExtraWork(13, 12 * kMs);
  outer.subject = "train.py(9): <module>|serialization.py(944): save";
  inner.subject = outer.subject + "|<write_record>";
  const CombinedWhatIf nested = WhatIfAllFindings(heavy, ranks, 140 * kMs, {outer, inner});
  EXPECT_EQ(nested.findings, 2u);
  EXPECT_DOUBLE_EQ(nested.what_if.saving_ns, WhatIfAllFindings(heavy, ranks, 140 * kMs, {outer}).what_if.saving_ns);
  EXPECT_LE(nested.what_if.saving_ns, 20 * kMs);
  // No steps: nothing.
  EXPECT_EQ(WhatIfAllFindings(StepSeries{}, ranks, 140 * kMs, findings).findings, 0u);
}

TEST(ReplayBound, ARankOutrunsItsPeersStepOnlyWhenItsOwnTimeIsLongerThanTheirWholeStep) {
  // Four ranks, 8 steps of 130 ms (100 ms local + 30 ms of communication). Rank 3 stalls 60 ms
  // after the step's last collective in steps 2 and 5: its peers ran on into their next step,
  // whose duration holds the wait; rank 3's local time (160 ms) is longer than their whole step.
  StepSeries s = Series(4, 8);
  s.step_ns.assign(8, 130 * kMs);
  EXPECT_FALSE(OutrunsPeersSteps(s, {0, 1, 2, 3}));
  EXPECT_DOUBLE_EQ(MeanStepNs(s), 130 * kMs);
  s.local_ns[3][2] += 60 * kMs;
  s.local_ns[3][5] += 60 * kMs;
  s.step_ns[3] += 60 * kMs;  // the peers' next steps
  s.step_ns[6] += 60 * kMs;
  EXPECT_TRUE(OutrunsPeersSteps(s, {3}));
  EXPECT_FALSE(OutrunsPeersSteps(s, {0, 1, 2}));
  EXPECT_DOUBLE_EQ(MeanStepNs(s), 145 * kMs);  // the stalls are in the mean, not in the median step
  // A straggler slower in every step by 20 % of its local time stays within its own step.
  StepSeries slow = Series(4, 8);
  slow.step_ns.assign(8, 150 * kMs);
  for (double& local : slow.local_ns[1]) local += 20 * kMs;
  EXPECT_FALSE(OutrunsPeersSteps(slow, {1}));
}

TEST(SlowHosts, TwoRanksOfAHostSlowTogetherAreANodeEvenWhenTheyAreHalfTheJob) {
  StepSeries s = Series(4, 8);
  for (uint32_t r : {2u, 3u}) {
    for (size_t i = 0; i < 8; ++i) s.local_ns[r][i] += 8 * kMs;
  }
  std::vector<RankHost> hosts = {{"a", HostSource::kHostMap}, {"a", HostSource::kHostMap},
                                 {"b", HostSource::kHostMap}, {"b", HostSource::kHostMap}};
  const std::vector<SlowHost> slow = FindSlowHosts(s, hosts, 2 * kMs, 0.05);
  ASSERT_EQ(slow.size(), 1u);
  EXPECT_EQ(slow[0].host, "b");
  EXPECT_EQ(slow[0].ranks, (std::vector<uint32_t>{2, 3}));
  // Only one rank of the host is slow: not a node.
  StepSeries one = Series(4, 8);
  for (size_t i = 0; i < 8; ++i) one.local_ns[3][i] += 8 * kMs;
  EXPECT_TRUE(FindSlowHosts(one, hosts, 2 * kMs, 0.05).empty());
  // No host known: every rank is its own host, never a node.
  std::vector<RankHost> none(4, {"", HostSource::kNone});
  EXPECT_TRUE(FindSlowHosts(s, none, 2 * kMs, 0.05).empty());
  // Below the minimum excess, or below the margin (10 % of the other hosts' 101 ms): nothing.
  EXPECT_TRUE(FindSlowHosts(s, hosts, 20 * kMs, 0.05).empty());
  EXPECT_TRUE(FindSlowHosts(s, hosts, 2 * kMs, 0.10).empty());
  // One rank slowed much more than the other: a slow rank beside a noisy one, not a node.
  StepSeries uneven = Series(4, 8);
  for (size_t i = 0; i < 8; ++i) {
    uneven.local_ns[2][i] += 20 * kMs;
    uneven.local_ns[3][i] += 6 * kMs;
  }
  EXPECT_TRUE(FindSlowHosts(uneven, hosts, 2 * kMs, 0.05).empty());
}

// One function's samples: per rank index, (calls per step, ms per step).
FunctionSamples Samples(std::string name, std::vector<std::pair<double, double>> per_rank, bool wait = false) {
  FunctionSamples f;
  f.kind = FunctionKind::kPythonPath;
  f.name = std::move(name);
  f.wait = wait;
  for (uint32_t r = 0; r < per_rank.size(); ++r) {
    f.samples.push_back({r, per_rank[r].second * kMs, per_rank[r].first, 0});
  }
  return f;
}

TEST(SlowHosts, AHostWhoseEveryRankDoesWorkNoOtherRankDoesIsANode) {
  const std::vector<RankHost> hosts = {{"a", HostSource::kHostMap}, {"a", HostSource::kHostMap},
                                       {"b", HostSource::kHostMap}, {"b", HostSource::kHostMap},
                                       {"c", HostSource::kHostMap}, {"c", HostSource::kHostMap}};
  // Both ranks of host b call a hook once per step (6 and 7 ms); nobody else calls it. Their
  // caller is slower too, with the same calls everywhere: the hook names the node.
  const std::vector<FunctionSamples> node = {
      Samples("step|forward", {{1, 20}, {1, 21}, {1, 26}, {1, 27}, {1, 20}, {1, 19}}),
      Samples("step|forward|hook", {{0, 0}, {0, 0}, {1, 6}, {1, 7}, {0, 0}, {0, 0}})};
  const std::vector<HostExtraWork> found = FindHostsWithExtraWork(node, hosts, {}, 2 * kMs);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].host, "b");
  EXPECT_EQ(found[0].ranks, (std::vector<uint32_t>{2, 3}));
  EXPECT_EQ(found[0].name, "step|forward|hook");
  EXPECT_DOUBLE_EQ(found[0].excess_ns, 6 * kMs);  // the host's smallest, over the others' median
  EXPECT_EQ(found[0].rank_excess_ns, (std::vector<double>{6 * kMs, 7 * kMs}));
  EXPECT_DOUBLE_EQ(found[0].calls, 1);
  EXPECT_DOUBLE_EQ(found[0].median_calls, 0);
  // Below the minimum excess: nothing.
  EXPECT_TRUE(FindHostsWithExtraWork(node, hosts, {}, 6.5 * kMs).empty());
  // One rank of the host does it: a rank's work, not the node's.
  EXPECT_TRUE(FindHostsWithExtraWork({Samples("hook", {{0, 0}, {0, 0}, {0, 0}, {1, 7}, {0, 0}, {0, 0}})}, hosts, {},
                                     2 * kMs).empty());
  // A rank of another host does it too: not the node's either.
  EXPECT_TRUE(FindHostsWithExtraWork({Samples("hook", {{0, 0}, {0, 0}, {1, 6}, {1, 7}, {1, 6}, {0, 0}})}, hosts, {},
                                     2 * kMs).empty());
  // The same calls, only longer (a busy machine stretches calls): not work the others do not do.
  EXPECT_TRUE(FindHostsWithExtraWork({Samples("mm", {{3, 1}, {3, 1}, {3, 9}, {3, 9}, {3, 1}, {3, 1}})}, hosts, {},
                                     2 * kMs).empty());
  // A wait is never work.
  EXPECT_TRUE(FindHostsWithExtraWork({Samples("sleep", {{0, 0}, {0, 0}, {1, 6}, {1, 7}, {0, 0}, {0, 0}}, true)},
                                     hosts, {}, 2 * kMs).empty());
  // No host known: never a node.
  const std::vector<RankHost> none(6, {"", HostSource::kNone});
  EXPECT_TRUE(FindHostsWithExtraWork(node, none, {}, 2 * kMs).empty());
  // A pipeline: host a's ranks are stage 0, alone in running the embedding, which is the stage's
  // work, not the node's; within stage 1, host b's hook is still the node's.
  const std::vector<FunctionSamples> staged = {
      Samples("embedding", {{1, 8}, {1, 8}, {0, 0}, {0, 0}, {0, 0}, {0, 0}}), node[1]};
  const std::vector<int64_t> stage_of = {0, 0, 1, 1, 1, 1};
  ASSERT_EQ(FindHostsWithExtraWork(staged, hosts, {}, 2 * kMs).size(), 2u);  // without the layout: both
  const std::vector<HostExtraWork> in_stage = FindHostsWithExtraWork(staged, hosts, stage_of, 2 * kMs);
  ASSERT_EQ(in_stage.size(), 1u);
  EXPECT_EQ(in_stage[0].host, "b");
}

// A CPU-only rank: `steps` steps whose local time is `local_ms` (+ its wobble) and forward
// phase carries the excess, 20 ms of exposed communication after it.
RankSummary Rank(int64_t rank, std::string host, double extra_ms, int steps = 8, double wobble_ms = 0.5) {
  RankSummary r;
  r.rank.rank = rank;
  r.rank_resolved = true;
  r.host_name = std::move(host);
  int64_t t = 1'716'423'322'000'000'000;
  r.window_start_ns = t;
  for (int s = 0; s < steps; ++s) {
    const int64_t wobble = ((rank * 7 + s * 3) % 5) * static_cast<int64_t>(wobble_ms * 1e6);
    const int64_t local = 100'000'000 + static_cast<int64_t>(extra_ms * 1e6) + wobble;
    StepSummary st;
    st.number = s;
    st.start_ns = t;
    st.end_ns = t + local + 20'000'000;
    st.cpu_phase_ns[static_cast<int>(StepPhase::kForward)] = 40'000'000 + static_cast<int64_t>(extra_ms * 1e6);
    st.cpu_phase_ns[static_cast<int>(StepPhase::kOther)] = st.duration_ns() - st.cpu_phase_ns[1];
    st.comm_exposed_ns = 20'000'000;
    r.steps.push_back(st);
    t = st.end_ns;
  }
  r.window_end_ns = t;
  return r;
}

TEST(SlowHosts, DiagnoseClusterNamesTheHostWhoseRanksAreHalfTheJob) {
  std::vector<RankSummary> ranks = {Rank(0, "a", 0), Rank(1, "a", 0), Rank(2, "b", 12), Rank(3, "b", 12)};
  const StatusOr<ClusterDiagnosis> d = DiagnoseCluster(ranks, ClusterOptions{});
  ASSERT_TRUE(d.ok());
  ASSERT_FALSE(d->findings.empty());
  const Finding& top = d->findings.front();
  EXPECT_EQ(top.kind, FindingKind::kSlowNode);
  EXPECT_EQ(top.hosts, (std::vector<std::string>{"b"}));
  EXPECT_EQ(top.ranks, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(top.subject, "forward");
  EXPECT_NEAR(top.cost.saving_ns, 12e6, 2e6);
  // The evidence is about the host's ranks together: every sentence has its numbers (the phase
  // and function lines said "on rank -1 ... vs median 0 ns" before).
  for (const std::string& line : DescribeFinding(top).evidence) {
    EXPECT_EQ(line.find("rank -1"), std::string::npos) << line;
    EXPECT_EQ(line.find("/step vs median 0 ns"), std::string::npos) << line;
    EXPECT_EQ(line.find("communication wait 20.00 ms vs median 0 ns"), std::string::npos) << line;
  }
  const Evidence* phase = top.FindEvidence(EvidenceKind::kPhase);
  ASSERT_NE(phase, nullptr);
  EXPECT_EQ(phase->ranks, (std::vector<int64_t>{2, 3}));
  EXPECT_NE(DescribeEvidence(*phase, top).find("forward (CPU side) on ranks 2, 3: +12"), std::string::npos)
      << DescribeEvidence(*phase, top);
  // A kernel slower on both ranks of host b: named with the host's value against the others'.
  for (RankSummary& r : ranks) {
    const double per_step = r.host_name == "b" ? 17e6 : 5e6;
    r.kernels.rows.push_back(FunctionStat{"gemm", "[8,1,1]|[128,1,1]", ActivityClass::kCompute, 8, 0, 0, 0, 0,
                                          static_cast<int64_t>(8 * per_step)});
  }
  const StatusOr<ClusterDiagnosis> k = DiagnoseCluster(ranks, ClusterOptions{});
  ASSERT_TRUE(k.ok());
  ASSERT_EQ(k->findings.front().kind, FindingKind::kSlowNode);
  const Evidence* gemm = k->findings.front().FindEvidence(EvidenceKind::kFunction);
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(DescribeEvidence(*gemm, k->findings.front()),
            "kernel gemm [8,1,1]|[128,1,1] on ranks 2, 3: 17.00 ms/step vs median 5.00 ms on the other hosts' ranks "
            "(+12.00 ms)");
  // The same job, healthy: no finding.
  std::vector<RankSummary> clean = {Rank(0, "a", 0), Rank(1, "a", 0), Rank(2, "b", 0), Rank(3, "b", 0)};
  const StatusOr<ClusterDiagnosis> c = DiagnoseCluster(clean, ClusterOptions{});
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->findings.empty());
}

TEST(SlowHosts, DiagnoseClusterNamesANodeByItsWorkWhenTheRanksTimesAreTooNoisy) {
  // Host b's ranks run a GEMM nobody else runs, 5 ms per step, on a machine whose local times
  // wobble by up to 16 ms from step to step: the time test cannot see the node, its calls can.
  std::vector<RankSummary> ranks;
  for (int64_t r = 0; r < 6; ++r) {
    const bool b = r == 2 || r == 3;
    ranks.push_back(Rank(r, r < 2 ? "a" : b ? "b" : "c", b ? 5 : 0, 16, 4.0));
    if (b) {
      ranks.back().kernels.rows.push_back(
          FunctionStat{"extra_gemm", "[8,1,1]|[128,1,1]", ActivityClass::kCompute, 16, 0, 0, 0, 0, 16 * 5'000'000});
    }
  }
  ClusterOptions options;
  const StatusOr<ClusterDiagnosis> d = DiagnoseCluster(ranks, options);
  ASSERT_TRUE(d.ok());
  ASSERT_FALSE(d->findings.empty());
  const Finding& top = d->findings.front();
  EXPECT_EQ(top.kind, FindingKind::kSlowNode);
  EXPECT_EQ(top.hosts, (std::vector<std::string>{"b"}));
  EXPECT_EQ(top.ranks, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(top.subject, "extra_gemm");
  EXPECT_NEAR(top.cost.added_ns, 5e6, 1e3);
  for (const Finding& f : d->findings) {  // the ranks' own findings are part of the node's
    if (&f == &top) continue;
    for (int64_t r : f.ranks) EXPECT_TRUE(r != 2 && r != 3) << FindingKindId(f.kind);
  }
  const FindingWords text = DescribeFinding(top);
  bool calls = false, node = false;
  for (const std::string& line : text.evidence) {
    calls |= line.find("kernel extra_gemm") != std::string::npos && line.find("at least 1.0 vs 0.0 calls/step") != std::string::npos;
    node |= line.find("every rank of host b runs it, and no rank of another host does") != std::string::npos;
  }
  EXPECT_TRUE(calls && node) << ::testing::PrintToString(text.evidence);
  // Code the node runs and the others do not: its next step is to find it, not to check the machine.
  EXPECT_EQ(top.next.kind, NextStepKind::kCompareFunction);
  EXPECT_NE(text.next.find("find where ranks 2, 3 of host b run extra_gemm"), std::string::npos) << text.next;
  // Rank 2 also a straggler for a reason of its own (+40 ms per step): it stays a finding beside
  // the node's, which explains only 5 ms of it.
  std::vector<RankSummary> straggler = ranks;
  straggler[2] = Rank(2, "b", 45, 16, 4.0);
  straggler[2].kernels.rows = ranks[2].kernels.rows;
  const StatusOr<ClusterDiagnosis> s2 = DiagnoseCluster(straggler, options);
  ASSERT_TRUE(s2.ok());
  bool node_b = false, rank_2 = false;
  for (const Finding& f : s2->findings) {
    node_b |= f.kind == FindingKind::kSlowNode && f.hosts == std::vector<std::string>{"b"};
    rank_2 |= f.kind == FindingKind::kSlowRank && f.ranks == std::vector<int64_t>{2};
  }
  EXPECT_TRUE(node_b && rank_2);
  // The same job without the GEMM: no node (the wobble alone is nobody's).
  for (RankSummary& r : ranks) r.kernels.rows.clear();
  const StatusOr<ClusterDiagnosis> clean = DiagnoseCluster(ranks, options);
  ASSERT_TRUE(clean.ok());
  for (const Finding& f : clean->findings) EXPECT_NE(f.kind, FindingKind::kSlowNode);
}

}  // namespace
}  // namespace rankscope

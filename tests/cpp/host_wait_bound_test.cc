// GPU work costs a job only where its hosts wait for it (cluster/host_wait_bound.h), on ranks
// written by hand: the steps' durations and the hosts' waits for their GPUs.
#include <gtest/gtest.h>

#include <vector>

#include "rankscope/cluster/host_wait_bound.h"
#include "rankscope/cluster/step_series.h"

namespace rankscope {
namespace {

constexpr int64_t kMs = 1'000'000;

// `ranks` ranks of 3 steps of 222 ms, on GPUs (or not), whose hosts waited `wait_ms` per step.
std::vector<RankSummary> Ranks(size_t ranks, const std::vector<int64_t>& wait_ms, bool on_gpu = true) {
  std::vector<RankSummary> out(ranks);
  for (size_t r = 0; r < ranks; ++r) {
    out[r].rank.rank = static_cast<int64_t>(r);
    out[r].gpu.activities = on_gpu ? 1000 : 0;
    for (size_t s = 0; s < wait_ms.size(); ++s) {
      StepSummary st;
      st.number = static_cast<int64_t>(s);
      st.start_ns = static_cast<int64_t>(s) * 222 * kMs;
      st.end_ns = st.start_ns + 222 * kMs;
      st.host_gpu_wait_ns = wait_ms[s] * kMs;
      out[r].steps.push_back(st);
    }
  }
  return out;
}

Finding SlowRank(int64_t rank, double saving_ns) {
  Finding f;
  f.kind = FindingKind::kSlowRank;
  f.severity = Severity::kCritical;
  f.ranks = {rank};
  f.cost.method = CostMethod::kWhatIfFaster;
  f.cost.step_ns = 222 * kMs;
  f.cost.saving_ns = saving_ns;
  f.cost.estimated_step_ns = f.cost.step_ns - saving_ns;
  return f;
}

const Evidence* Bound(const Finding& f) {
  for (const Evidence& e : f.evidence) {
    if (e.kind == EvidenceKind::kWhatIf && e.detail == "host_wait_bound") return &e;
  }
  return nullptr;
}

std::vector<int64_t> Numbers(size_t n) {
  std::vector<int64_t> out;
  for (size_t r = 0; r < n; ++r) out.push_back(static_cast<int64_t>(r));
  return out;
}

// The hosts waited 32 ms for their GPUs in the first step, not at all in the second, 6 ms in the
// third: a GPU-side lateness of 32 ms in every step saves (32 + 0 + 6) / 3 ms per step at most.
TEST(HostWaitBound, AGpuFindingSavesNoMoreThanTheHostsWaitedForTheirGpus) {
  const std::vector<RankSummary> ranks = Ranks(4, {32, 0, 6});
  std::vector<Finding> findings = {SlowRank(1, 32 * kMs)};
  BoundByHostWaits(ranks, AlignSteps(ranks), Numbers(4), 5 * kMs, &findings);
  const Finding& f = findings[0];
  EXPECT_DOUBLE_EQ(f.cost.saving_ns, 38.0 * kMs / 3);
  EXPECT_DOUBLE_EQ(f.cost.estimated_step_ns, 222.0 * kMs - 38.0 * kMs / 3);
  EXPECT_EQ(f.severity, Severity::kWarning);  // 5.7 % of the step
  const Evidence* e = Bound(f);
  ASSERT_NE(e, nullptr);
  EXPECT_DOUBLE_EQ(e->Get("per_step_saving_ns"), 32.0 * kMs);
  EXPECT_DOUBLE_EQ(e->Get("saving_ns"), 38.0 * kMs / 3);
}

// Rank 1's host works 10 ms longer than its peers' in each step (their hosts wait for it through
// their GPUs): fixing it takes that off directly, whatever the waits.
TEST(HostWaitBound, HostWorkOfTheFindingsRanksIsNotBounded) {
  std::vector<RankSummary> ranks = Ranks(4, {0, 0, 0});
  for (size_t r = 0; r < ranks.size(); ++r) {
    for (StepSummary& st : ranks[r].steps) st.host_gpu_wait_ns = r == 1 ? 0 : 10 * kMs;
  }
  std::vector<Finding> findings = {SlowRank(1, 10 * kMs)};
  BoundByHostWaits(ranks, AlignSteps(ranks), Numbers(4), 5 * kMs, &findings);
  EXPECT_DOUBLE_EQ(findings[0].cost.saving_ns, 10.0 * kMs);
  EXPECT_EQ(Bound(findings[0]), nullptr);
}

// Four ranks sharing a GPU through gloo: the peers of a late rank wait for it in the collectives
// on their hosts (15 ms a step here), not for their GPUs; that is waiting a fix takes off too.
TEST(HostWaitBound, PeersWaitingInCollectivesOnTheHostAreWaitsToo) {
  std::vector<RankSummary> ranks = Ranks(4, {0, 0, 0});
  for (size_t r = 0; r < ranks.size(); ++r) {
    if (r == 1) continue;
    for (const StepSummary& st : ranks[r].steps) {
      CollectiveInstance c;
      c.start_ns = st.end_ns - 15 * kMs;
      c.end_ns = st.end_ns;
      ranks[r].collectives.push_back(c);  // stream -1: on the host
    }
  }
  std::vector<Finding> findings = {SlowRank(1, 10 * kMs)};
  BoundByHostWaits(ranks, AlignSteps(ranks), Numbers(4), 5 * kMs, &findings);
  EXPECT_DOUBLE_EQ(findings[0].cost.saving_ns, 10.0 * kMs);
  EXPECT_EQ(Bound(findings[0]), nullptr);
}

// Below the minimum cost the finding becomes information; a CPU-only job is never bounded (its
// ranks wait for each other in host-side collectives, not for a GPU).
TEST(HostWaitBound, AFindingNoHostWaitedForIsInformationAndCpuJobsAreLeftAlone) {
  const std::vector<RankSummary> gpu = Ranks(4, {0, 0, 0});
  std::vector<Finding> findings = {SlowRank(1, 32 * kMs)};
  BoundByHostWaits(gpu, AlignSteps(gpu), Numbers(4), 5 * kMs, &findings);
  EXPECT_DOUBLE_EQ(findings[0].cost.saving_ns, 0.0);
  EXPECT_EQ(findings[0].severity, Severity::kInfo);

  const std::vector<RankSummary> cpu = Ranks(4, {0, 0, 0}, false);
  std::vector<Finding> cpu_findings = {SlowRank(1, 32 * kMs)};
  BoundByHostWaits(cpu, AlignSteps(cpu), Numbers(4), 5 * kMs, &cpu_findings);
  EXPECT_DOUBLE_EQ(cpu_findings[0].cost.saving_ns, 32.0 * kMs);
}

TEST(HostWaitBound, EveryFindingFixedAtOnceIsBoundedAlike) {
  const std::vector<RankSummary> ranks = Ranks(4, {32, 0, 6});
  CombinedWhatIf all;
  all.findings = 2;
  all.ranks = {1, 2};
  all.what_if.step_ns = 222 * kMs;
  all.what_if.saving_ns = 40 * kMs;
  all.what_if.estimated_step_ns = 182 * kMs;
  BoundByHostWaits(ranks, AlignSteps(ranks), Numbers(4), &all);
  EXPECT_DOUBLE_EQ(all.what_if.saving_ns, 38.0 * kMs / 3);
  EXPECT_DOUBLE_EQ(all.what_if.estimated_step_ns, 222.0 * kMs - 38.0 * kMs / 3);
}

}  // namespace
}  // namespace rankscope

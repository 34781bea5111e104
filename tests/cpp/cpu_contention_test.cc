// CPU contention (cluster/cpu_contention.h): the collector's record of CPU run and run-queue wait
// read from a trace, and a step-to-step imbalance that the ranks' wait for a CPU can explain
// reported as the host's contention — while the same imbalance on ranks that hardly wait for a
// CPU, or without the record, stays a per_step_imbalance.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "rankscope/analysis/analyze_rank.h"
#include "rankscope/cluster/cluster_diagnosis.h"
#include "rankscope/cluster/cpu_contention.h"
#include "rankscope/ingest/read_trace.h"
#include "rankscope/report/finding_text.h"

namespace rankscope {
namespace {

constexpr double kMs = 1e6;

StatusOr<TraceModel> ReadWithTopLevel(const nlohmann::json& value) {
  const nlohmann::json op = {{"ph", "X"}, {"cat", "cpu_op"}, {"name", "aten::mm"}, {"pid", 1}, {"tid", 1},
                             {"ts", 100}, {"dur", 50}};
  nlohmann::json doc = {{"traceEvents", {op}}, {"rankscope_cpu_sched", value}};
  return ReadTraceBytes(doc.dump(), "rank0.json");
}

TEST(CpuSchedRecord, IsReadFromTheTraceAndBadValuesAreNamed) {
  auto good = ReadWithTopLevel({{"run_ns", 120}, {"wait_ns", 340}, {"threads", 7}, {"source", "schedstat"}});
  ASSERT_TRUE(good.ok()) << good.status().message();
  EXPECT_EQ(good->info.cpu_sched.run_ns, 120);
  EXPECT_EQ(good->info.cpu_sched.wait_ns, 340);
  EXPECT_EQ(good->info.cpu_sched.threads, 7);
  auto summary = AnalyzeRank(*good, AnalysisOptions{});
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_EQ(summary->cpu_sched.wait_ns, 340);

  for (const nlohmann::json& bad : {nlohmann::json{{"run_ns", -1}, {"wait_ns", 3}}, nlohmann::json{{"run_ns", 5}},
                                    nlohmann::json("run 5 wait 3"), nlohmann::json{{"run_ns", "x"}, {"wait_ns", 3}}}) {
    auto m = ReadWithTopLevel(bad);
    ASSERT_TRUE(m.ok()) << bad.dump();
    EXPECT_FALSE(m->info.cpu_sched.known()) << bad.dump();
    EXPECT_EQ(m->stats.ignored_fields.by_reason.count(
                  "rankscope_cpu_sched has no non-negative integer run_ns and wait_ns"),
              1u)
        << bad.dump();
  }
}

// A CPU-only rank of 8 steps: local time 100 ms, +`slow_ms` in the steps where it is the slowest
// (a different rank each step: rank == step % 4), 20 ms of exposed communication; its record:
// `wait_ms` of run-queue wait per step (none when negative).
RankSummary Rank(int64_t rank, double slow_ms, double wait_ms, int steps = 8) {
  RankSummary r;
  r.rank.rank = rank;
  r.rank_resolved = true;
  r.host_name = "h" + std::to_string(rank);
  int64_t t = 1'716'423'322'000'000'000;
  r.window_start_ns = t;
  for (int s = 0; s < steps; ++s) {
    const double extra = s % 4 == rank ? slow_ms : 0;
    const int64_t local = 100'000'000 + static_cast<int64_t>(extra * kMs);
    StepSummary st;
    st.number = s;
    st.start_ns = t;
    st.end_ns = t + local + 20'000'000;
    st.cpu_phase_ns[static_cast<int>(StepPhase::kForward)] = 40'000'000 + static_cast<int64_t>(extra * kMs);
    st.cpu_phase_ns[static_cast<int>(StepPhase::kOther)] = st.duration_ns() - st.cpu_phase_ns[1];
    st.comm_exposed_ns = 20'000'000;
    r.steps.push_back(st);
    t = st.end_ns;
  }
  r.window_end_ns = t;
  r.steps_in_trace = steps;
  if (wait_ms >= 0) r.cpu_sched = {static_cast<int64_t>(30 * kMs * steps), static_cast<int64_t>(wait_ms * kMs * steps), 4};
  return r;
}

TEST(CpuWait, IsTheRecordPerStep) {
  std::vector<RankSummary> ranks = {Rank(0, 0, 12), Rank(1, 0, -1)};
  std::vector<RankMetrics> metrics;
  for (const RankSummary& r : ranks) metrics.push_back(ComputeRankMetrics(r, true));
  const std::vector<RankCpuWait> w = MeasureCpuWait(ranks, metrics);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_TRUE(w[0].known);
  EXPECT_NEAR(w[0].run_ns, 30 * kMs, 1);
  EXPECT_NEAR(w[0].wait_ns, 12 * kMs, 1);
  EXPECT_FALSE(w[1].known);
}

Finding Imbalance(double mean_excess_ns) {
  Finding f;
  f.kind = FindingKind::kPerStepImbalance;
  f.ranks = {0, 1, 2, 3};
  f.subject = "0";
  f.subject_kind = "stage";
  f.cost.method = CostMethod::kWhatIfLikeMedian;
  f.cost.saving_ns = mean_excess_ns;
  f.cost.step_ns = 120 * kMs;
  Evidence e;
  e.kind = EvidenceKind::kStepImbalance;
  e.Set("mean_excess_ns", mean_excess_ns);
  f.evidence.push_back(e);
  Evidence w;
  w.kind = EvidenceKind::kWhatIf;
  f.evidence.push_back(w);
  return f;
}

TEST(CpuContention, AnImbalanceTheRunQueueCanMakeIsTheHosts) {
  std::vector<RankCpuWait> w = {{true, 30 * kMs, 4 * kMs}, {true, 30 * kMs, 6 * kMs}, {true, 30 * kMs, 5 * kMs},
                                {true, 30 * kMs, 9 * kMs}};
  std::vector<Finding> findings = {Imbalance(10 * kMs), Imbalance(12 * kMs)};
  findings[1].kind = FindingKind::kSlowRank;  // only imbalances are looked at
  EXPECT_TRUE(AttributeImbalanceToContention(w, {0, 1, 2, 3}, &findings));
  const Finding& c = findings[0];
  EXPECT_EQ(c.kind, FindingKind::kCpuContention);
  EXPECT_EQ(c.severity, Severity::kInfo);
  EXPECT_EQ(c.cost.method, CostMethod::kNone);
  EXPECT_EQ(c.cost.saving_ns, 0);
  EXPECT_EQ(c.cost.added_ns, 0);  // a note about the host ranks below the job's own findings
  ASSERT_EQ(c.evidence.size(), 5u);           // the imbalance (not its what-if) and each rank's wait
  EXPECT_EQ(c.evidence[0].kind, EvidenceKind::kStepImbalance);
  EXPECT_EQ(c.evidence[4].kind, EvidenceKind::kCpuWait);
  EXPECT_EQ(c.evidence[4].rank, 3);
  EXPECT_EQ(c.next.kind, NextStepKind::kCheckHost);
  EXPECT_EQ(findings[1].kind, FindingKind::kSlowRank);

  // A median wait under half the excess, or a rank without the record: the imbalance stands.
  std::vector<Finding> large = {Imbalance(12 * kMs)};
  EXPECT_FALSE(AttributeImbalanceToContention(w, {0, 1, 2, 3}, &large));
  EXPECT_EQ(large[0].kind, FindingKind::kPerStepImbalance);
  w[2].known = false;
  std::vector<Finding> partial = {Imbalance(10 * kMs)};
  EXPECT_FALSE(AttributeImbalanceToContention(w, {0, 1, 2, 3}, &partial));
  EXPECT_EQ(partial[0].kind, FindingKind::kPerStepImbalance);
}

TEST(CpuContention, DiagnoseClusterTellsTheSchedulersImbalanceFromTheInputs) {
  // A different rank is 15 ms slower in each step. Contended: the ranks wait 12 ms/step for a CPU.
  // Quiet: 0.2 ms/step. Unrecorded: no record.
  std::vector<RankSummary> contended, quiet, unrecorded;
  for (int64_t r = 0; r < 4; ++r) {
    contended.push_back(Rank(r, 15, 12));
    quiet.push_back(Rank(r, 15, 0.2));
    unrecorded.push_back(Rank(r, 15, -1));
  }
  const StatusOr<ClusterDiagnosis> c = DiagnoseCluster(contended, ClusterOptions{});
  ASSERT_TRUE(c.ok());
  ASSERT_FALSE(c->findings.empty());
  EXPECT_EQ(c->findings.front().kind, FindingKind::kCpuContention);
  EXPECT_EQ(c->findings.front().ranks, (std::vector<int64_t>{0, 1, 2, 3}));
  for (const StatusOr<ClusterDiagnosis>& d :
       {DiagnoseCluster(quiet, ClusterOptions{}), DiagnoseCluster(unrecorded, ClusterOptions{})}) {
    ASSERT_TRUE(d.ok());
    ASSERT_FALSE(d->findings.empty());
    EXPECT_EQ(d->findings.front().kind, FindingKind::kPerStepImbalance);
  }
}

TEST(CpuContention, ARanksExtraCpuOnAnOversubscribedHostIsNotedOnItsFinding) {
  // Rank 1 runs 4.5 ms/step more on a CPU than the other ranks of its host, which wait 18 ms/step
  // for one (a CPU accuracy run: a 4.7 ms compute fault that measured 6.4 ms of saving; on a
  // CPU-bound one, 39 ms of compute measured -0.5 ms: the saving can be either side of the cost).
  auto finding = [](FindingKind kind, std::vector<int64_t> ranks) {
    Finding f;
    f.kind = kind;
    f.ranks = std::move(ranks);
    return f;
  };
  const std::vector<RankHost> hosts = {{"a", HostSource::kHostMap}, {"a", HostSource::kHostMap}, {"a", HostSource::kHostMap},
                                       {"b", HostSource::kHostMap}};
  std::vector<RankCpuWait> w = {{true, 10.5 * kMs, 17 * kMs}, {true, 15 * kMs, 22 * kMs}, {true, 10.4 * kMs, 19 * kMs},
                                {true, 10 * kMs, 0.1 * kMs}};
  std::vector<Finding> findings = {finding(FindingKind::kExtraWork, {1}), finding(FindingKind::kSlowRank, {3}),
                                   finding(FindingKind::kSlowNode, {1, 2})};
  NoteContendedCpu(w, hosts, {0, 1, 2, 3}, 2 * kMs, &findings);
  ASSERT_EQ(findings[0].evidence.size(), 1u);
  const Evidence& e = findings[0].evidence[0];
  EXPECT_EQ(e.kind, EvidenceKind::kCpuWait);
  EXPECT_EQ(e.detail, "extra_cpu");
  EXPECT_EQ(e.rank, 1);
  EXPECT_EQ(e.host, "a");
  EXPECT_NEAR(e.Get("run_ns") - e.Get("peers_run_ns"), 4.55 * kMs, 1);
  EXPECT_NEAR(e.Get("peers_wait_ns"), 18 * kMs, 1);
  EXPECT_NE(DescribeFinding(findings[0]).evidence[0].find("can be well above or below the cost shown"),
            std::string::npos);
  EXPECT_TRUE(findings[1].evidence.empty());  // alone on its host: nobody it takes a CPU from
  EXPECT_TRUE(findings[2].evidence.empty());  // about a node, not one rank
  // Peers that hardly wait for a CPU lose nothing to it; below the minimum cost it is not news.
  std::vector<RankCpuWait> quiet = w;
  quiet[0].wait_ns = quiet[2].wait_ns = 0.3 * kMs;
  std::vector<Finding> calm = {finding(FindingKind::kExtraWork, {1})};
  NoteContendedCpu(quiet, hosts, {0, 1, 2, 3}, 2 * kMs, &calm);
  EXPECT_TRUE(calm[0].evidence.empty());
  std::vector<Finding> small = {finding(FindingKind::kExtraWork, {1})};
  NoteContendedCpu(w, hosts, {0, 1, 2, 3}, 5 * kMs, &small);
  EXPECT_TRUE(small[0].evidence.empty());
}

// A costed finding about one rank led by a wait (here a sleep in data loading), on a host whose
// other ranks wait for a CPU: they run on the CPU it leaves, so fixing it can save less (the
// CPU-bound accuracy set: a 39 ms sleep per step, estimated 30.8 ms, measured -0.8 ms).
TEST(CpuContention, ARanksWaitOnAnOversubscribedHostIsNotedOnItsFinding) {
  const std::string sleep = "train.py(10): main|<built-in function sleep>";
  auto led_by = [&](bool wait, double saving_ns, bool as_phase) {
    Finding f;
    f.kind = FindingKind::kSlowRank;
    f.ranks = {1};
    f.subject = as_phase ? "data_loading" : sleep;
    f.subject_kind = as_phase ? "phase" : "python_path";
    f.cost.saving_ns = saving_ns;
    Evidence fn;
    fn.kind = EvidenceKind::kFunction;
    fn.rank = 1;
    fn.subject = sleep;
    fn.subject_kind = "python_path";
    if (wait) fn.Set("wait", 1);
    f.evidence.push_back(fn);
    return f;
  };
  const std::vector<RankHost> hosts(3, RankHost{"a", HostSource::kHostMap});
  // Rank 1 even runs a little more on a CPU (it runs while its peers wait for it): not the cause.
  const std::vector<RankCpuWait> w = {
      {true, 10 * kMs, 17 * kMs}, {true, 13 * kMs, 9 * kMs}, {true, 10 * kMs, 19 * kMs}};
  std::vector<Finding> findings = {led_by(true, 8 * kMs, false), led_by(true, 8 * kMs, true),
                                   led_by(true, 0, false), led_by(false, 8 * kMs, false)};
  NoteContendedCpu(w, hosts, {0, 1, 2}, 2 * kMs, &findings);
  for (int i : {0, 1}) {  // the subject, or the phase's first function
    ASSERT_EQ(findings[i].evidence.size(), 2u) << i;
    const Evidence& e = findings[i].evidence[1];
    EXPECT_EQ(e.kind, EvidenceKind::kCpuWait);
    EXPECT_EQ(e.detail, "wait_on_contended_cpu");
    EXPECT_NEAR(e.Get("peers_wait_ns"), 18 * kMs, 1);
    const std::string text = DescribeFinding(findings[i]).evidence[1];
    EXPECT_NE(text.find("rank 1 waits (...|train.py(10): main|<built-in function sleep>)"), std::string::npos) << text;
    EXPECT_NE(text.find("can save less than the cost shown"), std::string::npos) << text;
  }
  EXPECT_EQ(findings[0].evidence[1].subject, sleep);
  // No cost to be below; and its 3 ms of extra CPU is not the note: that is the effect of being late.
  EXPECT_EQ(findings[2].evidence.size(), 1u);
  ASSERT_EQ(findings[3].evidence.size(), 2u);  // not a wait: its 3 ms of extra CPU is the note
  EXPECT_EQ(findings[3].evidence[1].detail, "extra_cpu");
  // Peers that hardly wait for a CPU gain nothing while it waits.
  std::vector<RankCpuWait> quiet = w;
  quiet[0].wait_ns = quiet[2].wait_ns = 0.3 * kMs;
  std::vector<Finding> calm = {led_by(true, 8 * kMs, false)};
  NoteContendedCpu(quiet, hosts, {0, 1, 2}, 2 * kMs, &calm);
  EXPECT_EQ(calm[0].evidence.size(), 1u);
}

}  // namespace
}  // namespace rankscope

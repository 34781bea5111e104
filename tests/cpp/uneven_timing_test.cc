// Uneven timing (cluster/uneven_timing.h): the steps' work signatures read from inline traces
// (analysis/work_signature.h), and a step-to-step imbalance among ranks that ran the same
// operators on the same shapes reported as uneven timing — while the same imbalance with
// different shapes (an input imbalance) or without shapes stays a per_step_imbalance.
#include <map>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "rankscope/analysis/analyze_rank.h"
#include "rankscope/analysis/work_signature.h"
#include "rankscope/cluster/cluster_diagnosis.h"
#include "rankscope/cluster/uneven_timing.h"
#include "rankscope/ingest/read_trace.h"
#include "rankscope/report/finding_text.h"

namespace rankscope {
namespace {

using nlohmann::json;
constexpr double kMs = 1e6;

json Op(const std::string& name, int64_t ts, const json& dims) {
  json op = {{"ph", "X"}, {"cat", "cpu_op"}, {"name", name}, {"pid", 1}, {"tid", 1}, {"ts", ts}, {"dur", 10}};
  if (!dims.is_null()) op["args"] = {{"Input Dims", dims}, {"Input type", json::array({"float"})}};
  return op;
}

json Step(int n, int64_t ts, int64_t dur) {
  return {{"ph", "X"}, {"cat", "user_annotation"}, {"name", "ProfilerStep#" + std::to_string(n)},
          {"pid", 1},  {"tid", 1},                 {"ts", ts},
          {"dur", dur}};
}

// Three steps of 100 us: in each, aten::mm on a [rows, 8] x [8, 8] batch and aten::relu on its
// result, in the given order; `rows` per step; null dims: no shapes recorded.
std::vector<WorkSignature> Signatures(const std::vector<int>& rows, bool relu_first, bool shapes,
                                      bool keep_op_shapes = false) {
  json events = json::array();
  for (int s = 0; s < static_cast<int>(rows.size()); ++s) {
    const int64_t t = 100 * s;
    events.push_back(Step(s, t, 100));
    const json mm = shapes ? json::array({json::array({rows[s], 8}), json::array({8, 8})}) : json(nullptr);
    const json relu = shapes ? json::array({json::array({rows[s], 8})}) : json(nullptr);
    events.push_back(Op("aten::mm", t + (relu_first ? 40 : 10), mm));
    events.push_back(Op("aten::relu", t + (relu_first ? 10 : 40), relu));
  }
  ReaderOptions options;
  options.keep_op_shapes = keep_op_shapes;
  auto model = ReadTraceBytes(json{{"traceEvents", events}}.dump(), "rank0.json", options);
  EXPECT_TRUE(model.ok()) << model.status().message();
  auto summary = AnalyzeRank(*model, AnalysisOptions{});
  EXPECT_TRUE(summary.ok()) << summary.status().message();
  std::vector<WorkSignature> out;
  for (const StepSummary& s : summary->steps) out.push_back({s.work_signature, s.shaped_ops});
  return out;
}

TEST(WorkSignature, IsTheSameForTheSameOpsOnTheSameShapesInAnyOrder) {
  const auto a = Signatures({4, 4, 4}, false, true);
  ASSERT_EQ(a.size(), 3u);
  EXPECT_EQ(a[0].shaped_ops, 2);
  EXPECT_NE(a[0].value, 0u);
  EXPECT_EQ(a[0].value, a[1].value);
  EXPECT_EQ(a[1].value, a[2].value);
  const auto reordered = Signatures({4, 4, 4}, true, true);
  EXPECT_EQ(reordered[0].value, a[0].value);
  // Read with the compare path's option (shapes interned as text): the same signature.
  EXPECT_EQ(Signatures({4, 4, 4}, false, true, true)[0].value, a[0].value);
  // A batch of 5 rows in step 1 changes that step's signature only.
  const auto uneven = Signatures({4, 5, 4}, false, true);
  EXPECT_EQ(uneven[0].value, a[0].value);
  EXPECT_NE(uneven[1].value, a[1].value);
  EXPECT_EQ(uneven[1].shaped_ops, 2);
  // No shapes recorded: no signature.
  const auto none = Signatures({4, 4, 4}, false, false);
  EXPECT_EQ(none[0].value, 0u);
  EXPECT_EQ(none[0].shaped_ops, 0);
}

// A CPU-only rank of 8 steps: local time 100 ms, +15 ms in the steps where it is the slowest (a
// different rank each step: rank == step % 4), 20 ms of exposed communication; every step's
// work signature `signature` (0: no shapes), except step `odd_step`, which gets `signature + 1`.
RankSummary Rank(int64_t rank, uint64_t signature, int odd_step = -1) {
  RankSummary r;
  r.rank.rank = rank;
  r.rank_resolved = true;
  r.host_name = "h" + std::to_string(rank);
  int64_t t = 1'716'423'322'000'000'000;
  r.window_start_ns = t;
  for (int s = 0; s < 8; ++s) {
    const int64_t local = 100'000'000 + (s % 4 == rank ? static_cast<int64_t>(15 * kMs) : 0);
    StepSummary st;
    st.number = s;
    st.start_ns = t;
    st.end_ns = t + local + 20'000'000;
    st.cpu_phase_ns[static_cast<int>(StepPhase::kForward)] = local - 60'000'000;
    st.cpu_phase_ns[static_cast<int>(StepPhase::kOther)] = st.duration_ns() - st.cpu_phase_ns[1];
    st.comm_exposed_ns = 20'000'000;
    st.work_signature = signature + (s == odd_step ? 1 : 0);
    st.shaped_ops = signature ? 452 : 0;
    r.steps.push_back(st);
    t = st.end_ns;
  }
  r.window_end_ns = t;
  r.steps_in_trace = 8;
  return r;
}

// Rank(rank, 77) whose batch was longer (its own signature) in the steps where it is the slowest.
RankSummary LongerBatchWhenSlowest(int64_t rank) {
  RankSummary r = Rank(rank, 77);
  for (StepSummary& s : r.steps) {
    if (s.number % 4 == rank) s.work_signature = 100 + static_cast<uint64_t>(s.number);
  }
  return r;
}

TEST(UnevenTiming, CompareStepWorkNeedsTheWorkNotToChangeBetweenRanksFromStepToStep) {
  const std::vector<RankSummary> same = {Rank(0, 77), Rank(1, 77), Rank(2, 77)};
  const SameWork w = CompareStepWork(same, {0, 1, 2});
  EXPECT_TRUE(w.same);
  EXPECT_TRUE(w.across_ranks);
  EXPECT_EQ(w.steps, 8u);
  EXPECT_EQ(w.shaped_ops, 452);
  EXPECT_TRUE(w.own_work.empty());
  EXPECT_FALSE(CompareStepWork({Rank(0, 77), Rank(1, 77, 5)}, {0, 1}).same);  // one step differs on one rank
  // Each rank's own work in every step (rank 2's shard differs): the same, rank 2 with work of its own.
  const SameWork own = CompareStepWork({Rank(0, 77), Rank(1, 77), Rank(2, 78)}, {0, 1, 2});
  EXPECT_TRUE(own.same);
  EXPECT_FALSE(own.across_ranks);
  EXPECT_EQ(own.own_work, (std::vector<uint32_t>{2}));
  // Two ranks, each with work of its own: no work most share, both listed.
  EXPECT_EQ(CompareStepWork({Rank(0, 77), Rank(1, 78)}, {0, 1}).own_work, (std::vector<uint32_t>{0, 1}));
  // A constant difference plus a change in one step: the work changed between ranks.
  EXPECT_FALSE(CompareStepWork({Rank(0, 77), Rank(1, 77), Rank(2, 78, 4)}, {0, 1, 2}).same);
  // Every rank alike in each step while the work changes from step to step: the same.
  EXPECT_TRUE(CompareStepWork({Rank(0, 77, 3), Rank(1, 77, 3)}, {0, 1}).across_ranks);
  EXPECT_FALSE(CompareStepWork({Rank(0, 0), Rank(1, 0)}, {0, 1}).same);  // no shapes
  EXPECT_FALSE(CompareStepWork({Rank(0, 77), Rank(1, 0)}, {0, 1}).same);
  EXPECT_FALSE(CompareStepWork(same, {0}).same);  // nothing to compare with
  // Only the steps an imbalance was judged on: rank 1's odd step 5 (a straggler's checkpoint,
  // say, which its own finding explains) left out, the work is the same.
  const std::vector<int64_t> judged = {0, 1, 2, 3, 4, 6, 7};
  const SameWork without_5 = CompareStepWork({Rank(0, 77), Rank(1, 77, 5)}, {0, 1}, &judged);
  EXPECT_TRUE(without_5.same);
  EXPECT_TRUE(without_5.across_ranks);
  EXPECT_EQ(without_5.steps, 7u);
  const std::vector<int64_t> two = {0, 1};  // fewer than kMinSameWorkSteps
  EXPECT_FALSE(CompareStepWork(same, {0, 1}, &two).same);
}

// Neither strict form holds, but the slowest rank of most steps ran its peers' work or its own
// usual work: the changing work did not choose the slowest rank.
TEST(UnevenTiming, CompareStepWorkAsksWhetherTheSlowestRanksWorkWasItsOwn) {
  std::map<int64_t, size_t> slowest;  // step s: rank s % 4, as Rank() makes them
  for (int64_t s = 0; s < 8; ++s) slowest[s] = static_cast<size_t>(s % 4);
  const std::vector<uint32_t> four = {0, 1, 2, 3};
  // Rank 0 saves a checkpoint in steps 2 and 6 (other operators), where rank 2 is the slowest.
  const std::vector<RankSummary> checkpoint = {Rank(0, 77, 2), Rank(1, 77), Rank(2, 77), Rank(3, 77)};
  EXPECT_FALSE(CompareStepWork(checkpoint, four).same);  // the strict forms alone
  const SameWork w = CompareStepWork(checkpoint, four, nullptr, &slowest);
  EXPECT_TRUE(w.same);
  EXPECT_TRUE(w.by_slowest);
  EXPECT_FALSE(w.across_ranks);
  EXPECT_EQ(w.explained_steps, 0u);
  EXPECT_EQ(w.steps, 8u);
  EXPECT_TRUE(w.own_work.empty());
  // In step 0, where it is the slowest: one step of eight its own work explains.
  const std::vector<RankSummary> slow_save = {Rank(0, 77, 0), Rank(1, 77), Rank(2, 77), Rank(3, 77)};
  const SameWork one = CompareStepWork(slow_save, four, nullptr, &slowest);
  EXPECT_TRUE(one.same);
  EXPECT_EQ(one.explained_steps, 1u);
  // Each rank's batch longer exactly when it is the slowest: the input chose it every time.
  std::vector<RankSummary> input;
  for (int64_t r = 0; r < 4; ++r) input.push_back(LongerBatchWhenSlowest(r));
  EXPECT_FALSE(CompareStepWork(input, four, nullptr, &slowest).same);
  // Every rank's work different in every step (sequences of random length): nothing is shared,
  // so the slowest rank's work is always its own.
  std::vector<RankSummary> random = input;
  for (RankSummary& r : random) {
    for (StepSummary& s : r.steps) s.work_signature = 1000 * static_cast<uint64_t>(r.rank.rank) + s.number;
  }
  EXPECT_FALSE(CompareStepWork(random, four, nullptr, &slowest).same);
}

TEST(UnevenTiming, DiagnoseClusterTellsTheMachinesImbalanceFromTheInputs) {
  std::vector<RankSummary> same, input, unshaped;
  for (int64_t r = 0; r < 4; ++r) {
    same.push_back(Rank(r, 77));
    input.push_back(LongerBatchWhenSlowest(r));
    unshaped.push_back(Rank(r, 0));
  }
  const StatusOr<ClusterDiagnosis> d = DiagnoseCluster(same, ClusterOptions{});
  ASSERT_TRUE(d.ok());
  ASSERT_FALSE(d->findings.empty());
  const Finding& f = d->findings.front();
  EXPECT_EQ(f.kind, FindingKind::kUnevenTiming);
  EXPECT_EQ(f.severity, Severity::kInfo);
  EXPECT_EQ(f.cost.method, CostMethod::kNone);
  EXPECT_EQ(f.cost.saving_ns, 0);
  EXPECT_EQ(f.ranks, (std::vector<int64_t>{0, 1, 2, 3}));
  ASSERT_NE(f.FindEvidence(EvidenceKind::kStepImbalance), nullptr);
  EXPECT_EQ(f.FindEvidence(EvidenceKind::kWhatIf), nullptr);
  const Evidence* e = f.FindEvidence(EvidenceKind::kSameWork);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->Get("steps"), 8);
  EXPECT_EQ(e->Get("shaped_ops"), 452);
  EXPECT_EQ(f.next.kind, NextStepKind::kCheckHost);
  const FindingWords text = DescribeFinding(f);
  EXPECT_NE(text.title.find("not an input imbalance"), std::string::npos) << text.title;
  EXPECT_EQ(text.next.find("balance the work"), std::string::npos) << text.next;

  // Rank 3 ran its own shapes in every step (an FSDP shard of a layer the world size does not
  // divide): the imbalance is still not the input's, and the report says which rank differs.
  std::vector<RankSummary> shard = same;
  shard[3] = Rank(3, 78);
  const StatusOr<ClusterDiagnosis> sharded = DiagnoseCluster(shard, ClusterOptions{});
  ASSERT_TRUE(sharded.ok());
  ASSERT_FALSE(sharded->findings.empty());
  const Finding& s = sharded->findings.front();
  EXPECT_EQ(s.kind, FindingKind::kUnevenTiming);
  std::vector<const Evidence*> same_work;
  for (const Evidence& ev : s.evidence) {
    if (ev.kind == EvidenceKind::kSameWork) same_work.push_back(&ev);
  }
  ASSERT_EQ(same_work.size(), 2u);
  EXPECT_EQ(same_work[0]->detail, "per_rank");
  EXPECT_EQ(same_work[1]->detail, "own_work");
  EXPECT_EQ(same_work[1]->ranks, (std::vector<int64_t>{3}));
  const FindingWords sharded_text = DescribeFinding(s);
  EXPECT_NE(sharded_text.title.find("each rank ran the same operators"), std::string::npos) << sharded_text.title;
  // Two ranks each (a process group of ranks 2 and 3): no shapes shared by most, and the words
  // say so instead of naming every rank as different from "the rest".
  std::vector<RankSummary> halves = shard;
  halves[2] = Rank(2, 78);
  const StatusOr<ClusterDiagnosis> split = DiagnoseCluster(halves, ClusterOptions{});
  ASSERT_TRUE(split.ok());
  ASSERT_FALSE(split->findings.empty());
  const Evidence* own = nullptr;
  for (const Evidence& ev : split->findings.front().evidence) {
    if (ev.detail == "own_work") own = &ev;
  }
  ASSERT_NE(own, nullptr);
  EXPECT_EQ(own->ranks, split->findings.front().ranks);
  const std::string words = DescribeEvidence(*own, split->findings.front());
  EXPECT_NE(words.find("no set of input shapes is shared by most of ranks 0, 1, 2, 3"), std::string::npos) << words;
  EXPECT_EQ(words.find("the rest"), std::string::npos) << words;

  for (const auto* ranks : {&input, &unshaped}) {
    const StatusOr<ClusterDiagnosis> other = DiagnoseCluster(*ranks, ClusterOptions{});
    ASSERT_TRUE(other.ok());
    ASSERT_FALSE(other->findings.empty());
    EXPECT_EQ(other->findings.front().kind, FindingKind::kPerStepImbalance);
  }
  // Without shapes the imbalance stands unconfirmed: the evidence says the traces cannot tell, and
  // the advice is what would tell, not "balance the work" outright.
  const StatusOr<ClusterDiagnosis> blind = DiagnoseCluster(unshaped, ClusterOptions{});
  const Evidence* unknown = blind->findings.front().FindEvidence(EvidenceKind::kSameWork);
  ASSERT_NE(unknown, nullptr);
  EXPECT_EQ(unknown->detail, "no_shapes");
  const FindingWords blind_text = DescribeFinding(blind->findings.front());
  EXPECT_EQ(blind_text.next.find("record with record_shapes=True"), 0u) << blind_text.next;
  EXPECT_EQ(input.size(), 4u);
  // Rank 0's checkpoint in steps 2 and 6 changes its work there; the slowest ranks' work was
  // their peers' in every step: uneven timing, and the words say how many steps were compared.
  std::vector<RankSummary> checkpoint = same;
  checkpoint[0] = Rank(0, 77, 2);
  checkpoint[0].steps[6].work_signature = 78;
  const StatusOr<ClusterDiagnosis> saved = DiagnoseCluster(checkpoint, ClusterOptions{});
  ASSERT_TRUE(saved.ok());
  ASSERT_FALSE(saved->findings.empty());
  EXPECT_EQ(saved->findings.front().kind, FindingKind::kUnevenTiming);
  const Evidence* by_slowest = saved->findings.front().FindEvidence(EvidenceKind::kSameWork);
  ASSERT_NE(by_slowest, nullptr);
  EXPECT_EQ(by_slowest->detail, "slowest_rank");
  EXPECT_EQ(by_slowest->Get("explained_steps"), 0);
  const FindingWords saved_text = DescribeFinding(saved->findings.front());
  EXPECT_NE(saved_text.title.find("in 8 of the 8 steps the slowest rank ran the operators and input shapes its peers"),
            std::string::npos)
      << saved_text.title;
  const StatusOr<ClusterDiagnosis> shaped = DiagnoseCluster(input, ClusterOptions{});
  EXPECT_EQ(shaped->findings.front().FindEvidence(EvidenceKind::kSameWork), nullptr);
  EXPECT_EQ(DescribeFinding(shaped->findings.front()).next.find("balance the work"), 0u);
}

}  // namespace
}  // namespace rankscope

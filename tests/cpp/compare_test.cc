// `rankscope compare` on small hand-written traces (no ../shared): the LCS, the priority sweep,
// kernel classes, the cells of a step adding up to its duration, and one difference per kind of
// change (added operator with its backward op, shapes, precision, same work, --op-map), GPU
// work attributed to the operator that launched it, the noise band, and the errors a user sees.
// Times in the traces are µs (Kineto's unit).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "rankscope/analysis/analyze_rank.h"
#include "rankscope/base/student_t.h"
#include "rankscope/compare/compare_summary.h"
#include "rankscope/compare/delta_attribution.h"
#include "rankscope/compare/job_compare.h"
#include "rankscope/compare/kernel_class.h"
#include "rankscope/compare/lcs.h"
#include "rankscope/compare/op_alignment.h"
#include "rankscope/compare/overall_diff.h"
#include "rankscope/compare/priority_sweep.h"
#include "rankscope/compare/rank_compare.h"
#include "rankscope/ingest/read_trace.h"

namespace rankscope::compare {
namespace {

using nlohmann::json;

// ---- LCS

std::vector<uint64_t> Seq(std::string_view s) { return std::vector<uint64_t>(s.begin(), s.end()); }

std::string Common(const std::string& a, const std::string& b, size_t max_edits = 1000) {
  const LcsResult r = LongestCommonSubsequence(Seq(a), Seq(b), max_edits);
  std::string out;
  uint32_t last_i = 0, last_j = 0;
  for (size_t k = 0; k < r.pairs.size(); ++k) {
    const auto [i, j] = r.pairs[k];
    EXPECT_EQ(a[i], b[j]);
    if (k > 0) {
      EXPECT_GT(i, last_i);
      EXPECT_GT(j, last_j);
    }
    last_i = i, last_j = j;
    out += a[i];
  }
  return out;
}

TEST(CompareLcs, FindsALongestCommonSubsequence) {
  EXPECT_EQ(Common("ABCABBA", "CBABAC").size(), 4u);  // Myers' example: e.g. "BABA" / "CABA"
  EXPECT_EQ(Common("abcdef", "abcdef"), "abcdef");
  EXPECT_EQ(Common("abcdef", "abXcdef"), "abcdef");      // one insertion
  EXPECT_EQ(Common("abcdef", "abdef"), "abdef");         // one deletion
  EXPECT_EQ(Common("abc", "xyz"), "");
  EXPECT_EQ(Common("", "abc"), "");
  EXPECT_EQ(Common("aaaa", "aa"), "aa");
}

TEST(CompareLcs, FallsBackToAnIncreasingOccurrenceMatchWhenTooDifferent) {
  // Too many edits for a budget of 2: still a common subsequence (checked in Common), not empty.
  const LcsResult r = LongestCommonSubsequence(Seq("abcdefgh"), Seq("hgfedcbaabcd"), 2);
  EXPECT_FALSE(r.exact);
  EXPECT_FALSE(r.pairs.empty());
  EXPECT_EQ(Common("abcdefgh", "hgfedcbaabcd", 2).size(), r.pairs.size());
}

// ---- Priority sweep

TEST(CompareSweep, HighestLevelOwnsAnInstantAndSharesItOneOverK) {
  // [0,10) level 1; [5,15) level 0; [5,15) level 0 again; [20,30) level 2; nothing in [15,20).
  const std::vector<Claim> claims = {{0, 10, 0, 1}, {5, 15, 1, 0}, {5, 15, 2, 0}, {20, 30, 3, 2}};
  int64_t unclaimed = -1;
  const std::vector<double> owned = SweepClaims(claims, 0, 30, 3, &unclaimed);
  EXPECT_DOUBLE_EQ(owned[0], 5);   // [0,5) only
  EXPECT_DOUBLE_EQ(owned[1], 5);   // half of [5,15)
  EXPECT_DOUBLE_EQ(owned[2], 5);
  EXPECT_DOUBLE_EQ(owned[3], 10);
  EXPECT_EQ(unclaimed, 5);
}

// ---- Kernel classes

TEST(CompareKernelClass, NamesAndLaunchingOperators) {
  auto cls = [](std::string_view name, std::string_view op = "", bool bwd = false, bool opt = false) {
    return ClassifyComputeKernel({name, op, bwd, opt});
  };
  EXPECT_EQ(cls("ampere_sgemm_128x64_tn"), KernelClass::kGemm);
  EXPECT_EQ(cls("Cijk_Ailk_Bljk_SB_MT64x64x16"), KernelClass::kGemm);  // rocBLAS / Tensile
  EXPECT_EQ(cls("miopenSp3AsmConv_v21_1_3_gfx9_fp32_stride1"), KernelClass::kConvForward);  // MIOpen
  EXPECT_EQ(cls("void at::native::elementwise_kernel<...>", "aten::mm"), KernelClass::kGemm);
  EXPECT_EQ(cls("sm80_xmma_fprop_implicit_gemm_f16f16"), KernelClass::kConvForward);
  EXPECT_EQ(cls("sm80_xmma_dgrad_implicit_gemm"), KernelClass::kConvBackward);
  EXPECT_EQ(cls("some_kernel", "aten::convolution_backward"), KernelClass::kConvBackward);
  EXPECT_EQ(cls("flash_fwd_kernel<Flash_fwd_kernel_traits>"), KernelClass::kAttentionForward);
  EXPECT_EQ(cls("flash_bwd_dq_dk_dv_loop_kernel"), KernelClass::kAttentionBackward);
  EXPECT_EQ(cls("fmha_cutlassF_f16_aligned_64x64_rf_sm80", "aten::_efficient_attention_forward"),
            KernelClass::kAttentionForward);
  EXPECT_EQ(cls("multi_tensor_apply_kernel<...>"), KernelClass::kOptimizer);
  EXPECT_EQ(cls("vectorized_elementwise_kernel", "aten::add_", false, true), KernelClass::kOptimizer);
  EXPECT_EQ(cls("vectorized_elementwise_kernel", "aten::relu"), KernelClass::kElementwise);
}

// ---- Summaries from inline traces

// A trace builder: operators and annotations on the step thread (tid 1) by default.
struct TraceBuilder {
  json events = json::array();
  double t = 0;

  json& Op(const std::string& name, double ts, double dur, const char* cat = "cpu_op", json args = json::object(),
           int tid = 1) {
    events.push_back({{"ph", "X"}, {"cat", cat}, {"name", name}, {"pid", 100}, {"tid", tid}, {"ts", ts}, {"dur", dur},
                      {"args", args}});
    return events.back();
  }
  void Shapes(json& op, json dims, json types) {
    op["args"]["Input Dims"] = std::move(dims);
    op["args"]["Input type"] = std::move(types);
  }
  void Flow(const char* ph, int64_t id, double ts, int tid = 1) {
    json f = {{"ph", ph}, {"cat", "fwdbwd"}, {"name", "fwdbwd"}, {"id", id}, {"pid", 100}, {"tid", tid}, {"ts", ts}};
    if (std::string_view(ph) == "f") f["bp"] = "e";
    events.push_back(f);
  }
  std::string Text() const { return json{{"traceEvents", events}}.dump(); }
};

StatusOr<CompareSummary> Summarize(const std::string& text, const std::string& name = "t.json") {
  ReaderOptions reader;
  reader.keep_op_shapes = true;
  RANKSCOPE_ASSIGN_OR_RETURN(TraceModel model, ReadTraceBytes(text, name, reader));
  RANKSCOPE_ASSIGN_OR_RETURN(RankSummary rank, AnalyzeRank(model, AnalysisOptions{}));
  return BuildCompareSummary(model, std::move(rank), nullptr, SummaryOptions{});
}

// A training step at `t0`: data loading (`data_us`), forward with aten::linear around
// aten::addmm (`addmm_us`), an optional extra operator, the backward op of aten::addmm (linked by
// a fwdbwd flow), and the optimizer; the step ends 50 µs after the optimizer. `extra_us` > 0 adds
// "aten::extra" in forward and its backward op (linked too).
void AddStep(TraceBuilder& b, int number, double t0, double extra_us = 0, int batch = 32, const char* dtype = "float",
             double addmm_us = 250, double data_us = 100) {
  b.Op("ProfilerStep#" + std::to_string(number), t0, 0, "user_annotation");
  const size_t step_index = b.events.size() - 1;
  b.Op("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", t0 + 10, data_us, "user_annotation");
  const double f0 = t0 + 20 + data_us;
  const double linear_us = addmm_us + 50;
  b.Op("DistributedDataParallel.forward", f0, linear_us + extra_us + 40, "user_annotation");
  json& linear = b.Op("aten::linear", f0 + 10, linear_us);
  b.Shapes(linear, {{batch, 512}, {1024, 512}, {1024}}, {dtype, "float", "float"});
  json& addmm = b.Op("aten::addmm", f0 + 40, addmm_us);
  b.Shapes(addmm, {{1024}, {batch, 512}, {512, 1024}}, {"float", dtype, "float"});
  b.Flow("s", number * 10 + 1, f0 + 40);
  if (extra_us > 0) {
    b.Op("aten::extra", f0 + 20 + linear_us, extra_us);
    b.Flow("s", number * 10 + 2, f0 + 20 + linear_us);
  }
  double t = f0 + linear_us + extra_us + 60;
  if (extra_us > 0) {
    b.Op("autograd::engine::evaluate_function: ExtraBackward0", t, extra_us);
    b.Op("ExtraBackward0", t + 1, extra_us - 2);
    b.Flow("f", number * 10 + 2, t + 1);
    t += extra_us;
  }
  b.Op("autograd::engine::evaluate_function: AddmmBackward0", t, 200);
  json& grad = b.Op("AddmmBackward0", t + 1, 198);
  b.Shapes(grad, {{batch, 1024}}, {dtype});
  b.Flow("f", number * 10 + 1, t + 1);
  b.Op("Optimizer.step#SGD.step", t + 250, 100, "user_annotation");
  b.Op("aten::add_", t + 260, 80);
  b.events[step_index]["dur"] = t + 400 - t0;
}

std::string TrainingRun(int steps, double extra_us = 0, int batch = 32, const char* dtype = "float", double addmm_us = 250,
                double data_us = 100) {
  TraceBuilder b;
  for (int s = 0; s < steps; ++s) AddStep(b, s + 1, 10'000.0 * s, extra_us, batch, dtype, addmm_us, data_us);
  return b.Text();
}

double Sum(const CompareSummary& s) {
  double total = 0;
  for (const OpNode& n : s.ops) total += n.attributed_host_ns + n.attributed_device_ns;
  for (double g : s.gap_ns) total += g;
  for (double u : s.unlinked_ns) total += u;
  for (const CommRow& c : s.comm) total += c.exposed_ns;
  return total;
}

TEST(CompareSummary, CellsOfEveryStepAddUpToItsDuration) {
  auto s = Summarize(TrainingRun(4, 150));
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_EQ(s->steps.kept(), 4u);
  double steps = 0;
  for (int64_t d : s->steps.durations) steps += static_cast<double>(d);
  EXPECT_NEAR(Sum(*s), steps, 1e-6 * steps);
  EXPECT_TRUE(s->has_shapes);
  // The backward ops belong to the forward op their flow starts at.
  uint32_t evaluate = kNoIndex, addmm = kNoIndex;
  for (uint32_t i = 0; i < s->ops.size(); ++i) {
    if (s->names.Get(s->ops[i].name) == "autograd::engine::evaluate_function: AddmmBackward0") evaluate = i;
    if (s->names.Get(s->ops[i].name) == "aten::addmm") addmm = i;
  }
  ASSERT_NE(evaluate, kNoIndex);
  EXPECT_EQ(s->ops[evaluate].forward, addmm);
}

// Under autocast aten::linear runs inside aten::linear: the siblings after it are still the
// second and third aten::linear of their parent, not the first again.
TEST(CompareSummary, NeedsNoFunctionTables) {
  // compare runs the per-rank analysis without its function tables (job_compare.cc): the
  // summary built on it is the same.
  ReaderOptions reader;
  reader.keep_op_shapes = true;
  auto model = ReadTraceBytes(TrainingRun(4, 150), "t.json", reader);
  ASSERT_TRUE(model.ok());
  AnalysisOptions lean;
  lean.function_tables = false;
  auto full = AnalyzeRank(*model, AnalysisOptions{});
  auto without = AnalyzeRank(*model, lean);
  ASSERT_TRUE(full.ok() && without.ok());
  EXPECT_FALSE(full->cpu_ops.rows.empty());
  EXPECT_TRUE(without->cpu_ops.rows.empty() && without->kernels.rows.empty() && without->python_paths.rows.empty());
  auto a = BuildCompareSummary(*model, *full, nullptr, SummaryOptions{});
  auto b = BuildCompareSummary(*model, *without, nullptr, SummaryOptions{});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->steps.durations, b->steps.durations);
  EXPECT_EQ(a->ops.size(), b->ops.size());
  EXPECT_DOUBLE_EQ(Sum(*a), Sum(*b));
}

TEST(CompareSummary, AnOperatorInsideItselfDoesNotRestartItsSiblingsCount) {
  TraceBuilder b;
  for (int s = 0; s < 2; ++s) {
    const double t0 = 1000.0 * s;
    b.Op("ProfilerStep#" + std::to_string(s + 1), t0, 900, "user_annotation");
    b.Op("DistributedDataParallel.forward", t0 + 10, 800, "user_annotation");
    for (int k = 0; k < 3; ++k) {
      const double l0 = t0 + 20 + 250.0 * k;
      b.Op("aten::linear", l0, 200);
      b.Op("aten::to", l0 + 10, 20);
      b.Op("aten::linear", l0 + 40, 150);
      b.Op("aten::addmm", l0 + 50, 130);
    }
  }
  auto s = Summarize(b.Text());
  ASSERT_TRUE(s.ok()) << s.status().message();
  std::vector<const OpNode*> outer;
  for (const OpNode& n : s->ops) {
    if (s->names.Get(n.name) == "aten::linear" && n.parent != kNoIndex &&
        s->names.Get(s->ops[n.parent].name) == "DistributedDataParallel.forward") {
      outer.push_back(&n);
    }
  }
  ASSERT_EQ(outer.size(), 3u);  // three nodes, one instance each per step
  for (const OpNode* n : outer) EXPECT_EQ(n->count, 2u);
}

TEST(CompareSummary, ATraceWithoutStepsIsRefusedWithAReason) {
  TraceBuilder b;
  b.Op("aten::mm", 0, 100);
  auto s = Summarize(b.Text(), "nosteps.json");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("no profiler steps"), std::string::npos) << s.status().message();
  EXPECT_NE(s.status().message().find("nosteps.json"), std::string::npos);
}

RankComparison Compare(const std::string& base, const std::string& neu, AlignOptions align = {},
                       std::optional<int64_t> max_kernels = std::nullopt) {
  auto b = Summarize(base, "base.json");
  auto n = Summarize(neu, "new.json");
  EXPECT_TRUE(b.ok() && n.ok());
  RankCompareOptions options;
  options.align = std::move(align);
  options.max_kernels = max_kernels;
  return CompareRanks(*b, *n, options, true);
}

double SumOfDifferences(const RankComparison& r) {
  double total = r.variation_ns;
  for (const Difference& d : r.differences) total += d.delta_ns();
  return total;
}

TEST(CompareRanks, IdenticalRunsDifferByNothing) {
  const RankComparison r = Compare(TrainingRun(4), TrainingRun(4));
  EXPECT_EQ(r.delta_ns, 0);
  EXPECT_FALSE(r.beyond_noise);
  for (const Difference& d : r.differences) EXPECT_EQ(d.delta_ns(), 0) << d.subject;
  EXPECT_EQ(r.aligned_share, 1.0);
}

TEST(CompareRanks, AnAddedOperatorIsOneDifferenceWithItsBackwardOp) {
  const RankComparison r = Compare(TrainingRun(4), TrainingRun(4, 150));
  EXPECT_NEAR(r.delta_ns, 300'000, 1);  // forward 150 µs + backward 150 µs
  ASSERT_FALSE(r.differences.empty());
  const Difference& top = r.differences.front();
  EXPECT_EQ(top.cause, Cause::kAdded);
  EXPECT_EQ(top.subject, "aten::extra in DistributedDataParallel.forward");
  EXPECT_NEAR(top.delta_ns(), 300'000, 1);
  EXPECT_EQ(top.new_count, 1);  // the forward op; its backward joins it, uncounted
  EXPECT_NEAR(SumOfDifferences(r), r.delta_ns, 1);
  const auto added = std::count_if(r.operators.begin(), r.operators.end(), [](const OperatorRow& o) { return o.status == "added"; });
  EXPECT_EQ(added, 2);  // aten::extra and its evaluate_function (its child is inside the added row)
}

TEST(CompareRanks, ChangedShapesAreOneDifferenceSayingBeforeAndAfter) {
  // A bigger batch: the matmul and its backward take longer.
  const RankComparison r = Compare(TrainingRun(4, 0, 32), TrainingRun(4, 0, 64, "float", 450));
  ASSERT_FALSE(r.differences.empty());
  const Difference& top = r.differences.front();
  EXPECT_EQ(top.cause, Cause::kShapes);
  EXPECT_NEAR(r.delta_ns, 200'000, 1);
  EXPECT_NEAR(top.delta_ns(), 200'000, 1);
  EXPECT_NE(top.before.find("[32,512]"), std::string::npos) << top.before;
  EXPECT_NE(top.after.find("[64,512]"), std::string::npos) << top.after;
  EXPECT_NEAR(SumOfDifferences(r), r.delta_ns, 1);
}

TEST(CompareRanks, ChangedInputTypesArePrecision) {
  const RankComparison r = Compare(TrainingRun(4), TrainingRun(4, 0, 32, "c10::BFloat16", 150));
  EXPECT_NEAR(r.delta_ns, -100'000, 1);
  ASSERT_FALSE(r.differences.empty());
  EXPECT_EQ(r.differences.front().cause, Cause::kDtypes);
  EXPECT_NEAR(r.differences.front().delta_ns(), -100'000, 1);
}

TEST(CompareRanks, TheSameWorkSlowerIsItsUnit) {
  // The DataLoader sleeps: the annotation's own time grows, nothing else changes.
  const RankComparison r = Compare(TrainingRun(4), TrainingRun(4, 0, 32, "float", 250, 600));
  ASSERT_FALSE(r.differences.empty());
  const Difference& top = r.differences.front();
  EXPECT_EQ(top.cause, Cause::kSameWork);
  EXPECT_EQ(top.subject, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__");
  EXPECT_EQ(top.phase, "data_loading");
  EXPECT_NEAR(top.delta_ns(), 500'000, 1);
}

TEST(CompareRanks, OpMapPairsRenamedOperators) {
  TraceBuilder base, neu;
  for (int s = 0; s < 4; ++s) {
    base.Op("ProfilerStep#" + std::to_string(s), 1000.0 * s, 500, "user_annotation");
    base.Op("my::old_kernel", 1000.0 * s + 10, 200);
    neu.Op("ProfilerStep#" + std::to_string(s), 1000.0 * s, 500, "user_annotation");
    neu.Op("my::new_kernel", 1000.0 * s + 10, 200);
  }
  const RankComparison unmapped = Compare(base.Text(), neu.Text());
  EXPECT_EQ(unmapped.aligned_share, 0);
  const RankComparison mapped = Compare(base.Text(), neu.Text(), {false, {{"my::old_kernel", "my::new_kernel"}}});
  EXPECT_EQ(mapped.aligned_share, 1);
  for (const Difference& d : mapped.differences) EXPECT_EQ(d.delta_ns(), 0);
}

TEST(CompareRanks, NoiseBandIsStudentsTTimesTheStandardErrorOfTheStepDifference) {
  // BASE's steps alternate 1000 and 1100 µs, NEW's are 1200 µs each: a delta of 150 µs.
  auto compare = [](int steps) {
    TraceBuilder base, neu;
    for (int s = 0; s < steps; ++s) {
      base.Op("ProfilerStep#" + std::to_string(s), 10'000.0 * s, s % 2 ? 1100 : 1000, "user_annotation");
      base.Op("aten::mm", 10'000.0 * s + 10, 500);
      neu.Op("ProfilerStep#" + std::to_string(s), 10'000.0 * s, 1200, "user_annotation");
      neu.Op("aten::mm", 10'000.0 * s + 10, 500);
    }
    return Compare(base.Text(), neu.Text());
  };
  // Standard error of the difference: BASE's sample sd over its n steps; NEW does not vary, so
  // Welch's degrees of freedom are BASE's n - 1.
  auto standard_error = [](int n) { return std::sqrt(n * 50'000.0 * 50'000.0 / (n - 1) / n); };

  // Twelve steps: 150 µs is 10 standard errors, beyond t(11) = 3.85 of them.
  const RankComparison twelve = compare(12);
  EXPECT_NEAR(twelve.delta_ns, 150'000, 1);
  EXPECT_NEAR(twelve.noise_ns, 3.850 * standard_error(12), 1);
  EXPECT_TRUE(twelve.beyond_noise);

  // Four steps: 150 µs is 5.2 standard errors, beyond 3 of them but not t(3) = 9.22: from four
  // steps of one run its variation is too poorly known to call the delta more than noise.
  const RankComparison four = compare(4);
  EXPECT_NEAR(four.delta_ns, 150'000, 1);
  EXPECT_NEAR(four.noise_ns, 9.219 * standard_error(4), 1);
  EXPECT_FALSE(four.beyond_noise);
}

TEST(StudentT, WelchDegreesOfFreedomAndTheThreeSigmaQuantile) {
  // Equal variances and sizes: n_a + n_b - 2.
  EXPECT_NEAR(WelchDegreesOfFreedom(4.0, 10, 4.0, 10), 18.0, 1e-9);
  // One side varies: that side's n - 1; a one-step side adds nothing.
  EXPECT_NEAR(WelchDegreesOfFreedom(4.0, 10, 0.0, 10), 9.0, 1e-9);
  EXPECT_NEAR(WelchDegreesOfFreedom(4.0, 10, 9.0, 1), 9.0, 1e-9);
  EXPECT_GT(WelchDegreesOfFreedom(0.0, 10, 0.0, 10), 1e6);  // no variation: the normal limit
  EXPECT_DOUBLE_EQ(StudentTThreeSigma(9), 4.094);
  EXPECT_DOUBLE_EQ(StudentTThreeSigma(21), 3.422);  // between 20 and 25: the larger quantile
  EXPECT_DOUBLE_EQ(StudentTThreeSigma(1'000'000), 3.0);
}

TEST(CompareRanks, GpuWorkIsAttributedToTheOperatorThatLaunchedIt) {
  // Step thread tid 1: aten::mm launches a GEMM kernel (correlation 7) that runs while the host
  // waits in cudaDeviceSynchronize.
  auto run = [](double kernel_us) {
    TraceBuilder b;
    for (int s = 0; s < 4; ++s) {
      const double t0 = 10'000.0 * s;
      b.Op("ProfilerStep#" + std::to_string(s), t0, 200 + kernel_us, "user_annotation");
      b.Op("aten::mm", t0 + 10, 20);
      b.Op("cudaLaunchKernel", t0 + 12, 5, "cuda_runtime", {{"correlation", 7 + 10 * s}});
      b.Op("cudaDeviceSynchronize", t0 + 40, kernel_us, "cuda_runtime");
      b.events.push_back({{"ph", "X"}, {"cat", "kernel"}, {"name", "ampere_sgemm_64x64_nn"}, {"pid", 0}, {"tid", 7},
                          {"ts", t0 + 40}, {"dur", kernel_us},
                          {"args", {{"stream", 7}, {"device", 0}, {"correlation", 7 + 10 * s}, {"grid", {1, 1, 1}},
                                    {"block", {1, 1, 1}}}}});
    }
    return b.Text();
  };
  const RankComparison r = Compare(run(100), run(300));
  EXPECT_NEAR(r.delta_ns, 200'000, 1);
  ASSERT_FALSE(r.differences.empty());
  EXPECT_EQ(r.differences.front().cause, Cause::kSameWork);
  EXPECT_EQ(r.differences.front().subject, "aten::mm");
  EXPECT_NEAR(r.differences.front().delta_ns(), 200'000, 1);
  const auto gemm = std::find_if(r.overall.begin(), r.overall.end(), [](const OverallRow& o) { return o.key == "gpu.gemm"; });
  ASSERT_NE(gemm, r.overall.end());
  EXPECT_NEAR(gemm->delta_ns(), 200'000, 1);
  EXPECT_EQ(gemm->new_count, 1);
  ASSERT_EQ(r.kernel_classes.size(), 1u);
  EXPECT_EQ(r.kernel_classes[0].kernel_class, "gemm");
}

TEST(CompareRanks, SaysWhenTheGpuChangedAndTheStepDidNotOrTheOtherWayRound) {
  // Per step: aten::mm launches one GEMM of `kernel_us` at once; the host then works `host_us`
  // in aten::cpu_work, with no synchronisation: the step is whichever ends last.
  auto run = [](double kernel_us, double host_us) {
    TraceBuilder b;
    for (int s = 0; s < 4; ++s) {
      const double t0 = 10'000.0 * s;
      b.Op("ProfilerStep#" + std::to_string(s), t0, 40 + std::max(kernel_us, host_us), "user_annotation");
      b.Op("aten::mm", t0 + 5, 10);
      b.Op("cudaLaunchKernel", t0 + 6, 4, "cuda_runtime", {{"correlation", 1 + s}});
      b.events.push_back({{"ph", "X"}, {"cat", "kernel"}, {"name", "ampere_sgemm_64x64_nn"}, {"pid", 0}, {"tid", 7},
                          {"ts", t0 + 20}, {"dur", kernel_us}, {"args", {{"stream", 7}, {"device", 0}, {"correlation", 1 + s}}}});
      b.Op("aten::cpu_work", t0 + 20, host_us);
    }
    return b.Text();
  };
  auto kinds = [](const RankComparison& r) {
    std::vector<ObservationKind> out;
    for (const Observation& o : r.observations) out.push_back(o.kind);
    return out;
  };
  // Host-bound: the GEMM takes 300 µs more, hidden under 1 ms of host work.
  const RankComparison hidden = Compare(run(100, 1000), run(400, 1000));
  EXPECT_NEAR(hidden.delta_ns, 0, 1);
  const std::vector<ObservationKind> hidden_kinds = kinds(hidden);
  ASSERT_EQ(std::count(hidden_kinds.begin(), hidden_kinds.end(), ObservationKind::kGpuChangedStepDidNot), 1);
  const auto gpu = std::find_if(hidden.observations.begin(), hidden.observations.end(),
                                [](const Observation& o) { return o.kind == ObservationKind::kGpuChangedStepDidNot; });
  EXPECT_NEAR(gpu->value, 300'000, 1);  // Δ GPU busy
  // The host takes 300 µs more, the GPU's work is the same.
  const RankComparison host = Compare(run(100, 1000), run(100, 1300));
  EXPECT_NEAR(host.delta_ns, 300'000, 1);
  const std::vector<ObservationKind> host_kinds = kinds(host);
  EXPECT_EQ(std::count(host_kinds.begin(), host_kinds.end(), ObservationKind::kStepChangedGpuDidNot), 1);
  EXPECT_EQ(std::count(host_kinds.begin(), host_kinds.end(), ObservationKind::kGpuChangedStepDidNot), 0);
}

TEST(CompareRanks, MaxKernelsShowsTheChildrenOfAHeavyOperator) {
  // aten::block (same shapes in both runs) runs aten::mm, which launches 3 kernels per step; in
  // NEW they are slower. Without --max-kernels the operator table stops at aten::block.
  auto run = [](double kernel_us) {
    TraceBuilder b;
    for (int s = 0; s < 4; ++s) {
      const double t0 = 10'000.0 * s;
      b.Op("ProfilerStep#" + std::to_string(s), t0, 100 + 3 * kernel_us, "user_annotation");
      b.Op("aten::block", t0 + 5, 90 + 3 * kernel_us);
      b.Op("aten::mm", t0 + 10, 30);
      for (int k = 0; k < 3; ++k) {
        const int corr = 100 * s + k;
        b.Op("cudaLaunchKernel", t0 + 12 + 5 * k, 4, "cuda_runtime", {{"correlation", corr}});
        b.events.push_back({{"ph", "X"}, {"cat", "kernel"}, {"name", "ampere_sgemm_64x64_nn"}, {"pid", 0}, {"tid", 7},
                            {"ts", t0 + 50 + k * kernel_us}, {"dur", kernel_us},
                            {"args", {{"stream", 7}, {"device", 0}, {"correlation", corr}}}});
      }
      b.Op("cudaDeviceSynchronize", t0 + 45, 5 + 3 * kernel_us, "cuda_runtime");
    }
    return b.Text();
  };
  auto names = [](const RankComparison& r) {
    std::vector<std::string> out;
    for (const OperatorRow& o : r.operators) out.push_back(o.name);
    return out;
  };
  const RankComparison plain = Compare(run(100), run(200));
  const std::vector<std::string> shallow = names(plain);
  EXPECT_EQ(std::count(shallow.begin(), shallow.end(), "aten::mm"), 0) << fmt::format("{}", fmt::join(shallow, ", "));
  const RankComparison deep = Compare(run(100), run(200), {}, /*max_kernels=*/2);
  const std::vector<std::string> rows = names(deep);
  EXPECT_EQ(std::count(rows.begin(), rows.end(), "aten::mm"), 1) << fmt::format("{}", fmt::join(rows, ", "));
  const auto block = std::find_if(deep.operators.begin(), deep.operators.end(), [](const OperatorRow& o) { return o.name == "aten::block"; });
  ASSERT_NE(block, deep.operators.end());
  EXPECT_TRUE(block->expanded);
  // Three kernels per step of 100 -> 200 µs: the GPU time the child launched moved by 300 µs.
  const auto mm = std::find_if(deep.operators.begin(), deep.operators.end(), [](const OperatorRow& o) { return o.name == "aten::mm"; });
  ASSERT_NE(mm, deep.operators.end());
  EXPECT_NEAR(mm->new_device_ns - mm->base_device_ns, 300'000, 1);
  // Either way the delta and its differences are the same: the option changes the table only.
  EXPECT_NEAR(plain.delta_ns, deep.delta_ns, 1);
  EXPECT_NEAR(SumOfDifferences(deep), deep.delta_ns, 1);
}

// ---- Jobs from files

class CompareJobsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("rankscope_compare_test_" + std::to_string(::getpid()) + "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& rel, const std::string& text) {
    const auto path = dir_ / rel;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path) << text;
    return path.string();
  }
  std::filesystem::path dir_;
};

TEST_F(CompareJobsTest, RanksArePairedAndTheChangedOneIsNamed) {
  for (int r = 0; r < 3; ++r) {
    Write("base/rank" + std::to_string(r) + ".json", TrainingRun(4));
    Write("new/rank" + std::to_string(r) + ".json", r == 1 ? TrainingRun(4, 150) : TrainingRun(4));
  }
  auto job = CompareJobs({(dir_ / "base").string()}, {(dir_ / "new").string()}, CompareOptions{});
  ASSERT_TRUE(job.ok()) << job.status().message();
  ASSERT_EQ(job->ranks.size(), 3u);
  EXPECT_EQ(job->changed_ranks, std::vector<int64_t>{1});
  EXPECT_EQ(job->new_slowest_rank, 1);
  ASSERT_FALSE(job->findings.empty());
  EXPECT_EQ(job->findings.front().kind, FindingKind::kCompareRegression);
  EXPECT_EQ(job->findings.front().ranks, std::vector<int64_t>{1});
  EXPECT_EQ(job->findings.front().subject, "aten::extra in DistributedDataParallel.forward");
}

TEST_F(CompareJobsTest, StepsArePositionsInEachRun) {
  // BASE's steps are numbered 1..6, NEW's 101..106 (AddStep numbers them).
  TraceBuilder base, neu;
  for (int s = 0; s < 6; ++s) {
    AddStep(base, s + 1, 10'000.0 * s);
    AddStep(neu, s + 101, 10'000.0 * s, s >= 3 ? 150 : 0);  // NEW's last three steps are slower
  }
  Write("base/rank0.json", base.Text());
  Write("new/rank0.json", neu.Text());
  CompareOptions last;
  last.steps = "3:5";
  auto job = CompareJobs({(dir_ / "base").string()}, {(dir_ / "new").string()}, last);
  ASSERT_TRUE(job.ok()) << job.status().message();
  const RankComparison& r = job->ranks.front();
  EXPECT_EQ(r.base_steps.kept, 3u);
  EXPECT_EQ(r.new_steps.kept, 3u);
  EXPECT_NEAR(r.delta_ns, 300'000, 1);
  CompareOptions first;
  first.steps = ":2";
  job = CompareJobs({(dir_ / "base").string()}, {(dir_ / "new").string()}, first);
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(job->ranks.front().delta_ns, 0);
  CompareOptions beyond;
  beyond.steps = "9:";
  job = CompareJobs({(dir_ / "base").string()}, {(dir_ / "new").string()}, beyond);
  ASSERT_FALSE(job.ok());
  EXPECT_NE(job.status().message().find("no profiler step at positions 9.."), std::string::npos) << job.status().message();
}

TEST_F(CompareJobsTest, MismatchedRanksGiveAClearMessage) {
  Write("base/rank0.json", TrainingRun(4));
  Write("base/rank1.json", TrainingRun(4));
  Write("new/rank2.json", TrainingRun(4));
  Write("new/rank3.json", TrainingRun(4));
  auto job = CompareJobs({(dir_ / "base").string()}, {(dir_ / "new").string()}, CompareOptions{});
  ASSERT_FALSE(job.ok());
  EXPECT_NE(job.status().message().find("no rank in common: BASE has ranks 0-1 and NEW has ranks 2-3"), std::string::npos)
      << job.status().message();

  Write("new/rank0.json", TrainingRun(4));
  CompareOptions only;
  only.rank = 3;
  auto missing = CompareJobs({(dir_ / "base").string()}, {(dir_ / "new").string()}, only);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("--rank 3: only in NEW"), std::string::npos) << missing.status().message();

  auto partial = CompareJobs({(dir_ / "base").string()}, {(dir_ / "new").string()}, CompareOptions{});
  ASSERT_TRUE(partial.ok()) << partial.status().message();
  EXPECT_EQ(partial->ranks.size(), 1u);  // rank 0 only
  ASSERT_FALSE(partial->warnings.empty());
  EXPECT_NE(partial->warnings.front().find("comparing the 1 rank(s) in both"), std::string::npos);
}

TEST_F(CompareJobsTest, ATraceWithoutStepsNamesTheFile) {
  TraceBuilder b;
  b.Op("aten::mm", 0, 100);
  Write("base/rank0.json", TrainingRun(4));
  const std::string path = Write("new/rank0.json", b.Text());
  auto job = CompareJobs({(dir_ / "base").string()}, {(dir_ / "new").string()}, CompareOptions{});
  ASSERT_FALSE(job.ok());
  EXPECT_NE(job.status().message().find("NEW: " + path), std::string::npos) << job.status().message();
  EXPECT_NE(job.status().message().find("no profiler steps"), std::string::npos);
}

TEST_F(CompareJobsTest, DifferentModelsAreSaidToBeDifferent) {
  TraceBuilder other;
  for (int s = 0; s < 4; ++s) {
    other.Op("ProfilerStep#" + std::to_string(s), 10'000.0 * s, 900, "user_annotation");
    other.Op("aten::conv2d", 10'000.0 * s + 10, 600);
  }
  Write("base/rank0.json", TrainingRun(4));
  Write("new/rank0.json", other.Text());
  auto job = CompareJobs({(dir_ / "base").string()}, {(dir_ / "new").string()}, CompareOptions{});
  ASSERT_TRUE(job.ok()) << job.status().message();
  const auto& obs = job->ranks.front().observations;
  EXPECT_TRUE(std::any_of(obs.begin(), obs.end(),
                          [](const Observation& o) { return o.kind == ObservationKind::kFewOperatorsAligned && o.value == 0; }));
}

}  // namespace
}  // namespace rankscope::compare

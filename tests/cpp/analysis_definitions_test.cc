// Small hand-written traces that pin every definition of docs/definitions.md, edge cases
// included: overlapping streams, the 1/k split, zero-length and sub-µs kernels, activity outside
// the window, missing correlation, a step with no GPU work, graph launches, phases, memory,
// collectives and user communication patterns. Times in the traces are µs (Kineto's unit).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "rankscope/analysis/analyze_rank.h"
#include "rankscope/analysis/collectives.h"
#include "rankscope/ingest/read_trace.h"

namespace rankscope {
namespace {

using nlohmann::json;

json Slice(const char* cat, const std::string& name, double ts, double dur, json args = json::object(),
           int tid = 1) {
  return {{"ph", "X"}, {"cat", cat}, {"name", name}, {"pid", 100}, {"tid", tid}, {"ts", ts}, {"dur", dur}, {"args", args}};
}

json Kernel(const std::string& name, double ts, double dur, int stream, int64_t correlation = -1, json extra = {}) {
  json args = {{"stream", stream}, {"device", 0}, {"grid", {1, 1, 1}}, {"block", {32, 1, 1}}};
  if (correlation >= 0) args["correlation"] = correlation;
  if (extra.is_object()) args.update(extra);
  json k = Slice("kernel", name, ts, dur, args);
  k["pid"] = 0;
  k["tid"] = stream;
  return k;
}

json Gpu(const char* cat, const std::string& name, double ts, double dur, int stream, int64_t correlation = -1) {
  json k = Kernel(name, ts, dur, stream, correlation);
  k["cat"] = cat;
  return k;
}

json Launch(double ts, double dur, int64_t correlation, const char* name = "cudaLaunchKernel") {
  return Slice("cuda_runtime", name, ts, dur, {{"correlation", correlation}});
}

RankSummary Analyze(const json& events, std::optional<std::pair<double, double>> window_us = std::nullopt,
                    const CommPatterns* patterns = nullptr) {
  const std::string text = json{{"traceEvents", events}}.dump();
  auto model = ReadTraceBytes(text, "test.json");
  EXPECT_TRUE(model.ok()) << model.status().message();
  AnalysisOptions opt;
  opt.comm_patterns = patterns;
  if (window_us) {
    opt.window.kind = WindowRequest::Kind::kExplicit;
    opt.window.explicit_start = static_cast<int64_t>(window_us->first * 1000);
    opt.window.explicit_end = static_cast<int64_t>(window_us->second * 1000);
  }
  auto r = AnalyzeRank(*model, opt);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return std::move(r).value();
}

const FunctionStat* Row(const FunctionTable& t, std::string_view name) {
  for (const FunctionStat& f : t.rows) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

constexpr int kCompute = 0, kComm = 1, kMemory = 2, kSync = 3;

// compute [0,100) s7, communication [50,150) s8, memcpy [120,200) s9, Stream Wait Event
// [190,260) s7, W = [0,300): each instant goes to the highest class present.
TEST(Definitions, ClassesByPriorityOnOverlappingStreams) {
  const RankSummary r = Analyze({Kernel("gemm", 0, 100, 7), Kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 50, 100, 8),
                                 Gpu("gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", 120, 80, 9),
                                 Gpu("cuda_sync", "Stream Wait Event", 190, 70, 7)},
                                std::make_pair(0.0, 300.0));
  const GpuSummary& g = r.gpu;
  EXPECT_EQ(g.exposed_ns[kCompute], 100'000);
  EXPECT_EQ(g.exposed_ns[kComm], 50'000);
  EXPECT_EQ(g.exposed_ns[kMemory], 50'000);
  EXPECT_EQ(g.exposed_ns[kSync], 60'000);
  EXPECT_EQ(g.idle_ns, 40'000);
  EXPECT_EQ(g.busy_ns_all, 260'000);  // utilization 260/300
  EXPECT_EQ(g.busy_ns[kComm], 100'000);
  EXPECT_EQ(g.busy_ns[kMemory], 80'000);
  EXPECT_EQ(g.comm_compute_overlap_ns, 50'000);  // overlap = 50 / 100 of communication
  EXPECT_DOUBLE_EQ(Row(r.kernels, "gemm")->bottleneck_ns, 100'000);
  EXPECT_DOUBLE_EQ(Row(r.kernels, "ncclDevKernel_AllReduce_Sum_f32_RING_LL")->bottleneck_ns, 50'000);
  EXPECT_DOUBLE_EQ(Row(r.memory_ops, "Memcpy HtoD (Pinned -> Device)")->bottleneck_ns, 50'000);
  // Communication kernel instances carry their exposed time too.
  ASSERT_EQ(r.collective_types.size(), 1u);
  EXPECT_EQ(r.collective_types[0].op, "all_reduce");
  EXPECT_EQ(r.collective_types[0].algorithm, "RING");
  EXPECT_EQ(r.collective_types[0].protocol, "LL");
  EXPECT_EQ(r.collective_types[0].dtype, "f32");
  EXPECT_DOUBLE_EQ(r.collective_types[0].exposed_ns, 50'000);
  EXPECT_EQ(r.collective_types[0].overlap_ns, 50'000);
}

// Two compute kernels share [50,100): each gets half of it.
TEST(Definitions, SameClassInstantIsSharedOneOverK) {
  const RankSummary r = Analyze({Kernel("a", 0, 100, 7), Kernel("b", 50, 100, 8)}, std::make_pair(0.0, 150.0));
  EXPECT_DOUBLE_EQ(Row(r.kernels, "a")->bottleneck_ns, 75'000);
  EXPECT_DOUBLE_EQ(Row(r.kernels, "b")->bottleneck_ns, 75'000);
  EXPECT_EQ(r.gpu.exposed_ns[kCompute], 150'000);
  EXPECT_EQ(Row(r.kernels, "a")->in_window_ns, 100'000);  // proportion keeps the overlap
}

// A zero-length kernel counts as an execution but takes no time; a 250 ns kernel takes exactly
// 250 ns (no µs rounding).
TEST(Definitions, ZeroLengthAndSubMicrosecondKernels) {
  const RankSummary r = Analyze({Kernel("zero", 10, 0, 7), Kernel("tiny", 20, 0.25, 7), Kernel("tiny", 30, 0.125, 7)},
                                std::make_pair(0.0, 100.0));
  const FunctionStat* zero = Row(r.kernels, "zero");
  ASSERT_NE(zero, nullptr);
  EXPECT_EQ(zero->count, 1u);
  EXPECT_EQ(zero->total_ns, 0);
  EXPECT_DOUBLE_EQ(zero->bottleneck_ns, 0);
  const FunctionStat* tiny = Row(r.kernels, "tiny");
  EXPECT_EQ(tiny->count, 2u);
  EXPECT_EQ(tiny->total_ns, 375);
  EXPECT_EQ(tiny->median_ns, 188);  // (250 + 125) / 2, rounded
  EXPECT_EQ(r.gpu.busy_ns_all, 375);
}

// Instances count when they start in W; time is clipped to W; activity outside W is ignored.
TEST(Definitions, ActivityOutsideTheWindow) {
  const RankSummary r = Analyze({Kernel("early", 0, 100, 7), Kernel("inside", 120, 10, 7), Kernel("late", 250, 10, 7)},
                                std::make_pair(50.0, 200.0));
  const FunctionStat* early = Row(r.kernels, "early");
  ASSERT_NE(early, nullptr);
  EXPECT_EQ(early->count, 0u);
  EXPECT_EQ(early->in_window_ns, 50'000);
  EXPECT_DOUBLE_EQ(early->bottleneck_ns, 50'000);
  EXPECT_EQ(Row(r.kernels, "late"), nullptr);
  EXPECT_EQ(r.gpu.busy_ns_all, 60'000);
  EXPECT_EQ(r.window_ns(), 150'000);
}

// Idle breakdown of one stream: gaps are host wait (launched after the gap opened), kernel
// wait (< 30 µs) or other; time before the first / after the last activity is edge time.
TEST(Definitions, IdleBreakdownPerStream) {
  const RankSummary r = Analyze({Launch(0, 1, 1), Kernel("k1", 0, 10, 7, 1),
                                 Launch(5, 1, 2), Kernel("k2", 15, 10, 7, 2),    // gap 5 µs, launched early
                                 Launch(90, 2, 3), Kernel("k3", 100, 10, 7, 3),  // gap 75 µs, launched at 90 > 25
                                 Launch(50, 1, 4), Kernel("k4", 200, 10, 7, 4)}, // gap 90 µs, launched early
                                std::make_pair(0.0, 300.0));
  ASSERT_EQ(r.idle_by_stream.size(), 1u);
  const StreamIdle& s = r.idle_by_stream[0];
  EXPECT_EQ(s.busy_ns, 40'000);
  EXPECT_EQ(s.kernel_wait_ns, 5'000);
  EXPECT_EQ(s.host_wait_ns, 75'000);
  EXPECT_EQ(s.other_ns, 90'000);
  EXPECT_EQ(s.edge_ns, 90'000);
  EXPECT_EQ(s.busy_ns + s.kernel_wait_ns + s.host_wait_ns + s.other_ns + s.edge_ns, r.window_ns());
  // Launch delay: k2 starts 15 - (5 + 1) = 9 µs after its call returned; k1 0 (clamped from -1).
  EXPECT_EQ(r.launch.all.count, 4u);
  EXPECT_EQ(r.launch.all.max_ns, 149'000);  // k4: 200 - 51
  EXPECT_EQ(r.launch.all.median_ns, (9'000 + 8'000) / 2);
  // Queue depth: k4 waits from 50 to 200, k3 from 90 to 100 -> depth 2 in [90,100).
  ASSERT_EQ(r.launch.queues.size(), 1u);
  EXPECT_EQ(r.launch.queues[0].max_depth, 2);
}

// A kernel whose correlation has no launch call: no host-wait attribution, no launch delay,
// counted as unlinked, and a warning says so.
TEST(Definitions, MissingCorrelation) {
  const RankSummary r = Analyze({Kernel("k1", 0, 10, 7), Kernel("k2", 100, 10, 7, 42)}, std::make_pair(0.0, 200.0));
  EXPECT_EQ(r.launch.unlinked_activities, 2u);
  EXPECT_EQ(r.launch.all.count, 0u);
  EXPECT_EQ(r.idle_by_stream[0].other_ns, 90'000);
  EXPECT_EQ(r.idle_by_stream[0].host_wait_ns, 0);
  ASSERT_FALSE(r.warnings.empty());
  EXPECT_NE(r.warnings[0].find("no launch call"), std::string::npos);
}

// One cudaGraphLaunch starts two kernels: only the first has a launch delay.
TEST(Definitions, GraphLaunchCountsItsFirstKernel) {
  const RankSummary r = Analyze({Launch(0, 5, 9, "cudaGraphLaunch"), Kernel("g1", 10, 10, 7, 9), Kernel("g2", 20, 10, 7, 9)},
                                std::make_pair(0.0, 100.0));
  EXPECT_EQ(r.launch.all.count, 1u);
  EXPECT_EQ(r.launch.all.max_ns, 5'000);
  ASSERT_EQ(r.launch.by_api.size(), 1u);
  EXPECT_EQ(r.launch.by_api[0].api, "cudaGraphLaunch");
}

// A CPU-side function's bottleneck is its on-stack time while the GPU is idle.
TEST(Definitions, CpuFunctionBottleneckIsStackTimeWhileGpuIdle) {
  const RankSummary r = Analyze({Launch(0, 20, 1), Kernel("k", 10, 20, 7, 1),
                                 Slice("cpu_op", "aten::mm", 0, 40), Slice("cpu_op", "aten::mm", 35, 10)},
                                std::make_pair(0.0, 50.0));
  const FunctionStat* launch = Row(r.runtime_calls, "cudaLaunchKernel");
  EXPECT_DOUBLE_EQ(launch->bottleneck_ns, 10'000);  // [0,10) of [0,20)
  EXPECT_EQ(launch->in_window_ns, 20'000);
  const FunctionStat* mm = Row(r.cpu_ops, "aten::mm");
  EXPECT_EQ(mm->count, 2u);
  EXPECT_EQ(mm->in_window_ns, 50'000);              // 40 + 10, overlap kept
  EXPECT_DOUBLE_EQ(mm->bottleneck_ns, 25'000);      // union [0,45) minus GPU busy [10,30)
}

// Python call paths per thread: the same function under the same caller is one row.
TEST(Definitions, PythonCallPathsPerThread) {
  auto frame = [](const std::string& name, double ts, double dur, int id, json parent, int tid = 1) {
    return Slice("python_function", name, ts, dur, {{"Python id", id}, {"Python parent id", parent}}, tid);
  };
  const RankSummary r = Analyze({frame("a.py(1): main", 0, 100, 1, nullptr), frame("b.py(5): step", 10, 40, 2, 1),
                                 frame("b.py(5): step", 60, 10, 3, 1), frame("b.py(5): step", 0, 30, 4, nullptr, 2)},
                                std::make_pair(0.0, 100.0));
  const FunctionStat* nested = Row(r.python_paths, "a.py(1): main|b.py(5): step");
  ASSERT_NE(nested, nullptr);
  EXPECT_EQ(nested->count, 2u);
  EXPECT_EQ(nested->total_ns, 50'000);
  EXPECT_EQ(nested->detail, "1");
  const FunctionStat* other_thread = Row(r.python_paths, "b.py(5): step");
  ASSERT_NE(other_thread, nullptr);
  EXPECT_EQ(other_thread->detail, "2");
  EXPECT_DOUBLE_EQ(Row(r.python_paths, "a.py(1): main")->bottleneck_ns, 100'000);  // no GPU: always idle
}

// Step phases from the profiler's annotations, CPU and GPU side; a step with no GPU work.
TEST(Definitions, StepPhasesAndAStepWithoutGpuWork) {
  const RankSummary r = Analyze({
      Slice("user_annotation", "ProfilerStep#7", 0, 100), Slice("user_annotation", "ProfilerStep#8", 100, 50),
      Slice("user_annotation", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 0, 10),
      Slice("user_annotation", "Optimizer.zero_grad#SGD.zero_grad", 10, 2),
      Slice("user_annotation", "DistributedDataParallel.forward", 15, 25),
      Slice("cpu_op", "autograd::engine::evaluate_function: AddmmBackward0", 45, 20, json::object(), 2),
      Slice("cpu_op", "autograd::engine::evaluate_function: TBackward0", 70, 10, json::object(), 2),
      Slice("user_annotation", "Optimizer.step#SGD.step", 85, 10),
      Launch(20, 2, 1), Kernel("fwd", 50, 10, 7, 1),
      Slice("cuda_runtime", "cudaLaunchKernel", 50, 2, {{"correlation", 2}}, 2), Kernel("bwd", 70, 20, 7, 2),
  });
  ASSERT_EQ(r.steps.size(), 2u);
  const StepSummary& s = r.steps[0];
  EXPECT_EQ(s.number, 7);
  const auto& p = s.cpu_phase_ns;
  EXPECT_EQ(p[static_cast<int>(StepPhase::kDataLoading)], 10'000);
  EXPECT_EQ(p[static_cast<int>(StepPhase::kOptimizer)], 12'000);
  EXPECT_EQ(p[static_cast<int>(StepPhase::kForward)], 30'000);   // 15 .. backward start 45
  EXPECT_EQ(p[static_cast<int>(StepPhase::kBackward)], 35'000);  // 45 .. 80
  EXPECT_EQ(p[static_cast<int>(StepPhase::kOther)], 13'000);
  EXPECT_EQ(s.gpu_phase_ns[static_cast<int>(StepPhase::kForward)], 10'000);
  EXPECT_EQ(s.gpu_phase_ns[static_cast<int>(StepPhase::kBackward)], 20'000);
  EXPECT_EQ(s.gpu_busy_ns, 30'000);
  EXPECT_EQ(s.gpu_end_ns - s.gpu_start_ns, 40'000);
  const StepSummary& empty = r.steps[1];
  EXPECT_EQ(empty.gpu_busy_ns, 0);
  EXPECT_EQ(empty.gpu_start_ns, -1);
  EXPECT_EQ(empty.cpu_phase_ns[static_cast<int>(StepPhase::kForward)], 50'000);  // no markers: all forward
  EXPECT_EQ(r.window_ns(), 150'000);
  EXPECT_EQ(r.window_mode, WindowMode::kSteps);
}

// Older traces have no evaluate_function ops: autograd's "Fwd thread id" (0 on forward ops, the
// forward thread on backward ops) marks the passes.
TEST(Definitions, StepPhasesFromAutogradTags) {
  const RankSummary r = Analyze({
      Slice("user_annotation", "ProfilerStep#1", 0, 100),
      Slice("cpu_op", "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", 0, 5),
      Slice("cpu_op", "aten::conv2d", 10, 20, {{"Fwd thread id", 0}, {"Sequence number", 1}}),
      Slice("cpu_op", "aten::relu", 35, 5, {{"Fwd thread id", 0}, {"Sequence number", 2}}),
      Slice("cpu_op", "ReluBackward0", 50, 10, {{"Fwd thread id", 7}, {"Sequence number", 2}}),
      Slice("cpu_op", "ConvolutionBackward0", 60, 20, {{"Fwd thread id", 7}, {"Sequence number", 1}}),
      Slice("cpu_op", "Optimizer.step#SGD.step", 90, 10),
  });
  ASSERT_EQ(r.steps.size(), 1u);
  const auto& p = r.steps[0].cpu_phase_ns;
  EXPECT_EQ(p[static_cast<int>(StepPhase::kDataLoading)], 5'000);
  EXPECT_EQ(p[static_cast<int>(StepPhase::kForward)], 40'000);   // 10 .. backward start 50
  EXPECT_EQ(p[static_cast<int>(StepPhase::kBackward)], 30'000);  // 50 .. 80
  EXPECT_EQ(p[static_cast<int>(StepPhase::kOptimizer)], 10'000);
  EXPECT_EQ(p[static_cast<int>(StepPhase::kOther)], 15'000);     // 5..10 and 80..90
}

// --steps selects steps; a range without steps is an error naming what the trace has.
TEST(Definitions, StepSelection) {
  const std::string text = json{{"traceEvents", {Slice("user_annotation", "ProfilerStep#3", 0, 10),
                                                 Slice("user_annotation", "ProfilerStep#4", 10, 20),
                                                 Slice("user_annotation", "ProfilerStep#5", 30, 40)}}}.dump();
  auto model = ReadTraceBytes(text, "steps.json");
  ASSERT_TRUE(model.ok());
  AnalysisOptions opt;
  ASSERT_TRUE(ParseStepRange("4:", &opt.window).ok());
  auto r = AnalyzeRank(*model, opt);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->steps.size(), 2u);
  EXPECT_EQ(r->window_ns(), 60'000);
  WindowRequest bad;
  ASSERT_TRUE(ParseStepRange("9:12", &bad).ok());
  opt.window = bad;
  auto none = AnalyzeRank(*model, opt);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("steps 3..5"), std::string::npos);
  EXPECT_FALSE(ParseStepRange("5:3", &bad).ok());
  EXPECT_FALSE(ParseStepRange("x", &bad).ok());
}

// Collectives: message size from the kernel's args, bandwidth, and user patterns.
TEST(Definitions, CollectiveBytesBandwidthAndUserPatterns) {
  json args = {{"Collective name", "allreduce"}, {"In msg nelems", 1024}, {"Out msg nelems", 1024},
               {"Group size", 4}, {"dtype", "Float"}, {"Process Group Name", "0"}, {"Seq", 17}};
  auto patterns = CommPatterns::Compile({"dpsk::ep"});
  ASSERT_TRUE(patterns.ok());
  const RankSummary r = Analyze({Kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 0, 10, 8, -1, args),
                                 Kernel("void dpsk::ep::dispatch<8>(int)", 20, 10, 9)},
                                std::make_pair(0.0, 100.0), &*patterns);
  ASSERT_EQ(r.collective_types.size(), 2u);
  const CollectiveType& ar = r.collective_types[0];
  EXPECT_EQ(ar.op, "all_reduce");
  EXPECT_EQ(ar.group_size, 4);
  EXPECT_EQ(ar.bytes, 4096);
  EXPECT_NEAR(ar.algbw_gbps, 4096 / 10e-6 / 1e9, 1e-9);
  EXPECT_NEAR(ar.busbw_gbps, ar.algbw_gbps * 2 * 3 / 4, 1e-9);
  EXPECT_EQ(r.collective_types[1].op, "dpsk::ep::dispatch");
  EXPECT_EQ(r.gpu.busy_ns[kComm], 20'000);
  ASSERT_EQ(r.collectives.size(), 2u);
  EXPECT_EQ(r.collectives[0].seq, 17);
  EXPECT_EQ(r.process_groups[r.collectives[0].group].name, "0");
  EXPECT_FALSE(CommPatterns::Compile({"("}).ok());
}

// gloo: the collective is the process group's annotation; its size comes from Input Dims.
TEST(Definitions, GlooCollectiveFromAnnotation) {
  json gloo = Slice("user_annotation", "gloo:all_reduce", 10, 40,
                    {{"Input Dims", {{1000}}}, {"Input type", {"float"}}}, 2);
  const RankSummary r = Analyze({Slice("user_annotation", "ProfilerStep#1", 0, 100), gloo,
                                 Slice("cpu_op", "aten::conv2d", 0, 30)});
  ASSERT_EQ(r.collective_types.size(), 1u);
  const CollectiveType& t = r.collective_types[0];
  EXPECT_FALSE(t.on_gpu);
  EXPECT_EQ(t.op, "all_reduce");
  EXPECT_EQ(t.bytes, 4000);
  EXPECT_EQ(t.overlap_ns, 20'000);            // [10,30) under aten::conv2d on the training thread
  EXPECT_DOUBLE_EQ(t.exposed_ns, 20'000);     // [30,50)
  EXPECT_EQ(r.collectives[0].step, 1);
  EXPECT_EQ(r.steps[0].comm_exposed_ns, 20'000);  // the step launched it: its wait is the step's
}

// Untraced time: the instants of the step in which the process records nothing, keyed by the
// outermost slices around the gap. The step's own annotation covers nothing; a gap shorter than
// kMinUntracedGapNs is the interpreter; from the first gloo collective in flight on, the rank is
// waiting for its peers and then to be woken, not running code of its own.
TEST(Definitions, UntracedTimeBetweenRecordedSlices) {
  json gloo = Slice("user_annotation", "gloo:all_reduce", 700, 100, {{"Input Dims", {{1000}}}, {"Input type", {"float"}}},
                    2);
  const RankSummary r = Analyze({Slice("user_annotation", "ProfilerStep#1", 0, 2000),
                                 Slice("cpu_op", "aten::randint", 0, 10), Slice("cpu_op", "aten::random_", 2, 8),
                                 // 300 us with nothing recorded: a time.sleep before the forward
                                 Slice("user_annotation", "DistributedDataParallel.forward", 310, 200),
                                 Slice("cpu_op", "aten::linear", 310, 200),
                                 // 50 us: the interpreter between two ops
                                 Slice("cpu_op", "aten::mse_loss", 560, 40),
                                 // [600, 700) untraced, [700, 800) waiting in the all-reduce, [800, 950)
                                 // waking from the wait
                                 Slice("cpu_op", "aten::add_", 950, 20), gloo,
                                 // a collective that ends 20 us into a 500 us gap: not waited for
                                 Slice("user_annotation", "gloo:all_reduce", 940, 50,
                                       {{"Input Dims", {{1000}}}, {"Input type", {"float"}}}, 2),
                                 Slice("cpu_op", "aten::zero_", 1520, 10)});
  ASSERT_EQ(r.untraced.rows.size(), 3u);
  const FunctionStat* stall = Row(r.untraced, "between aten::add_ and aten::zero_");
  ASSERT_NE(stall, nullptr);
  EXPECT_EQ(stall->total_ns, 550'000);
  const FunctionStat* sleep = Row(r.untraced, "between aten::randint and DistributedDataParallel.forward");
  ASSERT_NE(sleep, nullptr);
  EXPECT_EQ(sleep->count, 1u);
  EXPECT_EQ(sleep->total_ns, 300'000);
  const FunctionStat* before_wait = Row(r.untraced, "between aten::mse_loss and aten::add_");
  ASSERT_NE(before_wait, nullptr);
  EXPECT_EQ(before_wait->total_ns, 100'000);  // the all-reduce and the wake-up after it are not untraced
}

// A gap is named by the thread that resumes after it: a helper thread's call that ends during it
// (a CUDA callback in one step of six) does not make it another row.
TEST(Definitions, UntracedTimeIsNamedByTheThreadThatResumes) {
  const RankSummary r = Analyze({Slice("user_annotation", "ProfilerStep#1", 0, 1000),
                                 Slice("cpu_op", "aten::zeros", 0, 100),
                                 Slice("cuda_runtime", "cudaPointerGetAttributes", 150, 10, json::object(), 7),
                                 Slice("user_annotation", "## backward ##", 400, 100),
                                 Slice("cpu_op", "aten::mm", 400, 100)});
  ASSERT_EQ(r.untraced.rows.size(), 1u);
  EXPECT_EQ(r.untraced.rows[0].name, "between aten::zeros and ## backward ##");
  EXPECT_EQ(r.untraced.rows[0].total_ns, 240'000);  // from the helper's call on: nothing runs
}

// Inside a record_function range, the instants in which no op runs are the range's own untraced
// time ("inside X"); a nested range keeps its own, and a gap under 100 us is the interpreter.
TEST(Definitions, UntracedTimeInsideAnnotations) {
  const RankSummary r = Analyze({Slice("user_annotation", "ProfilerStep#1", 0, 3000),
                                 Slice("cpu_op", "aten::zeros", 0, 900),
                                 Slice("user_annotation", "## backward ##", 1000, 1000),
                                 Slice("cpu_op", "aten::mm", 1010, 90),  // [1100, 1200): 100 us
                                 Slice("user_annotation", "hook", 1200, 300),
                                 Slice("cpu_op", "aten::add", 1250, 50),  // [1200, 1250) too short, [1300, 1500)
                                 Slice("cpu_op", "aten::mul", 1600, 100),  // [1500, 1600), then [1700, 2000)
                                 Slice("cpu_op", "aten::copy_", 2000, 1000)});
  const FunctionStat* pass = Row(r.untraced, "inside ## backward ##");
  ASSERT_NE(pass, nullptr);
  EXPECT_EQ(pass->count, 3u);
  EXPECT_EQ(pass->total_ns, 500'000);
  const FunctionStat* hook = Row(r.untraced, "inside hook");
  ASSERT_NE(hook, nullptr);
  EXPECT_EQ(hook->total_ns, 200'000);
  // Between aten::zeros and the range nothing at all runs: a gap as before, named by its neighbours.
  const FunctionStat* gap = Row(r.untraced, "between aten::zeros and ## backward ##");
  ASSERT_NE(gap, nullptr);
  EXPECT_EQ(gap->total_ns, 100'000);
  EXPECT_EQ(r.untraced.rows.size(), 3u);
}

// The host's waits for its GPU (host_gpu_waits.h), per step: a copy that returns after its own
// transfer ended waits from its start to the transfer's end; a synchronize call waits all along;
// a launch of 2 ms blocked (a full queue); a short launch and a copy whose transfer runs after
// it returned (an asynchronous copy) do not wait.
TEST(Definitions, HostWaitsForTheGpuPerStep) {
  const RankSummary r = Analyze({Slice("user_annotation", "ProfilerStep#1", 0, 10000),
                                 Slice("user_annotation", "ProfilerStep#2", 10000, 10000),
                                 Launch(100, 5, 1), Kernel("gemm", 200, 950, 7, 1),
                                 Launch(300, 950, 2, "cudaMemcpyAsync"),  // waits [300, 1200)
                                 Gpu("gpu_memcpy", "Memcpy DtoH (Device -> Pageable)", 1150, 50, 7, 2),
                                 Launch(4000, 10, 3, "cudaMemcpyAsync"),  // returns before its transfer
                                 Gpu("gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", 4100, 50, 8, 3),
                                 Slice("cuda_runtime", "cudaStreamSynchronize", 5000, 400),
                                 Launch(12000, 2000, 4), Kernel("gemm", 14100, 100, 7, 4),
                                 Launch(15000, 900, 5), Kernel("gemm", 15950, 100, 7, 5)});
  ASSERT_EQ(r.steps.size(), 2u);
  EXPECT_EQ(r.steps[0].host_gpu_wait_ns, 900'000 + 400'000);
  EXPECT_EQ(r.steps[1].host_gpu_wait_ns, 2'000'000);
}

// A launch into a full queue blocks for about a kernel: 300 us against its name's 5 us median is a
// wait; 40 us (under 50 us) and 30 us are not.
TEST(Definitions, HostWaitsIncludeLaunchesThatBlocked) {
  json events = json::array({Slice("user_annotation", "ProfilerStep#1", 0, 10000)});
  for (int i = 0; i < 9; ++i) events.push_back(Launch(100 + 10 * i, 5, 10 + i));
  events.push_back(Launch(1000, 300, 30));
  events.push_back(Launch(2000, 40, 31));
  events.push_back(Launch(3000, 30, 32));
  const RankSummary r = Analyze(events);
  ASSERT_EQ(r.steps.size(), 1u);
  EXPECT_EQ(r.steps[0].host_gpu_wait_ns, 300'000);
}

// A range that starts with its parent is written first (a trace writes a range when it ends): it
// is still the parent's child, and its untraced time is its own only.
TEST(Definitions, UntracedTimeOfARangeThatStartsWithItsParentIsNotTheParents) {
  const RankSummary r = Analyze({Slice("user_annotation", "ProfilerStep#1", 0, 1000),
                                 Slice("user_annotation", "inner", 100, 300),
                                 Slice("user_annotation", "outer", 100, 500),
                                 Slice("cpu_op", "aten::mm", 400, 200)});
  const FunctionStat* inner = Row(r.untraced, "inside inner");
  ASSERT_NE(inner, nullptr);
  EXPECT_EQ(inner->total_ns, 300'000);
  EXPECT_EQ(Row(r.untraced, "inside outer"), nullptr);  // [400, 600) runs aten::mm
}

// Hostile input: 100000 ranges on one thread, each overlapping the next without nesting. Each
// range's untraced time is found from its own gaps and children: linear (50 ms for this trace's
// `rankscope analyze`), not quadratic (a scan of the ranges starting inside each took 6.5 s, and
// would take ten minutes with a million).
TEST(Definitions, OverlappingRangesThatDoNotNestAreMeasuredInLinearTime) {
  json events = json::array({Slice("user_annotation", "ProfilerStep#1", 0, 200'000)});
  for (int i = 0; i < 100'000; ++i) events.push_back(Slice("user_annotation", "r", i, 100'000));
  const RankSummary r = Analyze(events);
  const FunctionStat* row = Row(r.untraced, "inside r");
  ASSERT_NE(row, nullptr);
  EXPECT_EQ(row->count, 100'000u);
}

// With Python stacks the frames cover the thread: no untraced time.
TEST(Definitions, NoUntracedTimeUnderPythonFrames) {
  const RankSummary r = Analyze({Slice("user_annotation", "ProfilerStep#1", 0, 1000),
                                 Slice("python_function", "train.py(10): main", 0, 1000, {{"Python id", 1}}),
                                 Slice("cpu_op", "aten::randint", 0, 10), Slice("cpu_op", "aten::linear", 500, 100)});
  EXPECT_TRUE(r.untraced.rows.empty());
}

// Without record_shapes gloo's spans carry no shapes: still the collectives, of unknown size.
TEST(Definitions, GlooCollectiveWithoutShapes) {
  const RankSummary r = Analyze({Slice("user_annotation", "ProfilerStep#1", 0, 100),
                                 Slice("user_annotation", "gloo:all_reduce", 10, 40, json::object(), 2),
                                 Slice("user_annotation", "my_region", 60, 10, json::object(), 2)});
  ASSERT_EQ(r.collective_types.size(), 1u);
  EXPECT_EQ(r.collective_types[0].op, "all_reduce");
  EXPECT_EQ(r.collective_types[0].bytes, -1);
  ASSERT_EQ(r.collectives.size(), 1u);
  EXPECT_EQ(r.collectives[0].bytes, -1);
  EXPECT_EQ(r.steps[0].comm_exposed_ns, 40'000);  // no CPU op hides it
}

// gloo point-to-point with record_shapes: c10d's send/recv ops name the peer as a rank of their
// group ("Concrete Inputs"[2]), which the trace does not name. Rank 3 of 8 in pipeline group
// [1, 3, 5, 7]: its group rank 2 is global 2 in the world group but 5 in the pipeline group, and
// the pipeline group decides; group rank 0 is 0, 1 or 2 by group, and again the pipeline's (1).
TEST(Definitions, GlooPointToPointPeersFromConcreteInputs) {
  auto op = [](const char* name, double ts, double dur, const char* peer) {
    return Slice("cpu_op", name, ts, dur, {{"Concrete Inputs", {"", "", peer, "0"}}});
  };
  const json events = {
      Slice("user_annotation", "ProfilerStep#1", 0, 10000),
      op("c10d::send", 100, 4000, "2"),
      // A send that waited for its peer: its span starts 2 ms before the op ends.
      Slice("user_annotation", "gloo:send", 2100, 10, {{"Input Dims", {{64, 256}}}, {"Input type", {"float"}}}),
      op("c10d::recv_", 5000, 100, "0"),
      Slice("user_annotation", "gloo:recv", 5090, 500, {{"Input Dims", {{64, 256}}}, {"Input type", {"float"}}}),
      op("c10d::send", 7000, 50, "not a rank"),
      Slice("user_annotation", "gloo:send", 7060, 10, {{"Input Dims", {{64, 256}}}, {"Input type", {"float"}}}),
  };
  auto group = [](const char* name, const char* desc, std::vector<int> ranks) {
    return json{{"pg_name", name}, {"pg_desc", desc}, {"backend_config", "cpu:gloo"}, {"pg_size", ranks.size()},
                {"ranks", ranks}};
  };
  const json trace = {{"distributedInfo", {{"backend", "gloo"}, {"rank", 3}, {"world_size", 8},
                                           {"pg_config", {group("0", "default_pg", {0, 1, 2, 3, 4, 5, 6, 7}),
                                                          group("2", "pp", {1, 3, 5, 7}), group("5", "dp", {2, 3})}}}},
                      {"traceEvents", events}};
  auto model = ReadTraceBytes(trace.dump(), "test.json");
  ASSERT_TRUE(model.ok()) << model.status().message();
  ASSERT_EQ(model->p2p_peers.size(), 2u);  // the third names no rank: ignored, the op kept
  auto r = AnalyzeRank(*model, AnalysisOptions{});
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->collectives.size(), 3u);
  EXPECT_EQ(r->collective_types[r->collectives[0].type].op, "send");
  EXPECT_EQ(r->collectives[0].start_ns, 100'000);  // where its op began
  EXPECT_EQ(r->collectives[0].peer, 5);
  EXPECT_EQ(r->collective_types[r->collectives[1].type].op, "recv");
  EXPECT_EQ(r->collectives[1].peer, 1);
  EXPECT_EQ(r->collectives[2].peer, -1);
}

// Memory: peak allocated/reserved in W, and allocations charged to the innermost CPU op.
TEST(Definitions, MemoryPeakAndAllocators) {
  auto mem = [](double ts, int64_t bytes, int64_t total) {
    return json{{"ph", "i"}, {"cat", "cpu_instant_event"}, {"name", "[memory]"}, {"pid", 100}, {"tid", 1},
                {"ts", ts}, {"s", "t"},
                {"args", {{"Bytes", bytes}, {"Total Allocated", total}, {"Total Reserved", 4096}, {"Device Type", 1},
                          {"Device Id", 0}, {"Addr", 1}}}};
  };
  const RankSummary r = Analyze({Slice("cpu_op", "aten::linear", 0, 50), Slice("cpu_op", "aten::empty", 10, 5),
                                 mem(12, 1024, 1024), mem(20, 512, 1536), mem(30, -1024, 512), mem(200, 4096, 4608)},
                                std::make_pair(0.0, 100.0));
  ASSERT_EQ(r.memory.devices.size(), 1u);
  EXPECT_EQ(r.memory.devices[0].peak_allocated, 1536);
  EXPECT_EQ(r.memory.devices[0].trace_peak_allocated, 4608);
  ASSERT_EQ(r.memory.top_allocators.size(), 2u);
  EXPECT_EQ(r.memory.top_allocators[0].op, "aten::empty");
  EXPECT_EQ(r.memory.top_allocators[0].bytes, 1024);
  EXPECT_EQ(r.memory.top_allocators[1].op, "aten::linear");
}

// Tables keep their worst rows and count the rest, so a summary stays bounded. Beyond the worst `max_rows`, a table keeps every row with at least 0.1 % of W (a rank that
// lacks a row then ran it for less, whatever the number of functions) and bounds the rest.
TEST(Definitions, TablesKeepTheWorstRowsAndEveryRowAboveTheFloor) {
  // W = [0, 100) µs: the floor is 100 ns. "d" (50 ns) is below it, "c" (10 µs) far above.
  const std::string text = json{{"traceEvents", {Kernel("a", 0, 30, 7), Kernel("b", 30, 20, 7), Kernel("c", 50, 10, 7),
                                                 Kernel("d", 60, 0.05, 7), Kernel("e", 70, 30, 8)}}}.dump();
  auto model = ReadTraceBytes(text, "cap.json");
  ASSERT_TRUE(model.ok());
  AnalysisOptions opt;
  opt.max_rows = 2;
  auto r = AnalyzeRank(*model, opt);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->kernels.rows.size(), 4u);
  EXPECT_EQ(r->kernels.rows[0].name, "a");  // still worst first
  EXPECT_EQ(r->kernels.rows[1].name, "e");
  EXPECT_EQ(r->kernels.rows[2].name, "b");
  EXPECT_EQ(r->kernels.rows[3].name, "c");
  EXPECT_EQ(r->kernels.omitted_rows, 1u);
  EXPECT_EQ(r->kernels.omitted_in_window_ns, 50);
  EXPECT_EQ(r->kernels.omitted_max_in_window_ns, 50);
  EXPECT_EQ(r->kernels.instances, 5u);
  EXPECT_EQ(r->window_mode, WindowMode::kGpuSpan);  // no steps: the span of GPU activity
}

TEST(Definitions, BusBandwidthFactors) {
  EXPECT_DOUBLE_EQ(BusBandwidthFactor("all_reduce", 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor("all_gather", 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor("reduce_scatter", 4), 3.0 / 4);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor("all_to_all", 2), 0.5);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor("broadcast", -1), 1.0);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor("all_reduce", -1), 0.0);
  EXPECT_EQ(ElementBytes("BFloat16"), 2);
  EXPECT_EQ(ElementBytes("c10::Half"), 2);
  EXPECT_EQ(ElementBytes("__nv_bfloat16"), 2);
  EXPECT_EQ(ElementBytes("Long"), 8);
  EXPECT_EQ(ElementBytes("mystery"), 0);
}

}  // namespace
}  // namespace rankscope

// What the diagnosis may rely on, pinned on small hand-written traces (issue 11): collectives
// from whatever a trace has, each once; function tables that let every rank be compared however
// many functions there are; kernels compared at the level that explains an excess; waits named
// as waits and the collector's own threads left out; steps derived for traces without
// ProfilerStep. Times in the traces are µs (Kineto's unit).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "rankscope/analysis/analyze_rank.h"
#include "rankscope/analysis/wait_functions.h"
#include "rankscope/cluster/cluster_diagnosis.h"
#include "rankscope/ingest/read_trace.h"

namespace rankscope {
namespace {

using nlohmann::json;

json Slice(const char* cat, const std::string& name, double ts, double dur, json args = json::object(), int tid = 1) {
  return {{"ph", "X"}, {"cat", cat}, {"name", name}, {"pid", 100}, {"tid", tid}, {"ts", ts}, {"dur", dur}, {"args", args}};
}

json Kernel(const std::string& name, double ts, double dur, int stream, json extra = json::object()) {
  json args = {{"stream", stream}, {"device", 0}, {"grid", {1, 1, 1}}, {"block", {32, 1, 1}}};
  args.update(extra);
  json k = Slice("kernel", name, ts, dur, args);
  k["pid"] = 0;
  k["tid"] = stream;
  return k;
}

json Step(int n, double ts, double dur) { return Slice("user_annotation", "ProfilerStep#" + std::to_string(n), ts, dur); }

json Python(const std::string& name, double ts, double dur, int id, int parent, int tid) {
  json args = {{"Python id", id}};
  if (parent >= 0) args["Python parent id"] = parent;
  return Slice("python_function", name, ts, dur, args, tid);
}

RankSummary Analyze(const json& events, int rank = 0, json top = json::object()) {
  json doc = top;
  doc["traceEvents"] = events;
  doc["distributedInfo"] = {{"rank", rank}, {"world_size", 4}, {"backend", "gloo"}};
  const std::string text = doc.dump();
  auto model = ReadTraceBytes(text, "rank" + std::to_string(rank) + ".json");
  EXPECT_TRUE(model.ok()) << model.status().message();
  auto r = AnalyzeRank(*model, AnalysisOptions{});
  EXPECT_TRUE(r.ok()) << r.status().message();
  RankSummary s = std::move(r).value();
  s.rank.rank = rank;
  s.rank_resolved = true;
  return s;
}

const FunctionStat* Row(const FunctionTable& t, std::string_view name) {
  for (const FunctionStat& f : t.rows) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

// ---- collectives -------------------------------------------------------------------------

// gloo with CUDA tensors (the H100 captures): the training thread launches kernels, DDP's
// c10d::allreduce_ op enqueues the bucket, gloo's worker thread runs gloo:all_reduce (with a
// gpu_user_annotation copy on a stream). Before issue 11 a GPU trace without NCCL kernels had no
// collectives at all: no matching, no clock link, a wait of 0.
TEST(CollectivesEverywhere, GlooSpansInAGpuTraceCountOnceAndTheirWaitIsExposed) {
  const RankSummary r = Analyze({
      Step(1, 0, 1000),
      Kernel("gemm", 0, 300, 7),
      Slice("cpu_op", "aten::addmm", 0, 290),
      Slice("cpu_op", "c10d::allreduce_", 300, 5, json::object(), 2),
      Slice("user_annotation", "gloo:all_reduce", 305, 495, json::object(), 3),
      [] {
        json copy = Slice("gpu_user_annotation", "gloo:all_reduce", 400, 10, json::object(), 20);
        copy["pid"] = 0;
        return copy;
      }(),
      Slice("cpu_op", "aten::add", 500, 100),
  });
  ASSERT_EQ(r.collectives.size(), 1u);
  ASSERT_EQ(r.collective_types.size(), 1u);
  const CollectiveType& t = r.collective_types[0];
  EXPECT_EQ(t.op, "all_reduce");
  EXPECT_FALSE(t.on_gpu);
  EXPECT_EQ(t.count, 1u);
  EXPECT_EQ(r.collectives[0].start_ns, 305'000);
  EXPECT_EQ(r.collectives[0].end_ns, 800'000);
  // Exposed: the span minus the rank's own work (CPU ops of the training threads, GPU compute):
  // [305, 800) minus [500, 600) = 395 µs, the step's communication wait.
  EXPECT_DOUBLE_EQ(t.exposed_ns, 395'000);
  ASSERT_EQ(r.steps.size(), 1u);
  EXPECT_EQ(r.steps[0].comm_exposed_ns, 395'000);
  EXPECT_DOUBLE_EQ(CommunicationExposedNs(r), 395'000);
}

// NCCL: the kernel is the collective; its record_param_comms op and nccl:all_reduce annotation
// only enqueue it and are not counted again.
TEST(CollectivesEverywhere, NcclKernelsAreTheCollectivesNotTheirCpuSide) {
  const json comms = {{"Collective name", "allreduce"}, {"dtype", "Float"}, {"In msg nelems", 1024},
                      {"Out msg nelems", 1024}, {"Group size", 4}, {"External id", 7}};
  const RankSummary r = Analyze({
      Step(1, 0, 1000),
      Slice("user_annotation", "nccl:all_reduce", 100, 20),
      Slice("cpu_op", "record_param_comms", 101, 10, comms),
      Kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 150, 200, 8, {{"External id", 7}}),
  });
  ASSERT_EQ(r.collectives.size(), 1u);
  ASSERT_EQ(r.collective_types.size(), 1u);
  EXPECT_TRUE(r.collective_types[0].on_gpu);
  EXPECT_EQ(r.collective_types[0].group_size, 4);
  EXPECT_EQ(r.collectives[0].bytes, 4096);
  EXPECT_DOUBLE_EQ(CommunicationExposedNs(r), 200'000);
}

// NCCL on a single rank launches no kernel: its record_param_comms op and its nccl:all_reduce
// annotation are two records of one collective.
TEST(CollectivesEverywhere, ANcclCollectiveWithoutAKernelCountsOnce) {
  const json comms = {{"Collective name", "allreduce"}, {"dtype", "Float"}, {"In msg nelems", 256}, {"Group size", 1}};
  const RankSummary r = Analyze({
      Step(1, 0, 1000),
      Slice("user_annotation", "nccl:all_reduce", 100, 20),
      Slice("cpu_op", "record_param_comms", 101, 10, comms),
      Slice("user_annotation", "nccl:all_reduce", 300, 20),
      Slice("cpu_op", "record_param_comms", 301, 10, comms),
  });
  ASSERT_EQ(r.collectives.size(), 2u);
  EXPECT_EQ(r.collectives[0].start_ns, 101'000);
  EXPECT_EQ(r.collectives[0].bytes, 1024);
}

// A trace with nothing but c10d's dispatcher ops still says when the rank called each
// collective (arrival); c10d::wait is not a collective.
TEST(CollectivesEverywhere, C10dOpsWhenNothingElseIsThere) {
  const RankSummary r = Analyze({
      Step(1, 0, 1000),
      Slice("cpu_op", "c10d::allreduce_", 100, 10, json::object(), 2),
      Slice("cpu_op", "c10d::broadcast_", 200, 10, json::object(), 2),
      Slice("cpu_op", "c10d::wait", 300, 400),
  });
  ASSERT_EQ(r.collectives.size(), 2u);
  ASSERT_EQ(r.collective_types.size(), 2u);
  EXPECT_EQ(r.collective_types[0].op, "all_reduce");
  EXPECT_EQ(r.collective_types[1].op, "broadcast");
  EXPECT_EQ(r.collective_types[0].algbw_gbps, 0);  // a call, not the transfer: no bandwidth
  EXPECT_EQ(r.collectives[0].step, 1);
}

// ---- function tables and levels ----------------------------------------------------------

// Four ranks with 600 distinct tiny CPU ops each (more than the 500 rows a table shows); rank 2
// also sleeps 100 µs per step in one more op. Before issue 11 every peer's table was "capped",
// so the peers were left out of the comparison and the op was compared with nobody.
TEST(FunctionTables, AFunctionIsComparedWithEveryRankHoweverManyFunctionsThereAre) {
  std::vector<RankSummary> ranks;
  for (int r = 0; r < 4; ++r) {
    json events = {Step(1, 0, 1000), Step(2, 1000, 1000)};
    for (int i = 0; i < 600; ++i) events.push_back(Slice("cpu_op", "op_" + std::to_string(i), 1.5 * i, 1));
    if (r == 2) {
      events.push_back(Slice("cpu_op", "injected", 1100, 100));
      events.push_back(Slice("cpu_op", "injected", 1500, 100));
    }
    ranks.push_back(Analyze(events, r));
    EXPECT_EQ(ranks.back().cpu_ops.rows.size(), 500u);
    EXPECT_EQ(ranks.back().cpu_ops.omitted_rows, r == 2 ? 101u : 100u);  // 1 µs each: under 0.1 % of W (2 µs)
    EXPECT_EQ(ranks.back().cpu_ops.omitted_max_in_window_ns, 1000);
  }
  auto d = DiagnoseCluster(ranks, ClusterOptions{});
  ASSERT_TRUE(d.ok()) << d.status().message();
  const auto it = std::find_if(d->functions.begin(), d->functions.end(),
                               [](const FunctionOutlier& f) { return f.name == "injected"; });
  ASSERT_NE(it, d->functions.end());
  EXPECT_EQ(it->rank, 2u);
  EXPECT_EQ(it->compared, 4u);
  EXPECT_DOUBLE_EQ(it->excess_ns, 100'000);
}

// One kernel launched with 14 grids, each 3 µs per step slower on rank 1: 42 µs per step in all
// (over the 20 µs minimum cost) but under it for any one grid|block. Compared by name, it is
// one finding; slowed in one shape only, the shape is reported.
TEST(FunctionLevels, ASlowdownSpreadOverLaunchShapesIsFoundAtTheKernelName) {
  auto ranks_with = [](bool spread) {
    std::vector<RankSummary> ranks;
    for (int r = 0; r < 4; ++r) {
      json events = {Step(1, 0, 1000), Step(2, 1000, 1000)};
      for (int step = 0; step < 2; ++step) {
        for (int g = 0; g < 14; ++g) {
          const bool slow = r == 1 && (spread || g == 6);
          const double dur = 10 + (slow ? (spread ? 3 : 42) : 0);
          events.push_back(Kernel("volta_sgemm_128x32_nt", 1000 * step + 60 * g, dur, 7, {{"grid", {g + 1, 1, 1}}}));
        }
      }
      ranks.push_back(Analyze(events, r));
    }
    return ranks;
  };
  auto kernel_rows = [](const ClusterDiagnosis& d) {
    std::vector<FunctionOutlier> out;
    for (const FunctionOutlier& f : d.functions) {
      if (f.kind == FunctionKind::kKernel) out.push_back(f);
    }
    return out;
  };
  auto spread = DiagnoseCluster(ranks_with(true), ClusterOptions{});
  ASSERT_TRUE(spread.ok());
  const std::vector<FunctionOutlier> by_name = kernel_rows(*spread);
  ASSERT_EQ(by_name.size(), 1u);
  EXPECT_EQ(by_name[0].name, "volta_sgemm_128x32_nt");
  EXPECT_EQ(by_name[0].detail, "");  // every launch shape together
  EXPECT_EQ(by_name[0].rank, 1u);
  EXPECT_DOUBLE_EQ(by_name[0].excess_ns, 42'000);
  auto one = DiagnoseCluster(ranks_with(false), ClusterOptions{});
  ASSERT_TRUE(one.ok());
  const std::vector<FunctionOutlier> by_shape = kernel_rows(*one);
  ASSERT_EQ(by_shape.size(), 1u);
  EXPECT_EQ(by_shape[0].detail, "[7,1,1]|[32,1,1]");
  EXPECT_DOUBLE_EQ(by_shape[0].excess_ns, 42'000);
}

// A backward hook's extra work runs inside autograd's evaluate_function op: the op and the hook's
// Python path carry the same excess, and the hook (the user's code) is the one reported.
TEST(FunctionLevels, AHookInsideAnAutogradOpIsNamedByItsPythonPath) {
  std::vector<RankSummary> ranks;
  for (int r = 0; r < 4; ++r) {
    json events = {Step(1, 0, 1000), Step(2, 1000, 1000)};
    for (int step = 0; step < 2; ++step) {
      const double t = 1000 * step + 100, extra = r == 1 ? 150 : 0;
      events.push_back(Python("train.py(9): step", t, 300 + extra, 10 * step + 1, -1, 2));
      events.push_back(Slice("cpu_op", "autograd::engine::evaluate_function: AccumulateGrad", t + 10, 100 + extra,
                             json::object(), 2));
      if (r == 1) events.push_back(Python("train.py(20): hook", t + 20, 150, 10 * step + 2, 10 * step + 1, 2));
    }
    ranks.push_back(Analyze(events, r));
  }
  auto d = DiagnoseCluster(ranks, ClusterOptions{});
  ASSERT_TRUE(d.ok());
  ASSERT_FALSE(d->functions.empty());
  EXPECT_EQ(d->functions[0].kind, FunctionKind::kPythonPath);
  EXPECT_EQ(d->functions[0].name, "train.py(9): step|train.py(20): hook");
  EXPECT_EQ(d->functions[0].rank, 1u);
  for (const FunctionOutlier& f : d->functions) EXPECT_NE(f.kind, FunctionKind::kCpuOp) << f.name;
}

// ---- waits and the collector's threads ----------------------------------------------------

TEST(Waits, SleepsAndSynchronizationsAreWaitsAndTheCollectorThreadIsLeftOut) {
  const RankSummary r = Analyze({
      Step(1, 0, 1000),
      Python("train.py(10): main", 0, 1000, 1, -1, 1),
      Python("<built-in function sleep>", 100, 300, 2, 1, 1),
      Python("threading.py(1012): run", 0, 1000, 3, -1, 2),
      Python("site-packages/rankscope/_channel.py(80): _loop", 0, 1000, 4, 3, 2),
      Slice("cuda_runtime", "cudaStreamSynchronize", 500, 200),
      Slice("cuda_runtime", "cudaLaunchKernel", 750, 10),
  });
  EXPECT_EQ(r.collector_threads, 1u);
  for (const FunctionStat& f : r.python_paths.rows) {
    EXPECT_EQ(f.name.find("_channel.py"), std::string::npos) << f.name;
    EXPECT_EQ(f.name.find("threading.py"), std::string::npos) << f.name;
  }
  ASSERT_EQ(r.python_paths.rows.size(), 2u);
  const FunctionStat* sleep = Row(r.python_paths, "train.py(10): main|<built-in function sleep>");
  ASSERT_NE(sleep, nullptr);
  EXPECT_TRUE(sleep->wait);
  EXPECT_FALSE(Row(r.python_paths, "train.py(10): main")->wait);
  EXPECT_TRUE(Row(r.runtime_calls, "cudaStreamSynchronize")->wait);
  EXPECT_FALSE(Row(r.runtime_calls, "cudaLaunchKernel")->wait);
}

// A DataLoader with worker processes: its main process waits for their batches on a pipe
// (multiprocessing's queue get, connection wait, a poll object's poll). A rank whose workers fall
// behind waits there longer, and that is a wait, not work (tests/data/cluster/dataloader_behind).
TEST(Waits, TheDataLoadersWaitForItsWorkersIsAWait) {
  for (const char* frame : {"<built-in method poll of select.poll object at 0x?>",
                            "<built-in method select of select.epoll object at 0x?>",
                            "multiprocessing/connection.py(933): wait", "multiprocessing/connection.py(440): _poll",
                            "multiprocessing/queues.py(113): get",
                            "/usr/lib/python3.11/multiprocessing/queues.py(113): get"}) {
    EXPECT_TRUE(IsWaitFunction(FunctionTableKind::kPythonFrame, frame)) << frame;
  }
  // A file of the job's own of the same name is the job's work.
  for (const char* frame : {"myproject/connection.py(12): wait", "torch/utils/data/dataloader.py(1262): _get_data",
                            "<built-in method poll of Poller object at 0x?>"}) {
    EXPECT_FALSE(IsWaitFunction(FunctionTableKind::kPythonFrame, frame)) << frame;
  }
}

// ---- steps without ProfilerStep ----------------------------------------------------------

std::vector<std::pair<int64_t, int64_t>> Spans(const RankSummary& r) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const StepSummary& s : r.steps) out.emplace_back(s.start_ns / 1000, s.end_ns / 1000);
  return out;
}

using SpanList = std::vector<std::pair<int64_t, int64_t>>;

TEST(DerivedSteps, OptimizerStepsAndKinetosIterationStart) {
  json events = {Slice("user_annotation", "Optimizer.step#AdamW.step", 90, 10),
                 Slice("user_annotation", "Optimizer.step#AdamW.step", 190, 10),
                 Slice("user_annotation", "Optimizer.step#AdamW.step", 290, 10),
                 Slice("cpu_op", "aten::mm", 20, 50)};
  const RankSummary partial = Analyze(events);
  EXPECT_EQ(partial.step_source, "optimizer_step");
  EXPECT_EQ(Spans(partial), (SpanList{{100, 200}, {200, 300}}));
  EXPECT_EQ(partial.steps.front().number, 0);
  events.push_back({{"ph", "i"}, {"s", "g"}, {"name", "Iteration Start: PyTorch Profiler"}, {"pid", "Traces"},
                    {"tid", "Trace PyTorch Profiler"}, {"ts", 0}});
  const RankSummary full = Analyze(events);
  EXPECT_EQ(Spans(full), (SpanList{{0, 100}, {100, 200}, {200, 300}}));
  EXPECT_EQ(full.window_mode, WindowMode::kSteps);
  EXPECT_EQ(full.steps[2].number, 2);
}

TEST(DerivedSteps, DataLoaderThenARepeatingPatternAndProfilerStepsWin) {
  json loader;
  for (int i = 0; i < 4; ++i) loader.push_back(Slice("user_annotation", "enumerate(DataLoader)#_Iter.__next__", 100 * i, 5));
  const RankSummary by_loader = Analyze(loader);
  EXPECT_EQ(by_loader.step_source, "dataloader");
  EXPECT_EQ(Spans(by_loader), (SpanList{{0, 100}, {100, 200}, {200, 300}}));

  json pattern;
  for (int i = 0; i < 4; ++i) {
    pattern.push_back(Slice("cpu_op", "train_step", 100 * i, 80));
    pattern.push_back(Slice("cpu_op", "aten::mm", 100 * i + 5, 20));
    pattern.push_back(Slice("cpu_op", "aten::mm", 100 * i + 30, 20));
  }
  pattern.push_back(Slice("cpu_op", "log", 385, 3));
  const RankSummary by_pattern = Analyze(pattern);
  EXPECT_EQ(by_pattern.step_source, "repeating_pattern");
  EXPECT_EQ(by_pattern.step_marker, "train_step");
  EXPECT_EQ(Spans(by_pattern), (SpanList{{0, 100}, {100, 200}, {200, 300}}));

  loader.push_back(Step(7, 0, 150));
  const RankSummary stepped = Analyze(loader);
  EXPECT_EQ(stepped.step_source, "profiler_step");
  EXPECT_EQ(Spans(stepped), (SpanList{{0, 150}}));
}

}  // namespace
}  // namespace rankscope

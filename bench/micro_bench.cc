// Google Benchmark micro-benchmarks of the ingest hot path, piece by piece. Run:
//   build/dev/bench/rankscope_micro_bench [--benchmark_filter=...]
// Reports throughput; asserts nothing.
#include <benchmark/benchmark.h>

#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "rankscope/base/cpu_target.h"
#include "rankscope/base/decimal.h"
#include "rankscope/base/string_pool.h"
#include "rankscope/ingest/byte_source.h"
#include "rankscope/ingest/read_trace.h"

#ifndef RANKSCOPE_SHARED_DIR
#define RANKSCOPE_SHARED_DIR "../shared"
#endif

namespace {

// A real trace, decompressed, in memory (nccl_data: 9.8 MB of Kineto JSON, 40k events).
const std::string& RealTraceJson() {
  static const std::string json = [] {
    auto source = rankscope::OpenTraceFile(RANKSCOPE_SHARED_DIR "/traces/hta/nccl_2rank_a100/nccl_data.json.gz");
    std::string out;
    if (!source.ok()) return out;
    std::string buf(1 << 20, '\0');
    while (true) {
      auto n = (*source)->Read(buf.data(), buf.size());
      if (!n.ok() || *n == 0) break;
      out.append(buf.data(), *n);
    }
    return out;
  }();
  return json;
}

void BM_ReadTraceFromMemory(benchmark::State& state) {
  const std::string& json = RealTraceJson();
  if (json.empty()) return state.SkipWithError("shared trace corpus not found");
  uint64_t events = 0;
  for (auto _ : state) {
    auto model = rankscope::ReadTraceBytes(json, "nccl_data.json");
    events += model->stats.elements;
    benchmark::DoNotOptimize(model);
  }
  state.SetBytesProcessed(static_cast<int64_t>(json.size()) * state.iterations());
  state.counters["events/s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.SetLabel(std::string(rankscope::CpuTargetName()));
}
BENCHMARK(BM_ReadTraceFromMemory)->Unit(benchmark::kMillisecond);

void BM_ParseMicrosToNanos(benchmark::State& state) {
  const std::string tokens[] = {"4424458002433.952", "1707417525512145", "39.372", "1", "340.024"};
  size_t i = 0;
  int64_t sum = 0;
  for (auto _ : state) {
    int64_t v;
    rankscope::ParseMicrosToNanos(tokens[i++ % 5], &v);
    sum += v;
  }
  benchmark::DoNotOptimize(sum);
}
BENCHMARK(BM_ParseMicrosToNanos);

void BM_StringPoolIntern(benchmark::State& state) {
  // Kernel-like names: long, sharing prefixes, a few hundred distinct ones repeating.
  std::vector<std::string> names;
  for (int i = 0; i < 300; ++i) {
    names.push_back("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
                    "at::detail::Array<char*, " + std::to_string(i) + "> >(int, ...)");
  }
  rankscope::StringPool pool;
  size_t i = 0;
  for (auto _ : state) benchmark::DoNotOptimize(pool.Intern(names[i++ % names.size()]));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_StringPoolIntern);

}  // namespace

BENCHMARK_MAIN();

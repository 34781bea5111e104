// make_scale_summaries: a semi-synthetic job of N ranks as rank summaries (.rsum), for
// bench/scale_bench.py. One real trace is summarised once; rank i is a copy of that summary with
// distributedInfo rank i of N, host node<i/8>, a clock offset per host, and one straggler (rank
// N/2 + 1, late at every collective by 40 ms, which the others spend waiting), as in
// cluster_reduce_bench. With --slow-hosts K, the 8 ranks of each of hosts 1..K are also slow, by
// 20 ms of local work per step (a slow node each). Writes OUT/rank<i>.pt.trace.json.gz.rsum.
//
//   build/dev/bench/make_scale_summaries --ranks 4096 [--slow-hosts K] OUT [trace]
#include <fmt/format.h>

#include <cstring>
#include <filesystem>
#include <string>

#include "rankscope/analysis/analyze_rank.h"
#include "rankscope/engine/job_files.h"
#include "rankscope/ingest/read_trace.h"
#include "rankscope/summary/summary_file.h"

int main(int argc, char** argv) {
  int n = 1024, slow_hosts = 0;
  std::string out, path = std::string(RANKSCOPE_SHARED_DIR) + "/traces/hta/nccl_2rank_a100/nccl_data.json.gz";
  for (int i = 1, positional = 0; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--ranks") && i + 1 < argc) n = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--slow-hosts") && i + 1 < argc) slow_hosts = std::atoi(argv[++i]);
    else if (positional++ == 0) out = argv[i];
    else path = argv[i];
  }
  if (out.empty() || n < 1) {
    fmt::print(stderr, "usage: make_scale_summaries --ranks N [--slow-hosts K] OUT [trace]\n");
    return 2;
  }
  auto model = rankscope::ReadTrace(path);
  if (!model.ok()) {
    fmt::print(stderr, "make_scale_summaries: {}\n", model.status().message());
    return 1;
  }
  auto one = rankscope::AnalyzeRank(*model, {});
  if (!one.ok()) {
    fmt::print(stderr, "make_scale_summaries: {}\n", one.status().message());
    return 1;
  }
  std::filesystem::create_directories(out);
  rankscope::summary::SummaryFile file;
  file.producer = "make_scale_summaries";
  file.options_key = rankscope::SummaryOptionsKey(rankscope::AnalyzeOptions{});
  for (int i = 0; i < n; ++i) {
    rankscope::RankSummary r = *one;
    r.distributed_rank = i;
    r.world_size = n;
    r.host_name = fmt::format("node{:04d}", i / 8);
    const int64_t offset = (i / 8) * 1'234'567 % 5'000'000;
    for (auto& c : r.collectives) {
      c.start_ns += offset;
      c.end_ns += offset;
    }
    if (i == n / 2 + 1) {
      for (auto& c : r.collectives) c.start_ns += 40'000'000;
    } else if (i / 8 >= 1 && i / 8 <= slow_hosts) {
      for (auto& st : r.steps) st.comm_exposed_ns += 20'000'000;  // 20 ms less wait: 20 ms more local work
      for (auto* t : {&r.kernels, &r.kernel_names, &r.kernels_by_op, &r.memory_ops, &r.runtime_calls, &r.cpu_ops,
                      &r.python_paths}) {
        for (auto& f : t->rows) f.in_window_ns += f.in_window_ns / 2;  // and every function 50 % slower
      }
    } else {
      for (auto& st : r.steps) st.comm_exposed_ns += 40'000'000;
    }
    file.trace.file_name = fmt::format("rank{}.pt.trace.json.gz", i);
    file.summary = std::move(r);
    const std::string to = fmt::format("{}/{}.rsum", out, file.trace.file_name);
    if (auto s = rankscope::summary::WriteSummaryFile(to, file); !s.ok()) {
      fmt::print(stderr, "make_scale_summaries: {}\n", s.message());
      return 1;
    }
  }
  fmt::print("{} summaries in {}\n", n, out);
  return 0;
}

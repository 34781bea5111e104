// cluster_reduce_bench: the reduce step alone. Reads one real trace, summarises it once, then
// builds N copies of the summary (rank i, 8 ranks per host, a clock offset per host, one rank with
// 40 ms more local work per step) and times DiagnoseCluster and the JSON of its result, best of
// --runs. It also prints the approximate heap size of one summary: what the whole job keeps per
// rank after ingestion.
//
//   build/dev/bench/cluster_reduce_bench [--runs N] [--ranks 256,1024,4096] [trace]
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "rankscope/analysis/analyze_rank.h"
#include "rankscope/ingest/read_trace.h"
#include "rankscope/report/analysis_report.h"
#include "rankscope/report/finding_text.h"

namespace {

using Clock = std::chrono::steady_clock;
using rankscope::RankSummary;

size_t TableBytes(const rankscope::FunctionTable& t) {
  size_t b = t.rows.capacity() * sizeof(rankscope::FunctionStat);
  for (const auto& r : t.rows) b += r.name.capacity() + r.detail.capacity();
  return b;
}

// Heap bytes held by a summary (strings and vectors; small-string storage counted in the object).
size_t ApproxBytes(const RankSummary& s) {
  size_t b = sizeof(RankSummary) + s.path.capacity() + s.steps.capacity() * sizeof(rankscope::StepSummary);
  for (const auto* t : {&s.kernels, &s.memory_ops, &s.runtime_calls, &s.cpu_ops, &s.python_paths}) b += TableBytes(*t);
  b += s.collectives.capacity() * sizeof(rankscope::CollectiveInstance);
  b += s.collective_types.capacity() * sizeof(rankscope::CollectiveType);
  b += s.process_groups.capacity() * sizeof(rankscope::ProcessGroupRef);
  b += s.idle_by_stream.capacity() * sizeof(rankscope::StreamIdle);
  for (const auto& w : s.warnings) b += w.capacity();
  return b;
}

std::vector<RankSummary> Job(const RankSummary& one, int n) {
  std::vector<RankSummary> ranks(n, one);
  for (int i = 0; i < n; ++i) {
    RankSummary& r = ranks[i];
    r.rank.rank = i;
    r.rank_resolved = true;
    r.host_name = fmt::format("node{:03d}", i / 8);
    const int64_t offset = (i / 8) * 1'234'567 % 5'000'000;
    for (auto& c : r.collectives) {
      c.start_ns += offset;
      c.end_ns += offset;
    }
    if (i == n / 2 + 1) {  // a straggler, late at every collective by 40 ms ...
      for (auto& c : r.collectives) c.start_ns += 40'000'000;
    } else {  // ... which the others spend waiting
      for (auto& st : r.steps) st.comm_exposed_ns += 40'000'000;
    }
  }
  return ranks;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 3;
  std::vector<int> counts = {256, 1024, 4096};
  std::string path = std::string(RANKSCOPE_SHARED_DIR) + "/traces/hta/nccl_2rank_a100/nccl_data.json.gz";
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--runs") && i + 1 < argc) {
      runs = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--ranks") && i + 1 < argc) {
      counts.clear();
      for (std::string_view s = argv[++i]; !s.empty();) {
        const size_t comma = s.find(',');
        counts.push_back(std::atoi(std::string(s.substr(0, comma)).c_str()));
        s = comma == std::string_view::npos ? std::string_view() : s.substr(comma + 1);
      }
    } else {
      path = argv[i];
    }
  }
  auto model = rankscope::ReadTrace(path);
  if (!model.ok()) {
    fmt::print(stderr, "cluster_reduce_bench: {}\n", model.status().message());
    return 1;
  }
  auto one = rankscope::AnalyzeRank(*model, {});
  if (!one.ok()) {
    fmt::print(stderr, "cluster_reduce_bench: {}\n", one.status().message());
    return 1;
  }
  fmt::print("source {}: {} steps, {} collective instances, {} kernel rows; summary ~{:.0f} KiB\n", path,
             one->steps.size(), one->collectives.size(), one->kernels.rows.size(), ApproxBytes(*one) / 1024.0);
  fmt::print("{:>6} {:>14} {:>12} {:>10}  {}\n", "ranks", "diagnose ms", "json ms", "findings", "top finding");
  for (int n : counts) {
    const std::vector<RankSummary> ranks = Job(*one, n);
    double diagnose_ms = 1e30, json_ms = 1e30;
    std::string top;
    size_t findings = 0;
    for (int r = 0; r < runs; ++r) {
      const auto t0 = Clock::now();
      auto d = rankscope::DiagnoseCluster(ranks, {});
      const auto t1 = Clock::now();
      const std::string json = rankscope::ClusterToJson(*d).dump();
      const auto t2 = Clock::now();
      diagnose_ms = std::min(diagnose_ms, std::chrono::duration<double, std::milli>(t1 - t0).count());
      json_ms = std::min(json_ms, std::chrono::duration<double, std::milli>(t2 - t1).count());
      findings = d->findings.size();
      top = d->findings.empty() ? "-" : rankscope::DescribeFinding(d->findings.front()).title.substr(0, 60);
    }
    fmt::print("{:>6} {:>14.1f} {:>12.1f} {:>10}  {}\n", n, diagnose_ms, json_ms, findings, top);
  }
  return 0;
}

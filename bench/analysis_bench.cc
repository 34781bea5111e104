// analysis_bench: per trace file, the time to read it (ingest) beside the time to analyse it
// (TraceModel -> RankSummary), on one thread, best of N runs. Analysis should stay a small
// fraction of ingest.
//
//   build/dev/bench/analysis_bench [--runs N] [files...]   (default: every trace in ../shared/traces)
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "rankscope/analysis/analyze_rank.h"
#include "rankscope/ingest/read_trace.h"
#include "rankscope/ingest/trace_set.h"

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

struct Row {
  std::string path;
  uint64_t json_bytes = 0, slices = 0;
  double ingest_s = 1e30, analysis_s = 1e30;
};

bool Measure(const std::string& path, int runs, Row* row) {
  row->path = path;
  for (int r = 0; r < runs; ++r) {
    const auto t0 = Clock::now();
    auto model = rankscope::ReadTrace(path);
    const auto t1 = Clock::now();
    if (!model.ok()) {
      fmt::print(stderr, "analysis_bench: {}\n", model.status().message());
      return false;
    }
    auto summary = rankscope::AnalyzeRank(*model, {});
    const auto t2 = Clock::now();
    if (!summary.ok()) {
      fmt::print(stderr, "analysis_bench: {}\n", summary.status().message());
      return false;
    }
    row->json_bytes = model->stats.json_bytes;
    row->slices = model->slices.size();
    row->ingest_s = std::min(row->ingest_s, Seconds(t0, t1));
    row->analysis_s = std::min(row->analysis_s, Seconds(t1, t2));
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 3;
  std::vector<std::string> inputs;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
      runs = std::max(1, std::atoi(argv[++i]));
    } else {
      inputs.push_back(argv[i]);
    }
  }
  if (inputs.empty()) inputs.push_back(RANKSCOPE_SHARED_DIR "/traces");
  auto files = rankscope::DiscoverTraceFiles(inputs);
  if (!files.ok()) {
    fmt::print(stderr, "analysis_bench: {}\n", files.status().message());
    return 1;
  }
  fmt::print("{:<48} {:>9} {:>9} {:>10} {:>11} {:>8}\n", "trace (one thread, best of runs)", "JSON MB", "slices",
             "ingest ms", "analysis ms", "ratio");
  Row total;
  total.ingest_s = total.analysis_s = 0;
  for (const std::string& path : *files) {
    Row row;
    if (!Measure(path, runs, &row)) continue;  // not a trace (e.g. a reference JSON beside them)
    const std::string name = path.size() > 48 ? "..." + path.substr(path.size() - 45) : path;
    fmt::print("{:<48} {:>9.1f} {:>9} {:>10.2f} {:>11.2f} {:>7.1f}%\n", name, row.json_bytes / 1e6, row.slices,
               row.ingest_s * 1e3, row.analysis_s * 1e3, 100.0 * row.analysis_s / row.ingest_s);
    total.json_bytes += row.json_bytes;
    total.slices += row.slices;
    total.ingest_s += row.ingest_s;
    total.analysis_s += row.analysis_s;
  }
  fmt::print("{:<48} {:>9.1f} {:>9} {:>10.2f} {:>11.2f} {:>7.1f}%\n", "all", total.json_bytes / 1e6, total.slices,
             total.ingest_s * 1e3, total.analysis_s * 1e3, 100.0 * total.analysis_s / total.ingest_s);
  return 0;
}

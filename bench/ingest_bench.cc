// Ingest throughput: MB/s of uncompressed JSON and events/s, end to end (read or gunzip +
// tokenize + parse + build the model), and peak RSS. Not a test: it reports, it never judges.
//
//   rankscope_ingest_bench [--threads N] [--parse-threads P] [--repeat R] [--chunk BYTES] [--no-pipeline] FILE...
//
// --parse-threads P parses each file on P threads (ReaderOptions::parse_threads) besides the
// reading thread and, for gzip, the inflate thread; cpu_s (user + sys of the whole process)
// says how much of the machine a run took.
// --no-pipeline reads each file into memory first and parses those bytes (ReadTraceBytes): a
// gzip file is then inflated on the parsing thread, not ahead of it on a thread of its own
// (ingest/pipelined_source.h), which measures what the pipeline saves on one big file. The file
// read is timed too.
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <vector>

#include "rankscope/base/cpu_target.h"
#include "rankscope/ingest/read_trace.h"
#include "rankscope/ingest/trace_set.h"

namespace {

struct RunResult {
  double seconds = 0;
  double cpu_seconds = 0;  // user + sys, every thread
  uint64_t json_bytes = 0;
  uint64_t events = 0;
  uint64_t model_bytes = 0;
};

// The file's bytes, then the model read from them on this thread (no inflate thread).
rankscope::StatusOr<rankscope::TraceModel> ReadWithoutPipeline(const std::string& path,
                                                               const rankscope::ReaderOptions& options) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return rankscope::ReadTraceBytes(bytes.view(), path, options);
}

double CpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

RunResult RunOnce(const std::vector<std::string>& files, unsigned threads, const rankscope::ReaderOptions& options,
                  bool pipeline) {
  std::atomic<uint64_t> bytes{0}, events{0}, model_bytes{0};
  std::atomic<int> failures{0};
  const double cpu_before = CpuSeconds();
  const auto start = std::chrono::steady_clock::now();
  auto each = [&](size_t, rankscope::StatusOr<rankscope::TraceModel> m) {
    if (!m.ok() && m.status().code() == rankscope::StatusCode::kNotATrace) return;  // e.g. a JSON sidecar
    if (!m.ok()) {
      std::fprintf(stderr, "error: %s\n", m.status().message().c_str());
      ++failures;
      return;
    }
    bytes += m->stats.json_bytes;
    events += m->stats.elements;
    model_bytes += m->MemoryBytes();
  };
  if (pipeline) {
    rankscope::ForEachTrace(files, options, threads, each);
  } else {
    for (size_t i = 0; i < files.size(); ++i) each(i, ReadWithoutPipeline(files[i], options));
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (failures > 0) std::exit(1);
  return {seconds, CpuSeconds() - cpu_before, bytes, events, model_bytes};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"rankscope ingest throughput benchmark"};
  std::vector<std::string> inputs;
  unsigned threads = 1;
  int repeat = 3;
  size_t chunk = rankscope::ReaderOptions{}.chunk_bytes;
  app.add_option("files", inputs, "trace files or directories")->required();
  app.add_option("--threads", threads, "files read in parallel");
  app.add_option("--repeat", repeat, "timed runs (the median is reported)");
  app.add_option("--chunk", chunk, "tokenizer chunk size in bytes");
  unsigned parse_threads = 1;
  app.add_option("--parse-threads", parse_threads, "threads parsing each file (1: the reading thread)");
  bool no_pipeline = false;
  app.add_flag("--no-pipeline", no_pipeline,
               "read each file into memory, then parse it on one thread (gzip inflated by the parser's thread); "
               "files one after the other, --threads is ignored");
  CLI11_PARSE(app, argc, argv);

  auto files = rankscope::DiscoverTraceFiles(inputs);
  if (!files.ok()) {
    std::fprintf(stderr, "error: %s\n", files.status().message().c_str());
    return 1;
  }
  rankscope::ReaderOptions options;
  options.chunk_bytes = chunk;
  options.parse_threads = parse_threads;
  std::vector<RunResult> runs;
  for (int r = 0; r < repeat; ++r) {
    runs.push_back(RunOnce(*files, threads, options, !no_pipeline));
    const RunResult& x = runs.back();
    std::printf("run %d: %.3f s  cpu %.3f s  %.1f MB  %.0f MB/s  %.2f M events/s\n", r + 1, x.seconds, x.cpu_seconds,
                x.json_bytes / 1e6, x.json_bytes / 1e6 / x.seconds, x.events / 1e6 / x.seconds);
  }
  std::sort(runs.begin(), runs.end(), [](const RunResult& a, const RunResult& b) { return a.seconds < b.seconds; });
  const RunResult& med = runs[runs.size() / 2];
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::printf(
      "reader=%s pipeline=%s files=%zu threads=%u parse_threads=%u json_MB=%.1f events=%llu median_s=%.3f cpu_s=%.3f MB_per_s=%.0f "
      "Mevents_per_s=%.2f model_MB=%.1f peak_rss_MB=%.1f rss_over_json=%.3f\n",
      std::string(rankscope::CpuTargetName()).c_str(), no_pipeline ? "no" : "yes", files->size(), threads, parse_threads, med.json_bytes / 1e6,
      static_cast<unsigned long long>(med.events), med.seconds, med.cpu_seconds, med.json_bytes / 1e6 / med.seconds,
      med.events / 1e6 / med.seconds, med.model_bytes / 1e6, usage.ru_maxrss / 1024.0,
      usage.ru_maxrss * 1024.0 / (threads == 1 ? static_cast<double>(med.json_bytes) : static_cast<double>(med.json_bytes)));
  return 0;
}

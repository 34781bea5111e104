// libFuzzer target for what the hang analysis reads from files a job's user writes: Flight
// Recorder dumps (JSON, and pickles as PyTorch writes them on a timeout, hang/pickle_reader.h)
// and stack snapshots. The daemon (root) reads them too, so any bytes must give a value or a
// Status: never a crash, an exception, unbounded memory, or a value that cannot be written
// out again as JSON. The first byte picks the parser; the rest is its input. Case 3 analyses one
// rank's fuzzed stacks and dump (split at the first NUL) beside a healthy rank 1 and renders both
// reports: the matching and the rules must hold on any values the parsers let through (huge
// world sizes, ranks, sequence ids, times).
#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <string_view>

#include <nlohmann/json.hpp>

#include "rankscope/hang/flight_recorder.h"
#include "rankscope/hang/hang_analysis.h"
#include "rankscope/hang/pickle_reader.h"
#include "rankscope/hang/stack_snapshot.h"
#include "rankscope/report/hang_report.h"

namespace {

void FuzzPickle(std::string_view bytes) {
  // Small limits so that the limit paths are reached too.
  auto j = rankscope::hang::ReadPickle(bytes, {.max_values = 20000, .max_depth = 16});
  if (j.ok()) (void)j->dump();  // throws (and the fuzzer stops) if a string is not valid UTF-8
}

constexpr std::string_view kRank1Stacks =
    "rankscope-stacks 1\nrank: 1\nworld_size: 2\njob: j\nsteps_completed: 9\nseconds_since_last_step: 40\n"
    "threads: 1\n\nthread 7 \"MainThread\" main\n  File \"train.py\", line 9, in step\n    dist.all_reduce(x)\n";
constexpr std::string_view kRank1Dump =
    R"({"version": "2.10", "pg_config": {}, "rankscope": {"rank": 1, "world_size": 2, "job": "j"}, "entries": [)"
    R"({"process_group": ["0", "default_pg"], "collective_seq_id": 1, "profiling_name": "gloo:all_reduce", )"
    R"("input_sizes": [[4]], "input_dtypes": ["Float"], "retired": true, "time_created_ns": 1000},)"
    R"({"process_group": ["0", "default_pg"], "collective_seq_id": 2, "profiling_name": "gloo:all_reduce", )"
    R"("input_sizes": [[4]], "input_dtypes": ["Float"], "retired": false, "time_created_ns": 2000}]})";

void FuzzAnalysis(std::string_view rest) {
  const size_t split = std::min(rest.find('\0'), rest.size());
  rankscope::hang::SnapshotFiles files;
  if (auto s = rankscope::hang::ParseStacks(rest.substr(0, split), "rank0.stacks.txt"); s.ok()) {
    files.stacks.push_back(std::move(*s));
  }
  if (split < rest.size()) {
    auto d = rankscope::hang::ParseFlightRecorder(rest.substr(split + 1), "rank0.flightrecorder", 0);
    if (d.ok()) files.dumps.push_back(std::move(*d));
  }
  files.stacks.push_back(*rankscope::hang::ParseStacks(kRank1Stacks, "rank1.stacks.txt"));
  files.dumps.push_back(*rankscope::hang::ParseFlightRecorder(kRank1Dump, "rank1.flightrecorder", 1));
  for (const auto& s : files.stacks) files.world_size = std::max(files.world_size, s.world_size);
  for (const auto& d : files.dumps) files.world_size = std::max(files.world_size, d.world_size);
  const auto analysis = rankscope::hang::AnalyzeSnapshot(std::move(files), {});
  (void)rankscope::HangReportJson(analysis).dump();  // throws on text that is not UTF-8
  (void)rankscope::HangReportText(analysis, false);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  switch (data[0] % 4) {
    case 0: FuzzPickle(rest); break;
    case 1: (void)rankscope::hang::ParseFlightRecorder(rest, "nccl_trace_rank_3", 3); break;
    case 2: (void)rankscope::hang::ParseStacks(rest, "rank0.stacks.txt"); break;
    default: FuzzAnalysis(rest); break;
  }
  return 0;
}

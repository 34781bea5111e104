// compare_bench: the time `rankscope compare` takes on two traces beside the time to ingest them,
// on one thread, best of N runs, with peak RSS. The target (issue 12): comparing two traces takes
// at most about twice the time of ingesting them.
//
//   build/dev/bench/compare_bench [--runs N] [--threads T] BASE NEW
//
// ingest    ReadTrace of BASE, then of NEW (the reader's default options)
// compare   CompareJobs on BASE and NEW: read both through the engine (with input shapes), map
//           each rank (RankSummary + compare summary), align, attribute, every table
#include <fmt/format.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>

#include "rankscope/compare/job_compare.h"
#include "rankscope/ingest/read_trace.h"

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

double PeakRssMb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 3;
  unsigned threads = 1;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
      runs = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
      threads = static_cast<unsigned>(std::atoi(argv[++i]));
    } else {
      files.push_back(argv[i]);
    }
  }
  if (files.size() != 2) {
    fmt::print(stderr, "usage: compare_bench [--runs N] [--threads T] BASE NEW\n");
    return 2;
  }
  // Ingest and compare alternate, so that both see the same machine load; the best of each
  // is reported (the second vCPU of the development machine is often busy with other work).
  double ingest = 1e30, compare = 1e30, json_mb = 0, ingest_rss = 0;
  size_t differences = 0;
  for (int r = 0; r < runs; ++r) {
    const auto t0 = Clock::now();
    uint64_t bytes = 0;
    for (const std::string& f : files) {
      auto model = rankscope::ReadTrace(f);
      if (!model.ok()) {
        fmt::print(stderr, "compare_bench: {}\n", model.status().message());
        return 1;
      }
      bytes += model->stats.json_bytes;
    }
    ingest = std::min(ingest, Seconds(t0, Clock::now()));
    json_mb = static_cast<double>(bytes) / 1e6;
    if (r == 0) ingest_rss = PeakRssMb();
    rankscope::compare::CompareOptions opt;
    opt.threads = threads;
    const auto t1 = Clock::now();
    auto job = rankscope::compare::CompareJobs({files[0]}, {files[1]}, opt);
    compare = std::min(compare, Seconds(t1, Clock::now()));
    if (!job.ok()) {
      fmt::print(stderr, "compare_bench: {}\n", job.status().message());
      return 1;
    }
    differences = job->ranks.front().differences.size();
  }
  fmt::print("| {:.0f} MB JSON (both) | {} | ingest {:.2f} s ({:.0f} MB/s) | compare {:.2f} s | ratio {:.2f} | "
             "peak RSS ingest {:.0f} MB, compare {:.0f} MB | {} differences |\n",
             json_mb, threads, ingest, json_mb / ingest, compare, compare / ingest, ingest_rss, PeakRssMb(),
             differences);
  return 0;
}

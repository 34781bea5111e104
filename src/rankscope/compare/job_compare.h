// Comparing two jobs: BASE and NEW are trace files, directories of ranks or capture directories.
// Every file of both runs is read and reduced to a CompareSummary in parallel (the model is
// dropped right away); ranks are paired by rank number (one file against one file is paired
// whatever the numbers); each pair is compared (rank_compare.h); and for the job: the median
// and the slowest rank of each run, which ranks changed beyond their noise band, each rank's wait
// for its peers at collectives (cluster diagnosis), and the findings.
//
// Full tables are built for the focus ranks: --rank R, else the rank with the median step-time
// delta and NEW's slowest rank.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "rankscope/base/status.h"
#include "rankscope/compare/compare_result.h"

namespace rankscope::compare {

struct CompareOptions {
  std::string steps;                      // --steps A:B: positions among each run's profiled steps (0 = first)
  std::vector<std::string> comm_patterns; // --comm-pattern
  std::optional<int64_t> rank;            // --rank R
  bool use_input_shapes = false;
  std::vector<std::string> op_map;        // "OLD=NEW"
  std::optional<int64_t> max_kernels;
  bool keep_outlier_steps = false;
  size_t max_differences = 100;
  unsigned threads = 0;                   // 0: every core
  std::function<void()> file_done;        // progress, from worker threads; may be empty
};

// Fails with a message the user can act on: unreadable traces, traces without steps, no rank in
// common, --rank not in both runs, a bad --op-map.
StatusOr<JobComparison> CompareJobs(const std::vector<std::string>& base_inputs,
                                    const std::vector<std::string>& new_inputs, const CompareOptions& options);

// Number of trace files the inputs expand to (for a progress line).
size_t CountTraceFiles(const std::vector<std::string>& inputs);

}  // namespace rankscope::compare

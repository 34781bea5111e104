// AnalyzeJob over MPI processes (`mpirun -np N rankscope analyze --mpi PATHS...`, docs/scale.md):
// for trace sets on shared storage that one machine would take too long to read. Every process
// discovers the same files and maps its slice of them (balanced by size); the summaries travel,
// encoded in the summary format, to process 0, which reduces them exactly as AnalyzeJob does, so
// the report is the single-process report.
#pragma once

#include <optional>

#include "rankscope/base/status.h"
#include "rankscope/engine/analyze_job.h"

namespace rankscope {

// False when rankscope was built without MPI (then AnalyzeJobMpi fails saying so).
bool MpiAvailable();

// Initialises MPI (once per process) and finalises it when the guard goes.
class MpiSession {
 public:
  MpiSession();
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  int rank() const { return rank_; }
  int size() const { return size_; }

 private:
  int rank_ = 0;
  int size_ = 1;
};

// On process 0: the job's report. On the others: nullopt once their summaries are sent.
// A whole-job error (no trace, bad options) is found by every process alike, before any message.
StatusOr<std::optional<JobReport>> AnalyzeJobMpi(const MpiSession& mpi, const JobInputs& inputs,
                                                 const AnalyzeOptions& options, Progress* progress);

// Which process maps each file: the largest files first, each to the least loaded process.
std::vector<int> BalanceBySize(const std::vector<uint64_t>& sizes, int processes);

}  // namespace rankscope

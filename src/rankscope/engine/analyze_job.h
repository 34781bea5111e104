// AnalyzeJob: the engine's one entry point for a set of traces (one job, one file per rank).
//
//   read (trace-format registry) -> map each rank to a RankSummary, in parallel -> resolve ranks
//   and hosts -> cluster diagnosis (reduce) -> join node telemetry -> findings
//
// The CLI (analyze, telemetry, trace --analyze), the web server, the Python binding, benchmarks
// and tests call this; none of them runs the stages itself. docs/architecture.md describes it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "rankscope/analysis/analyze_rank.h"
#include "rankscope/base/status.h"
#include "rankscope/engine/job_report.h"
#include "rankscope/ingest/reader_options.h"
#include "rankscope/ingest/trace_model.h"

namespace rankscope {

// What to analyse: trace files, directories of them, or capture directories (traces plus the
// daemon's capture.manifest and telemetry.<host>.tsv).
struct JobInputs {
  std::vector<std::string> paths;
  std::string hosts_file;  // --hosts FILE: "RANK HOST" / "FIRST-LAST HOST" lines; "" = none
  std::string layout;      // --layout dp=..,pp=..[,tp=..][,cp=..][,order=..]; "" = from the traces
};

// Reports progress as files finish (the CLI's progress line); may be null.
class Progress {
 public:
  virtual ~Progress() = default;
  virtual void Start(size_t total_files) = 0;
  virtual void FileDone() = 0;  // called from worker threads
};

// Per-rank work a caller adds to the map (compare builds its own summary here): `fn` runs on the
// worker thread with the rank's model, summary and the analysis's intermediates (to reuse, not
// recompute), before the model is dropped, for every file that maps to a summary; it must be
// thread-safe. An error makes the file an error of the job (JobReport::errors). `reader`
// replaces the default reader options (e.g. keep_op_shapes).
struct RankHook {
  ReaderOptions reader;
  std::function<Status(const TraceModel& model, const RankSummary& summary, RankIntermediates& intermediates)> fn;
};

// A file after the map: its rank's summary, or why there is none.
struct MappedFile {
  std::optional<RankSummary> summary;
  Status error;
  std::string warning;  // e.g. a corrupt summary beside the trace (the trace was analysed instead)
};

// Fails only on a whole-job problem (no trace at all, a bad option, a rank assigned twice, a
// host map missing ranks); a file that cannot be read is an entry in JobReport::errors.
StatusOr<JobReport> AnalyzeJob(const JobInputs& inputs, const AnalyzeOptions& options, Progress* progress = nullptr,
                               const RankHook* hook = nullptr);

// The map and the reduce apart, for runs that map in several processes (MPI, engine/mpi_job.h).
// MapJobFiles maps each of `files` (from DiscoverJobFiles): a summary file is read, a trace with
// a current summary beside it uses that summary (unless options.use_summaries is false or a hook
// needs the model), and any other trace is read and analysed.
StatusOr<std::vector<MappedFile>> MapJobFiles(const std::vector<std::string>& files, const AnalyzeOptions& options,
                                              Progress* progress = nullptr, const RankHook* hook = nullptr);
// The reduce: mapped[i] is files[i]'s result.
StatusOr<JobReport> ReduceJob(const JobInputs& inputs, const AnalyzeOptions& options,
                              const std::vector<std::string>& files, std::vector<MappedFile> mapped);

}  // namespace rankscope

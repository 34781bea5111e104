// Analysed jobs of `rankscope serve`, and the JSON documents the page fetches for them.
//
// A job is analysed by the engine (AnalyzeJob) on its first request (one analysis at a time:
// memory holds one job's models at once) and kept while it is among the `max_cached` most recently used; a capture whose files
// changed since (traces still arriving) is analysed again. Each document (overview, a step's
// timeline, ...) is rendered once and kept with its job.
#pragma once

#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "rankscope/engine/job_report.h"
#include "rankscope/web/job_catalog.h"

namespace rankscope::web {

struct AnalyzedJob {
  JobEntry entry;
  std::optional<JobReport> report;            // jobs of trace files (AnalyzeJob)
  std::optional<nlohmann::json> report_json;  // a report JSON as written
  std::optional<nlohmann::json> hang_json;    // a stack snapshot's hang analysis (rankscope.hang/1)
  std::optional<nlohmann::json> compare_json; // a comparison JSON (rankscope.compare/1)
  double analysis_s = 0;

  mutable std::mutex mu;  // guards docs
  mutable std::map<std::string, std::string> docs;
};

class JobStore {
 public:
  static constexpr uint64_t kMaxReportBytes = 1ull << 30;  // a report JSON to parse
  static constexpr uint64_t kMaxComparisonBytes = 256ull << 20;  // a comparison JSON to parse
  static constexpr size_t kMaxDocsPerJob = 64;             // cached documents (timelines) per job

  JobStore(const JobCatalog* catalog, unsigned threads, size_t max_cached = 4)
      : catalog_(catalog), threads_(threads), max_cached_(max_cached) {}

  // NotFound for an id that is not a job; the analysis' own error when it fails as a whole.
  StatusOr<std::shared_ptr<const AnalyzedJob>> Get(const std::string& id);

  // A document of the job: "overview", "timeline" (step: a number or nullopt), "matrix",
  // "functions", "telemetry", "rank" (step = the rank number), "report" (the whole report, not
  // kept), "hang" (a snapshot's hang analysis), "compare" (a comparison JSON, or a capture's
  // baseline-comparison, as the compare engine wrote it). FailedPrecondition when the job cannot
  // have it (one rank; a report JSON; a snapshot has no traces; no comparison).
  StatusOr<std::string> Document(const AnalyzedJob& job, const std::string& kind, std::optional<int64_t> arg);

 private:
  struct Cached {
    std::string fingerprint;
    std::shared_ptr<const AnalyzedJob> job;  // or
    Status error;
  };
  StatusOr<std::shared_ptr<const AnalyzedJob>> Analyze(const JobEntry& entry);

  const JobCatalog* catalog_;
  unsigned threads_;
  size_t max_cached_;
  std::mutex mu_;           // guards cache_ and lru_
  std::mutex analysis_mu_;  // one analysis at a time
  std::map<std::string, Cached> cache_;
  std::list<std::string> lru_;  // most recent first
};

}  // namespace rankscope::web

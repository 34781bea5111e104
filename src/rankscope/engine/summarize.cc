#include "rankscope/engine/summarize.h"

#include <set>

#include "rankscope/base/parallel_for.h"
#include "rankscope/engine/job_files.h"
#include "rankscope/engine/map_rank.h"
#include "rankscope/ingest/trace_set.h"
#include "rankscope/summary/summary_file.h"

namespace rankscope {
namespace {

// The trace's identity is taken before it is read: a trace rewritten meanwhile then no longer
// matches its summary, and is analysed again rather than misreported.
StatusOr<summary::SummaryFile> SummaryOf(const std::string& trace, const AnalysisOptions& rank_options,
                                         const std::string& key) {
  RANKSCOPE_ASSIGN_OR_RETURN(summary::TraceIdentity identity, summary::IdentifyTrace(trace));
  MappedFile mapped = MapTrace(trace, rank_options, nullptr);
  if (!mapped.summary) return mapped.error;
  summary::SummaryFile file;
  file.producer = fmt::format("rankscope summary format {}", summary::kSummaryFormatVersion);
  file.options_key = key;
  file.trace = std::move(identity);
  file.summary = std::move(*mapped.summary);
  return file;
}

SummarizedFile SummarizeOne(const std::string& trace, const AnalysisOptions& rank_options, const std::string& key,
                            const std::string& out_dir) {
  SummarizedFile out{trace, "", OkStatus(), 0};
  auto made = SummaryOf(trace, rank_options, key);
  if (!made.ok()) {
    out.status = made.status();
    return out;
  }
  const summary::SummaryFile& file = *made;
  const std::string path = summary::SummaryPathFor(trace, out_dir);
  out.status = summary::WriteSummaryFile(path, file);
  if (out.status.ok()) {
    out.summary_path = path;
    out.bytes = summary::EncodeSummary(file).size();
  }
  return out;
}

}  // namespace

StatusOr<summary::SummaryFile> SummarizeTrace(const std::string& trace, const AnalyzeOptions& options) {
  RANKSCOPE_ASSIGN_OR_RETURN(CommPatterns patterns, CommPatterns::Compile(options.comm_patterns));
  RANKSCOPE_ASSIGN_OR_RETURN(AnalysisOptions rank_options, RankOptions(options, &patterns));
  return SummaryOf(trace, rank_options, SummaryOptionsKey(options));
}

StatusOr<std::vector<SummarizedFile>> SummarizeTraces(const std::vector<std::string>& paths,
                                                      const AnalyzeOptions& options, const std::string& out_dir,
                                                      Progress* progress) {
  RANKSCOPE_ASSIGN_OR_RETURN(std::vector<std::string> traces, DiscoverTraceFiles(paths));
  RANKSCOPE_ASSIGN_OR_RETURN(CommPatterns patterns, CommPatterns::Compile(options.comm_patterns));
  RANKSCOPE_ASSIGN_OR_RETURN(AnalysisOptions rank_options, RankOptions(options, &patterns));
  if (!out_dir.empty()) {
    std::set<std::string> names;
    for (const std::string& t : traces) {
      if (!names.insert(summary::SummaryPathFor(t, out_dir)).second) {
        return FailedPrecondition("two traces are named like {}: their summaries would collide in {}; summarise "
                                  "them beside the traces (no -o) or into separate directories",
                                  t, out_dir);
      }
    }
  }
  const std::string key = SummaryOptionsKey(options);
  std::vector<SummarizedFile> out(traces.size());
  if (progress) progress->Start(traces.size());
  ParallelFor(traces.size(), options.threads, [&](size_t i) {
    out[i] = SummarizeOne(traces[i], rank_options, key, out_dir);
    if (progress) progress->FileDone();
  });
  return out;
}

}  // namespace rankscope

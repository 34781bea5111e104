#include "rankscope/engine/map_rank.h"

#include <chrono>
#include <filesystem>

#include "rankscope/ingest/read_trace.h"
#include "rankscope/summary/summary_file.h"

namespace rankscope {

StatusOr<AnalysisOptions> RankOptions(const AnalyzeOptions& opt, const CommPatterns* patterns) {
  AnalysisOptions a;
  a.comm_patterns = patterns;
  a.kernel_wait_threshold_ns = opt.kernel_wait_threshold_ns;
  a.function_tables = opt.function_tables;
  a.stream_analyses = opt.stream_analyses;
  if (opt.window == "steps") a.window.kind = WindowRequest::Kind::kSteps;
  else if (opt.window == "gpu") a.window.kind = WindowRequest::Kind::kGpu;
  else if (opt.window == "cpu") a.window.kind = WindowRequest::Kind::kCpu;
  else if (opt.window != "auto") return InvalidArgument("window {}: expected auto, steps, gpu or cpu", opt.window);
  if (!opt.steps.empty()) {
    if (opt.window != "auto" && opt.window != "steps") {
      return InvalidArgument("--steps selects profiler steps: it cannot be combined with --window {}", opt.window);
    }
    RANKSCOPE_RETURN_IF_ERROR(ParseStepRange(opt.steps, &a.window));
  }
  return a;
}

MappedFile MapTrace(const std::string& file, const AnalysisOptions& a, const RankHook* hook, unsigned parse_threads) {
  MappedFile out;
  const auto t0 = std::chrono::steady_clock::now();
  ReaderOptions reader = hook ? hook->reader : ReaderOptions{};
  reader.parse_threads = parse_threads;
  auto model = ReadTrace(file, reader);
  const int64_t ingest_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
  if (!model.ok()) {
    out.error = model.status();
    return out;
  }
  RankIntermediates intermediates;
  auto summary = AnalyzeRank(*model, a, hook ? &intermediates : nullptr);
  if (!summary.ok()) {
    out.error = summary.status();
  } else if (Status s = hook ? hook->fn(*model, *summary, intermediates) : OkStatus(); !s.ok()) {
    out.error = s;
  } else {
    summary->ingest_ns = ingest_ns;
    out.summary = std::move(summary).value();
  }
  return out;
}

MappedFile MapSummaryFile(const std::string& file, const std::string& options_key) {
  MappedFile out;
  auto read = summary::ReadSummaryFile(file);
  if (!read.ok()) {
    // Named .rsum but not a summary: a damaged summary, not some other file to skip.
    out.error = read.status().code() == StatusCode::kNotATrace ? DataLoss("{}", read.status().message()) : read.status();
  } else if (read->options_key != options_key) {
    out.error = FailedPrecondition(
        "{}: made with other analysis options ({}) than this run's ({}): re-make it with `rankscope summarize` "
        "and the same options, or analyse the trace",
        file, read->options_key, options_key);
  } else {
    out.summary = std::move(read->summary);
    out.summary->path = summary::TracePathOf(file);
  }
  return out;
}

std::optional<RankSummary> CurrentSummaryBeside(const std::string& trace, const std::string& options_key,
                                                std::string* warning) {
  const std::string path = summary::SummaryPathFor(trace, "");
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return std::nullopt;
  auto read = summary::ReadSummaryFile(path);
  if (!read.ok()) {
    if (read.status().code() != StatusCode::kFailedPrecondition) {  // another format version is no news
      *warning = read.status().message() + "; analysed the trace instead";
    }
    return std::nullopt;
  }
  auto identity = summary::IdentifyTrace(trace);
  if (!identity.ok() || !(*identity == read->trace) || read->options_key != options_key) return std::nullopt;
  read->summary.path = trace;
  return std::move(read->summary);
}

}  // namespace rankscope

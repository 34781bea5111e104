// A set of trace files (one per rank): discovery and parallel reading.
//
// Per-rank work is independent, so files are read on a thread pool and each model is handed
// to the caller's function on the worker thread, which can reduce it to a summary and drop it:
// memory then holds a few models at a time, never all ranks.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "rankscope/base/status.h"
#include "rankscope/ingest/reader_options.h"
#include "rankscope/ingest/trace_model.h"

namespace rankscope {

// Expands files and directories (searched recursively) into trace files, sorted by path. In a
// directory, trace files are those whose names end as some format's do (.json, .json.gz);
// rankscope's own sidecar files use other endings.
StatusOr<std::vector<std::string>> DiscoverTraceFiles(const std::vector<std::string>& inputs);

// Reads files[i] for every i on up to `threads` threads and calls fn(i, result) as each is done.
// fn runs on worker threads, concurrently for different i.
void ForEachTrace(const std::vector<std::string>& files, const ReaderOptions& options, unsigned threads,
                  const std::function<void(size_t, StatusOr<TraceModel>)>& fn);

}  // namespace rankscope

#include "rankscope/ingest/read_trace.h"

#include <memory>

#include "rankscope/ingest/byte_source.h"
#include "rankscope/ingest/pipelined_source.h"
#include "rankscope/ingest/trace_formats.h"

namespace rankscope {
namespace {

StatusOr<TraceModel> ReadFrom(std::unique_ptr<ByteSource> source, const std::string& name,
                              const ReaderOptions& options) {
  auto head = PeekHead(&source, TraceFormat::kSniffBytes);
  if (!head.ok()) return head.status().WithContext(name);
  const TraceFormat& format = SelectTraceFormat(*head, name);
  TraceModel model;
  model.path = name;
  if (Status status = format.Read(source.get(), options, &model); !status.ok()) return status.WithContext(name);
  model.stats.gzip = source->is_gzip();
  model.stats.file_bytes = source->raw_bytes_consumed();
  return model;
}

}  // namespace

StatusOr<TraceModel> ReadTrace(const std::string& path, const ReaderOptions& options) {
  RANKSCOPE_ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> source, OpenTraceFile(path));
  // A file's gzip is inflated on a thread of its own, ahead of the parser: one big trace uses
  // two cores (pipelined_source.h). Bytes in memory are read on the caller's thread alone: the
  // fuzzer's and the tests' reference for the same model.
  return ReadFrom(PipelineIfCompressed(std::move(source)), path, options);
}

StatusOr<TraceModel> ReadTraceBytes(std::string_view data, const std::string& name, const ReaderOptions& options) {
  return ReadFrom(OpenTraceBytes(data), name, options);
}

}  // namespace rankscope

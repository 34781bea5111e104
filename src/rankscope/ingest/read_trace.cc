#include "rankscope/ingest/read_trace.h"

#include <memory>

#include "rankscope/ingest/byte_source.h"
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
  return ReadFrom(std::move(source), path, options);
}

StatusOr<TraceModel> ReadTraceBytes(std::string_view data, const std::string& name, const ReaderOptions& options) {
  return ReadFrom(OpenTraceBytes(data), name, options);
}

}  // namespace rankscope

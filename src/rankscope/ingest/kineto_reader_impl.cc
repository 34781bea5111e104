// The per-CPU-target body of the reader: tokenizer -> event parser -> model builder.
// Compiled once per target with RANKSCOPE_TARGET_NS set (see CMakeLists.txt).
#include "rankscope/ingest/kineto_reader_impl.h"

#include "rankscope/ingest/event_parser.h"
#include "rankscope/ingest/model_builder.h"
#include "rankscope/ingest/top_level_parser.h"
#include "rankscope/ingest/trace_tokenizer.h"

namespace rankscope::RANKSCOPE_TARGET_NS {

Status ReadTraceInto(ByteSource* source, const ReaderOptions& options, TraceModel* model) {
  ModelBuilder builder(model);
  EventParser parser(&builder);
  TraceTokenizer tokenizer(source, options);
  Status status = tokenizer.Run(
      [&](std::string_view key, std::string_view value, uint64_t offset) {
        ApplyTopLevelValue(key, value, offset, model);
      },
      [&](char* data, size_t size, uint64_t offset) {
        parser.ParseChunk(data, size, TraceTokenizer::kChunkSlack, offset);
      });
  model->stats.json_bytes = tokenizer.bytes_read();
  return status;
}

}  // namespace rankscope::RANKSCOPE_TARGET_NS

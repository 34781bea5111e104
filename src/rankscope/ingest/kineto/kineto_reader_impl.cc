// The per-CPU-target body of the Kineto reader: tokenizer -> event parser -> model builder.
// Compiled once per target with RANKSCOPE_TARGET_NS set (see CMakeLists.txt).
#include "rankscope/ingest/kineto/kineto_reader_impl.h"

#include <algorithm>
#include <system_error>
#include <thread>

#include "rankscope/ingest/kineto/event_parser.h"
#include "rankscope/ingest/kineto/model_builder.h"
#include "rankscope/ingest/kineto/parallel_chunk_parser.h"
#include "rankscope/ingest/kineto/top_level_parser.h"
#include "rankscope/ingest/kineto/trace_tokenizer.h"

namespace rankscope::kineto::RANKSCOPE_TARGET_NS {
namespace {

// Sizes the big tables for a trace of `json_bytes` so that they do not grow by copying. Kineto
// events take 200-400 bytes of JSON, slices ~60% of them, flows ~30%. Reserved but untouched
// pages cost address space, not memory, so erring high is cheap; a cap keeps a bogus hint
// (say, a corrupt gzip trailer) from reserving absurd amounts.
void ReserveForJsonBytes(uint64_t json_bytes, TraceModel* model) {
  const uint64_t capped = std::min<uint64_t>(json_bytes, uint64_t{16} << 30);
  const size_t events = static_cast<size_t>(capped / 250);
  model->slices.reserve(events * 7 / 10);
  model->flows.reserve(events * 4 / 10);
}

Status ReadOnThisThread(TraceTokenizer& tokenizer, const ReaderOptions& options, ModelBuilder* builder,
                        TraceModel* model) {
  EventParser parser(builder, options.keep_op_shapes);
  return tokenizer.Run(
      [&](std::string_view key, std::string_view value, uint64_t offset) {
        ApplyTopLevelValue(key, value, offset, model);
      },
      [&](char* data, size_t size, uint64_t offset) {
        parser.ParseChunk(data, size, TraceTokenizer::kChunkSlack, offset);
      },
      [&](char* data, size_t size, uint64_t offset) {
        return parser.TryParseChunk(data, size, TraceTokenizer::kChunkSlack, offset);
      });
}

// Cut on a thread of its own, parsed on options.parse_threads more, built in file order on this
// one (parallel_chunk_parser.h). Without threads to start, read on this one.
Status ReadInParallel(TraceTokenizer& tokenizer, const ReaderOptions& options, ModelBuilder* builder,
                      TraceModel* model) {
  ParallelChunkParser parallel(options.keep_op_shapes, options.parse_threads, options.chunk_bytes);
  Status status;
  auto cut = [&] {
    status = tokenizer.Run(
        [&](std::string_view key, std::string_view value, uint64_t offset) {
          parallel.SubmitTopLevel(key, value, offset);
        },
        [&](char* data, size_t size, uint64_t offset) { parallel.SubmitChunk(data, size, offset); },
        [&](char*, size_t, uint64_t) { return false; });  // never called: exact cuts only
    parallel.Close();
  };
  std::thread cutter;
  if (parallel.started()) {
    try {
      cutter = std::thread(cut);
    } catch (const std::system_error&) {
    }
  }
  if (!cutter.joinable()) return ReadOnThisThread(tokenizer, options, builder, model);  // nothing read yet
  parallel.BuildInOrder(builder, model);
  cutter.join();
  return status;
}

}  // namespace

Status ReadTraceInto(ByteSource* source, const ReaderOptions& options, TraceModel* model) {
  ReserveForJsonBytes(source->size_hint(), model);
  ModelBuilder builder(model);
  TraceTokenizer tokenizer(source, options);
  Status status = options.parse_threads > 1 ? ReadInParallel(tokenizer, options, &builder, model)
                                             : ReadOnThisThread(tokenizer, options, &builder, model);
  builder.Finish();
  model->stats.json_bytes = tokenizer.bytes_read();
  model->stats.chunks = tokenizer.chunks();
  model->stats.chunk_guesses_missed = tokenizer.wrong_guesses();
  return status;
}

}  // namespace rankscope::kineto::RANKSCOPE_TARGET_NS

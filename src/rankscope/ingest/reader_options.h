// Limits and knobs of the trace reader.
#pragma once

#include <cstddef>

namespace rankscope {

struct ReaderOptions {
  // Target size of the pieces the traceEvents array is cut into; each is parsed in one go by a
  // reused simdjson parser, so memory stays flat whatever the file size.
  size_t chunk_bytes = 256 * 1024;
  // A single traceEvents element larger than this is treated as corruption (unbalanced
  // brackets or quotes would otherwise make the reader buffer the rest of the file).
  size_t max_event_bytes = 64u << 20;
  // Top-level values other than traceEvents larger than this are skipped with a warning.
  size_t max_top_level_value_bytes = 64u << 20;
  // Keep every CPU op's "Input Dims" and "Input type" (record_shapes=True) as interned text in
  // TraceModel::op_shapes. Off by default: only `rankscope compare` aligns operators on shapes.
  bool keep_op_shapes = false;
  // Threads that parse this one trace. 1: the reading thread parses it. N > 1: N parse threads
  // take its chunks while the reading thread cuts them and builds the model from their results
  // in file order (the same model; kineto/parallel_chunk_parser.h). The engine gives a file
  // more than one when there are more threads than files to read.
  unsigned parse_threads = 1;
};

}  // namespace rankscope

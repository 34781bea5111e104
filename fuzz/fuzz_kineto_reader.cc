// libFuzzer target for the trace reader: any bytes (plain or gzip) must give a model or a
// clear error, never a crash, hang, leak or undefined behaviour; and the same bytes parsed on
// several threads (ReaderOptions::parse_threads) must give the same model when it is valid JSON.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <simdjson.h>

#include "rankscope/ingest/read_trace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  rankscope::ReaderOptions options;
  // Small chunks and limits so that the chunking, refill and limit paths all get exercised.
  options.chunk_bytes = 512;
  options.max_event_bytes = 1 << 20;
  options.max_top_level_value_bytes = 1 << 16;
  auto model = rankscope::ReadTraceBytes(
      std::string_view(reinterpret_cast<const char*>(data), size), "fuzz-input", options);
  if (model.ok()) {
    // Touch the model so that inconsistent tables would be noticed by the sanitizers.
    const auto& m = *model;
    size_t sum = 0;
    for (size_t i = 0; i < m.slices.size(); ++i) {
      sum += m.Str(m.slices.name[i]).size() + m.slices.track[i];
      if (const auto* g = m.GpuInfo(i)) sum += static_cast<size_t>(g->stream);
    }
    volatile size_t sink = sum;
    (void)sink;
  }
  // On valid JSON the one-thread and the several-thread read must give the same model. On
  // anything else each only has to fail cleanly or skip and count: they recover from garbage
  // differently (a guessed chunk is parsed by simdjson On-Demand, which does not check that every
  // bracket balances; the exact cuts of the parallel read stop at the first one that does not).
  simdjson::dom::parser validator;
  if (validator.parse(reinterpret_cast<const char*>(data), size).error() != simdjson::SUCCESS) return 0;
  options.parse_threads = 2;
  auto parallel = rankscope::ReadTraceBytes(
      std::string_view(reinterpret_cast<const char*>(data), size), "fuzz-input", options);
  if (parallel.ok() != model.ok()) __builtin_trap();
  if (!model.ok() && parallel.status().message() != model.status().message()) __builtin_trap();
  if (model.ok() && (parallel->stats.elements != model->stats.elements ||
                     parallel->slices.name != model->slices.name || parallel->strings.size() != model->strings.size() ||
                     parallel->stats.skipped.total() != model->stats.skipped.total() ||
                     parallel->stats.ignored_fields.total() != model->stats.ignored_fields.total())) {
    __builtin_trap();
  }
  return 0;
}

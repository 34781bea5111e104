// libFuzzer target for the trace reader: any bytes (plain or gzip) must give a model or a
// clear error, never a crash, hang, leak or undefined behaviour; and the same bytes parsed on
// several threads (ReaderOptions::parse_threads) must give the same answer.
#include <cstddef>
#include <cstdint>
#include <string_view>

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
  options.parse_threads = 2;
  auto parallel = rankscope::ReadTraceBytes(
      std::string_view(reinterpret_cast<const char*>(data), size), "fuzz-input", options);
  if (parallel.ok() != model.ok()) __builtin_trap();
  if (!model.ok() && parallel.status().message() != model.status().message()) __builtin_trap();
  if (model.ok() && (parallel->stats.elements != model->stats.elements ||
                     parallel->slices.name != model->slices.name || parallel->strings.size() != model->strings.size() ||
                     parallel->stats.skipped.total() != model->stats.skipped.total())) {
    __builtin_trap();
  }
  return 0;
}

// libFuzzer target for what the hang analysis reads from files a job's user writes: Flight
// Recorder dumps (JSON, and pickles as PyTorch writes them on a timeout, hang/pickle_reader.h)
// and stack snapshots. The daemon (root) reads them too, so any bytes must give a value or a
// Status: never a crash, an exception, unbounded memory, or a value that cannot be written
// out again as JSON. The first byte picks the parser; the rest is its input.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "rankscope/hang/flight_recorder.h"
#include "rankscope/hang/pickle_reader.h"
#include "rankscope/hang/stack_snapshot.h"

namespace {

void FuzzPickle(std::string_view bytes) {
  // Small limits so that the limit paths are reached too.
  auto j = rankscope::hang::ReadPickle(bytes, {.max_values = 20000, .max_depth = 16});
  if (j.ok()) (void)j->dump();  // throws (and the fuzzer stops) if a string is not valid UTF-8
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  switch (data[0] % 3) {
    case 0: FuzzPickle(rest); break;
    case 1: (void)rankscope::hang::ParseFlightRecorder(rest, "nccl_trace_rank_3", 3); break;
    default: (void)rankscope::hang::ParseStacks(rest, "rank0.stacks.txt"); break;
  }
  return 0;
}

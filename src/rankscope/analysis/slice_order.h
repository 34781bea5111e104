// Slices in start-time order (ties in file order). Trace files are only nearly in time order
// (Kineto writes an op when it ends), so the CPU-side analyses share this one sort instead of
// each sorting its own samples. A stable merge sort of indices is the fastest option measured
// on the shared traces (nearly sorted input): 1.5x faster than sorting (ts, index) pairs.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "rankscope/ingest/trace_model.h"

namespace rankscope {

inline std::vector<uint32_t> SlicesByStart(const TraceModel& m) {
  std::vector<uint32_t> order(m.slices.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  const std::vector<int64_t>& ts = m.slices.ts;
  auto earlier = [&](uint32_t a, uint32_t b) { return ts[a] < ts[b]; };
  if (!std::is_sorted(order.begin(), order.end(), earlier)) std::stable_sort(order.begin(), order.end(), earlier);
  return order;
}

}  // namespace rankscope

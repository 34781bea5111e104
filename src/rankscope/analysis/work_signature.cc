#include "rankscope/analysis/work_signature.h"

#include <algorithm>

namespace rankscope {
namespace {

// splitmix64's finaliser: spreads a 32-bit op hash over 64 bits, so that sums of a few thousand
// of them collide only by chance.
uint64_t Mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace

std::vector<WorkSignature> StepWorkSignatures(const TraceModel& m, const std::vector<ProfilerStep>& steps,
                                              size_t first, size_t end) {
  std::vector<WorkSignature> out(end > first ? end - first : 0);
  if (out.empty() || m.op_work.empty()) return out;
  // The steps' starts, to find each op's step by its start time (steps do not overlap).
  std::vector<int64_t> starts;
  for (size_t k = first; k < end; ++k) starts.push_back(steps[k].start);
  for (const OpWork& op : m.op_work) {
    const int64_t ts = m.slices.ts[op.slice];
    auto it = std::upper_bound(starts.begin(), starts.end(), ts);
    if (it == starts.begin()) continue;  // before the first step
    const size_t k = static_cast<size_t>(it - starts.begin()) - 1;
    if (ts >= steps[first + k].end) continue;  // between steps
    out[k].value += Mix(op.hash);
    ++out[k].shaped_ops;
  }
  return out;
}

}  // namespace rankscope

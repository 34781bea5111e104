// A source of node telemetry (CPU, memory, a GPU library, ...), in Dynolog's shape: Sample()
// reads the source and keeps what it needs (rates need the previous reading); Log() emits the
// values of the last sample. Monitors run on a sampler thread, never on a request thread.
#pragma once

#include <cstdint>
#include <string_view>

#include "rankscope/base/status.h"
#include "rankscope/telemetry/logger.h"

namespace rankscope::telemetry {

class Monitor {
 public:
  virtual ~Monitor() = default;
  virtual std::string_view name() const = 0;
  // `mono_ns`: CLOCK_MONOTONIC time of this pass, for rates. An error skips this monitor's
  // values for this pass only.
  virtual Status Sample(int64_t mono_ns) = 0;
  virtual void Log(Logger& logger) const = 0;
};

// Rate of a cumulative counter between two readings; 0 when the counter went backwards (reset,
// wrap, a device that was replaced) or no time passed.
inline double CounterRate(double previous, double current, int64_t elapsed_ns) {
  if (elapsed_ns <= 0 || current < previous) return 0;
  return (current - previous) * 1e9 / static_cast<double>(elapsed_ns);
}

}  // namespace rankscope::telemetry

// Choosing the step at which every rank starts recording, so that all traces cover the same
// steps. Collectors report their step count and step time in heartbeats every ~2 s, so the
// daemon extrapolates where each rank is now and starts a little after the furthest one.
#pragma once

#include <cstdint>
#include <vector>

#include "rankscope/daemon/process_registry.h"

namespace rankscope::daemon {

// Steps expected to have completed since the heartbeat, from the heartbeat's age and step time.
int64_t EstimateCurrentStep(const ProcessInfo& p, Clock::time_point now);
// max(estimated current step) + margin, rounded up to a multiple of `roundup` when > 0.
int64_t AlignedStartStep(const std::vector<ProcessInfo>& procs, Clock::time_point now, int32_t roundup,
                         int64_t margin_steps = 2);
int64_t RoundUp(int64_t value, int64_t multiple);

}  // namespace rankscope::daemon

// Steps of a trace without ProfilerStep#N annotations.
//
// Traces taken through Kineto's daemon path (KINETO_USE_DAEMON=1, no profiler schedule in the
// training code) and traces of hand-rolled loops carry no ProfilerStep. Their iterations are
// derived from what they do have, in this order:
//  1. optimizer steps: the CPU-side "Optimizer.step#..." annotations PyTorch records on every
//     optimizer.step(): an iteration ends where one ends; the first iteration begins at Kineto's
//     "Iteration Start: PyTorch Profiler" marker when the trace has it (else the trace's first
//     optimizer step only closes the partial iteration before it, which is left out);
//  2. data loading: "enumerate(DataLoader)#..." annotations: an iteration begins where one begins
//     and ends where the next begins;
//  3. a repeating top-level pattern: of the top-level CPU ops and annotations of the training
//     thread (none encloses them) seen at least three times, the one that repeats most regularly
//     (smallest spread of the gaps between its starts): an iteration runs from one start to the
//     next.
// Derived steps are numbered 0, 1, ... from the first one in the trace: ranks captured together
// (a daemon capture starts every rank at the same iteration) get the same numbers.
#pragma once

#include <vector>

#include "rankscope/analysis/window.h"

namespace rankscope {

enum class StepSource : uint8_t {
  kProfilerStep,   // ProfilerStep#N
  kOptimizerStep,  // Optimizer.step#... ends
  kDataLoader,     // enumerate(DataLoader)#... starts
  kPattern,        // a repeating top-level CPU op or annotation
  kNone,
};
const char* StepSourceName(StepSource s);  // "profiler_step", "optimizer_step", ...

struct StepDetection {
  std::vector<ProfilerStep> steps;  // by start time
  StepSource source = StepSource::kNone;
  std::string marker;               // kPattern: the repeating name
};

// ProfilerStep#N spans when the trace has them, else iterations derived as above (at least two).
StepDetection FindSteps(const TraceModel& model);

}  // namespace rankscope

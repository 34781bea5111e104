// Steps and their phases, from the profiler's own annotations.
//
// Within each ProfilerStep#N span every instant gets one phase, by priority:
//  1. optimizer:    inside "Optimizer.step#..." or "Optimizer.zero_grad#..." (any thread);
//  2. data loading: inside "enumerate(DataLoader)#..." ;
//  3. backward:     from the first to the last backward op of the step: autograd's
//                   "autograd::engine::evaluate_function: ..." ops (on the autograd thread on GPU
//                   machines), ops whose "Fwd thread id" is not 0, or "## backward ##";
//  4. forward:      from the first forward marker ("*.forward" and "## forward ##" annotations,
//                   "nn.Module: ..." Python frames, ops whose "Fwd thread id" is 0) to the
//                   start of backward; without markers,
//                   from the end of the last data-loading / optimizer span before backward to the
//                   start of backward (without backward: to the start of the step's last
//                   optimizer span, or the step end);
//  5. other:        the rest.
// GPU side: an activity belongs to the step and phase in which its launch call started; a
// step's GPU phase time is the busy time (union) of the activities launched in that phase.
#pragma once

#include <vector>

#include "rankscope/analysis/gpu_activity.h"
#include "rankscope/analysis/interval_set.h"
#include "rankscope/analysis/rank_summary.h"

namespace rankscope {

// A piece of a step that has one phase (trace clock).
struct PhasePiece {
  int64_t start, end;
  StepPhase phase;
};

// Each step of W split into pieces by the rule above, in order (the CPU-side phase of any
// instant of a step). `order` is SlicesByStart(model).
std::vector<std::vector<PhasePiece>> StepPhaseTimelines(const TraceModel& model, const std::vector<uint32_t>& order,
                                                        const std::vector<ProfilerStep>& steps, const Window& window);

// The steps of W, in order, with absolute times.
// `order` is SlicesByStart(model).
std::vector<StepSummary> AnalyzeSteps(const TraceModel& model, const std::vector<uint32_t>& order,
                                      const std::vector<ProfilerStep>& steps, const Window& window,
                                      const std::vector<GpuActivity>& activities, const IntervalSet& host_compute,
                                      const IntervalSet& host_gpu_waits);

}  // namespace rankscope

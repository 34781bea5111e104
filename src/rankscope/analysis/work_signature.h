// A step's work signature: what the step computed, as one number comparable across ranks.
//
// A per-step imbalance (cluster/parallel_findings.h) says that the slowest rank changes from
// step to step: the input's doing when the ranks draw batches or sequences of different sizes,
// the machine's when the same work takes longer on a rank in some steps (a CPU run queue, a
// device shared by several ranks, garbage collection, clock changes). The traces tell the two
// apart where the profiler recorded input shapes (record_shapes=True): a batch of a different
// size or length changes the shapes the operators see. The signature sums, over the CPU ops
// that start in the step, a mixed hash of each op's name and "Input Dims" as written
// (ingest's OpWork), so it does not depend on the order the ops ran in or on which thread ran
// them; two steps that ran the same operators on the same shapes have the same signature, and
// a difference in one op's shapes changes it (but for a 2^-64 chance).
#pragma once

#include <cstdint>
#include <vector>

#include "rankscope/analysis/window.h"
#include "rankscope/ingest/trace_model.h"

namespace rankscope {

struct WorkSignature {
  uint64_t value = 0;      // 0: no op with shapes started in the step
  int64_t shaped_ops = 0;  // the ops it sums
};

// One per step of steps[first, end) (ascending starts), from model.op_work.
std::vector<WorkSignature> StepWorkSignatures(const TraceModel& model, const std::vector<ProfilerStep>& steps,
                                              size_t first, size_t end);

}  // namespace rankscope

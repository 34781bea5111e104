#include "rankscope/compare/compare_result.h"

namespace rankscope::compare {

std::string_view CauseName(Cause c) {
  switch (c) {
    case Cause::kAdded: return "added";
    case Cause::kRemoved: return "removed";
    case Cause::kShapes: return "shapes";
    case Cause::kDtypes: return "dtypes";
    case Cause::kSameWork: return "same_work";
    case Cause::kManySmall: return "many_small";
    case Cause::kCommunication: return "communication";
    case Cause::kHostGap: return "host_gap";
    case Cause::kUnlinkedGpu: return "unlinked_gpu";
  }
  return "?";
}

std::string_view ObservationKindName(ObservationKind k) {
  switch (k) {
    case ObservationKind::kGpuChangedStepDidNot: return "gpu_changed_step_did_not";
    case ObservationKind::kStepChangedGpuDidNot: return "step_changed_gpu_did_not";
    case ObservationKind::kNoDifference: return "no_difference";
    case ObservationKind::kDifferentHardware: return "different_hardware";
    case ObservationKind::kFewOperatorsAligned: return "few_operators_aligned";
    case ObservationKind::kAlignmentApproximate: return "alignment_approximate";
    case ObservationKind::kNoGpu: return "no_gpu";
    case ObservationKind::kNoStacks: return "no_stacks";
    case ObservationKind::kNoShapes: return "no_shapes";
  }
  return "?";
}

}  // namespace rankscope::compare

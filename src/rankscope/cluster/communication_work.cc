#include "rankscope/cluster/communication_work.h"

#include "rankscope/analysis/comm_kernel_name.h"

namespace rankscope {

bool IsCommunicationWork(FunctionKind kind, std::string_view name) {
  switch (kind) {
    case FunctionKind::kCollective: return true;
    case FunctionKind::kKernel:
    case FunctionKind::kKernelsOfOp: return IsBuiltinCommKernelName(name) || name.starts_with("c10d::") ||
                                            name == "record_param_comms" || name.starts_with("nccl:");
    case FunctionKind::kCpuOp:
      return name.starts_with("c10d::") || name.starts_with("gloo:") || name.starts_with("nccl:") ||
             name == "record_param_comms";
    default: return false;
  }
}

bool IsPointToPointOp(std::string_view op) {
  return op.find("send") != std::string_view::npos || op.find("recv") != std::string_view::npos;
}

}  // namespace rankscope

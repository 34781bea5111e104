// Whether a function table row is communication: the collective itself, the NCCL/RCCL/HCCL
// kernel that carries it, or the CPU op that issues or waits for it (c10d's ops, gloo's
// transfers, record_param_comms). A rank's local time never contained the wait inside such a
// row (it is exposed communication, subtracted from the step), so a finding must not take a
// saving out of local time for it: on the last pipeline stage these rows are the stage waiting.
#pragma once

#include <string_view>

#include "rankscope/cluster/function_outliers.h"

namespace rankscope {

bool IsCommunicationWork(FunctionKind kind, std::string_view name);

// A point-to-point transfer (a canonical collective op: send, recv, send_recv, ...).
bool IsPointToPointOp(std::string_view op);

}  // namespace rankscope

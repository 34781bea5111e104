// Communication kernels: recognising them by name and decoding what the name says.
//
//   ncclDevKernel_AllReduce_Sum_f16_RING_LL            (NCCL >= 2.19)
//   ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem) (older NCCL)
//   ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(...)
// give op, reduction, dtype, algorithm and protocol, each empty when the name does not say.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace rankscope {

struct CommKernelName {
  std::string op;         // AllReduce, AllGather, ReduceScatter, Broadcast, Reduce, SendRecv, ...
  std::string reduction;  // Sum, Prod, Max, Min, PreMulSum, SumPostDiv
  std::string dtype;      // as written: f16, float, int8_t, bf16, ...
  std::string algorithm;  // RING, TREE, COLLNET_DIRECT, NVLS, ...
  std::string protocol;   // LL, LL128, SIMPLE
};

// True for NCCL/RCCL/HCCL kernels (the built-in patterns). User patterns are applied by the
// classifier on top of this.
bool IsBuiltinCommKernelName(std::string_view name);

// Decodes an NCCL/RCCL kernel name; returns false if the name is not one.
bool DecodeCommKernelName(std::string_view name, CommKernelName* out);

// One spelling per collective across the places a trace names it: kernel op "AllReduce",
// record_param_comms "allreduce", annotation "nccl:all_reduce" and "_allgather_base" all map
// to snake case ("all_reduce", "all_gather", ...). Unknown names are lower-cased.
std::string CanonicalCollectiveName(std::string_view name);

}  // namespace rankscope

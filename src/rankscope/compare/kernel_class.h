// Kernel classes of the compare breakdown: what kind of GPU work a kernel is, from its name and
// the CPU operator that launched it, so that runs on different hardware (cuBLAS vs rocBLAS
// kernel names, cuDNN vs MIOpen) still compare class by class.
//
//   GEMM / matmul        gemm, cutlass, cublas(Lt), xmma, wgmma, magma, rocblas, hipblaslt, Tensile
//                        (Cijk_), or launched by aten::mm/addmm/bmm/baddbmm/matmul/linear
//   convolution fwd/bwd  cudnn/miopen conv kernels, implicit gemm, fprop/dgrad/wgrad, or launched
//                        by aten::convolution(_backward)/cudnn_convolution*/miopen_convolution*;
//                        backward when the name says dgrad/wgrad/bprop/backward or the launching
//                        op is a backward one
//   attention fwd/bwd    flash / fmha / mha / sdpa / attention kernels, or launched by
//                        aten::_scaled_dot_product_*attention* / _flash_attention_* /
//                        _efficient_attention_* / _cudnn_attention_*; backward as above
//   optimizer            multi_tensor_apply, fused adam/sgd/lamb kernels, or launched inside
//                        Optimizer.step
//   elementwise / other  every other compute kernel
// Communication, memcpy, memset and sync keep the classes of docs/definitions.md.
#pragma once

#include <cstdint>
#include <string_view>

#include "rankscope/analysis/definitions.h"

namespace rankscope::compare {

enum class KernelClass : uint8_t {
  kGemm = 0,
  kConvForward,
  kConvBackward,
  kAttentionForward,
  kAttentionBackward,
  kOptimizer,
  kElementwise,  // elementwise and every other compute kernel
  kCommunication,
  kMemcpy,
  kMemset,
  kSync,
};
inline constexpr int kNumKernelClasses = 11;
inline constexpr int kNumComputeKernelClasses = 7;  // kGemm .. kElementwise

std::string_view KernelClassName(KernelClass c);   // "gemm", "conv_fwd", ...
std::string_view KernelClassLabel(KernelClass c);  // "GEMM / matmul", "convolution forward", ...

struct KernelContext {
  std::string_view name;         // the kernel's name
  std::string_view launching_op; // the innermost CPU op around its launch, or ""
  bool in_backward = false;      // launched by a backward op (autograd) or in the backward phase
  bool in_optimizer = false;     // launched inside Optimizer.step / zero_grad
};

// The class of a compute kernel (activity class kCompute).
KernelClass ClassifyComputeKernel(const KernelContext& k);

// The class of any GPU activity: compute kernels by ClassifyComputeKernel, the rest by their
// activity class; memcpy vs memset by `is_memset`.
KernelClass ClassifyActivity(ActivityClass cls, bool is_memset, const KernelContext& k);

}  // namespace rankscope::compare

#include "rankscope/compare/kernel_class.h"

#include <array>
#include <string>

namespace rankscope::compare {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return out;
}

bool HasAny(const std::string& text, std::initializer_list<std::string_view> needles) {
  for (std::string_view n : needles) {
    if (text.find(n) != std::string::npos) return true;
  }
  return false;
}

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

bool IsBackwardName(const std::string& n) {
  return HasAny(n, {"bwd", "backward", "dgrad", "wgrad", "bprop", "grad_"});
}

}  // namespace

std::string_view KernelClassName(KernelClass c) {
  static constexpr std::array<std::string_view, kNumKernelClasses> kNames = {
      "gemm", "conv_fwd", "conv_bwd", "attention_fwd", "attention_bwd", "optimizer", "elementwise_other",
      "communication", "memcpy", "memset", "sync"};
  return kNames[static_cast<int>(c)];
}

std::string_view KernelClassLabel(KernelClass c) {
  static constexpr std::array<std::string_view, kNumKernelClasses> kLabels = {
      "GEMM / matmul",       "convolution forward", "convolution backward", "attention forward",
      "attention backward",  "optimizer",           "elementwise / other",  "communication",
      "memcpy",              "memset",              "sync"};
  return kLabels[static_cast<int>(c)];
}

KernelClass ClassifyComputeKernel(const KernelContext& k) {
  const std::string name = Lower(k.name);
  const std::string op = Lower(k.launching_op);
  const bool backward = k.in_backward || IsBackwardName(name) || op.find("backward") != std::string::npos;
  // Attention first: flash / fused attention kernels often contain "gemm" in their names.
  if (HasAny(name, {"flash", "fmha", "attention", "sdpa", "_mha", "mha_", "fused_attn"}) ||
      HasAny(op, {"scaled_dot_product", "flash_attention", "efficient_attention", "cudnn_attention"})) {
    return backward ? KernelClass::kAttentionBackward : KernelClass::kAttentionForward;
  }
  if (HasAny(name, {"conv", "dgrad", "wgrad", "fprop", "implicit_gemm", "winograd", "miopen", "implicit_convolve"}) ||
      HasAny(op, {"convolution", "conv1d", "conv2d", "conv3d", "conv_transpose"})) {
    return backward ? KernelClass::kConvBackward : KernelClass::kConvForward;
  }
  if (HasAny(name, {"multi_tensor_apply", "fused_adam", "fusedadam", "adam_", "_adam", "sgd_", "lamb", "fused_sgd"}) ||
      k.in_optimizer) {
    return KernelClass::kOptimizer;
  }
  if (HasAny(name, {"gemm", "cutlass", "cublas", "xmma", "wgmma", "magma", "rocblas", "hipblaslt", "tensile"}) ||
      StartsWith(name, "cijk_") || StartsWith(name, "void cijk_") || name.find("sm80_") != std::string::npos ||
      name.find("sm90_") != std::string::npos || StartsWith(op, "aten::mm") || StartsWith(op, "aten::addmm") ||
      StartsWith(op, "aten::bmm") || StartsWith(op, "aten::baddbmm") || StartsWith(op, "aten::matmul") ||
      StartsWith(op, "aten::linear") || StartsWith(op, "aten::_scaled_mm") || StartsWith(op, "aten::addbmm")) {
    return KernelClass::kGemm;
  }
  return KernelClass::kElementwise;
}

KernelClass ClassifyActivity(ActivityClass cls, bool is_memset, const KernelContext& k) {
  switch (cls) {
    case ActivityClass::kCompute: return ClassifyComputeKernel(k);
    case ActivityClass::kCommunication: return KernelClass::kCommunication;
    case ActivityClass::kMemory: return is_memset ? KernelClass::kMemset : KernelClass::kMemcpy;
    case ActivityClass::kSync:
    case ActivityClass::kNone: return KernelClass::kSync;
  }
  return KernelClass::kSync;
}

}  // namespace rankscope::compare

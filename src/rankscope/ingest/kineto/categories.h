// Kineto's event categories: the `cat` strings of every schema generation and every device
// Kineto profiles, mapped onto the model's activity kinds.
//
// 2021 traces say "Operator"/"Runtime"/"Kernel"/"Memcpy"/"Memset"; later ones "cpu_op"/
// "cuda_runtime"/"kernel"/"gpu_memcpy"/"gpu_memset". Flow categories ("ac2g",
// "async_cpu_to_gpu", "async_gpu", "async", "fwdbwd") are kept apart as FlowKind.
//
// Accelerators other than CUDA/ROCm GPUs: Intel XPUs and PrivateUse1 backends write their device
// work under the GPU categories above and their host calls under "<device>_runtime"/"_driver";
// Gaudi's host runtime is "hpu_op", Glow's "glow_runtime". MTIA writes its device work as
// "mtia_ccp_events" (kernels, its "hccl::" collectives, and its DMA transfers, named "dma_*")
// and its host calls as "mtia_runtime" ("runFunction ..." launches, linked by correlation).
// "collective_comm" is a host-side communication library call (XPU's "xccl::..."), counted
// with the runtime calls. Kineto categories not listed here (counters, profiler ranges, XPU's
// host-side syncs, which carry no device stream) stay kOther.
#pragma once

#include <cstdint>
#include <string_view>

#include "rankscope/ingest/activity_kind.h"

namespace rankscope::kineto {

// One recognised spelling of a category; `spelling` indexes kKnownCategories.
struct CategorySpelling {
  std::string_view text;
  ActivityKind kind;
  FlowKind flow_kind;  // meaningful when kind == kFlow
  // Device work whose name starts with "dma" is a memory transfer (MTIA writes its DMA
  // transfers as CCP events; Holistic Trace Analysis counts them as memory too).
  bool dma_is_memcpy = false;
};

inline constexpr CategorySpelling kKnownCategories[] = {
    {"cpu_op", ActivityKind::kHostOp, FlowKind::kOther},
    {"Operator", ActivityKind::kHostOp, FlowKind::kOther},
    {"user_annotation", ActivityKind::kAnnotation, FlowKind::kOther},
    {"gpu_user_annotation", ActivityKind::kDeviceAnnotation, FlowKind::kOther},
    {"python_function", ActivityKind::kPythonFrame, FlowKind::kOther},
    {"cuda_runtime", ActivityKind::kRuntimeCall, FlowKind::kOther},
    {"Runtime", ActivityKind::kRuntimeCall, FlowKind::kOther},
    {"cuda_driver", ActivityKind::kDriverCall, FlowKind::kOther},
    {"kernel", ActivityKind::kDeviceKernel, FlowKind::kOther},
    {"Kernel", ActivityKind::kDeviceKernel, FlowKind::kOther},
    {"gpu_memcpy", ActivityKind::kDeviceMemcpy, FlowKind::kOther},
    {"Memcpy", ActivityKind::kDeviceMemcpy, FlowKind::kOther},
    {"gpu_memset", ActivityKind::kDeviceMemset, FlowKind::kOther},
    {"Memset", ActivityKind::kDeviceMemset, FlowKind::kOther},
    {"cuda_sync", ActivityKind::kDeviceSync, FlowKind::kOther},
    {"cpu_instant_event", ActivityKind::kInstant, FlowKind::kOther},
    {"Trace", ActivityKind::kProfilerSpan, FlowKind::kOther},
    {"overhead", ActivityKind::kProfilerOverhead, FlowKind::kOther},
    {"ac2g", ActivityKind::kFlow, FlowKind::kHostToDevice},
    {"async_cpu_to_gpu", ActivityKind::kFlow, FlowKind::kHostToDevice},
    {"async_gpu", ActivityKind::kFlow, FlowKind::kHostToDevice},
    {"async", ActivityKind::kFlow, FlowKind::kHostToDevice},
    {"fwdbwd", ActivityKind::kFlow, FlowKind::kForwardToBackward},
    // Other accelerators, after the common spellings (the lookup is a linear scan).
    {"mtia_ccp_events", ActivityKind::kDeviceKernel, FlowKind::kOther, /*dma_is_memcpy=*/true},
    {"mtia_runtime", ActivityKind::kRuntimeCall, FlowKind::kOther},
    {"xpu_runtime", ActivityKind::kRuntimeCall, FlowKind::kOther},
    {"xpu_driver", ActivityKind::kDriverCall, FlowKind::kOther},
    {"privateuse1_runtime", ActivityKind::kRuntimeCall, FlowKind::kOther},
    {"privateuse1_driver", ActivityKind::kDriverCall, FlowKind::kOther},
    {"hpu_op", ActivityKind::kRuntimeCall, FlowKind::kOther},
    {"glow_runtime", ActivityKind::kRuntimeCall, FlowKind::kOther},
    {"collective_comm", ActivityKind::kRuntimeCall, FlowKind::kOther},
};
inline constexpr int kNumKnownCategories =
    static_cast<int>(sizeof(kKnownCategories) / sizeof(kKnownCategories[0]));

// Index into kKnownCategories, or -1. Called once per event: candidates are narrowed by length
// and first letter before any comparison.
inline int FindCategorySpelling(std::string_view text) {
  if (text.empty()) return -1;
  for (int i = 0; i < kNumKnownCategories; ++i) {
    const std::string_view known = kKnownCategories[i].text;
    if (known.size() == text.size() && known[0] == text[0] && known == text) return i;
  }
  return -1;
}

}  // namespace rankscope::kineto

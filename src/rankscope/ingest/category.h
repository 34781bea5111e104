// Event categories: the Kineto `cat` strings of every schema generation, mapped to one enum.
//
// 2021 traces say "Operator"/"Runtime"/"Kernel"/"Memcpy"/"Memset"; later ones "cpu_op"/
// "cuda_runtime"/"kernel"/"gpu_memcpy"/"gpu_memset". Flow categories ("ac2g",
// "async_cpu_to_gpu", "async_gpu", "async", "fwdbwd") are kept apart as FlowKind.
#pragma once

#include <cstdint>
#include <string_view>

namespace rankscope {

enum class Category : uint8_t {
  kNone = 0,          // the event has no "cat"
  kOther,             // a category rankscope does not interpret
  kCpuOp,             // cpu_op, Operator
  kUserAnnotation,    // user_annotation (record_function, ProfilerStep#N, ...)
  kGpuUserAnnotation, // gpu_user_annotation (annotation ranges drawn on the GPU timeline)
  kPythonFunction,    // python_function (with_stack=True)
  kCudaRuntime,       // cuda_runtime, Runtime (HIP runtime calls use it too)
  kCudaDriver,        // cuda_driver (cuLaunchKernel, ...)
  kKernel,            // kernel, Kernel
  kGpuMemcpy,         // gpu_memcpy, Memcpy
  kGpuMemset,         // gpu_memset, Memset
  kCudaSync,          // cuda_sync (Stream/Event/Context Sync, Stream Wait Event)
  kCpuInstant,        // cpu_instant_event ([memory] and friends)
  kTrace,             // Trace (the profiler's own span)
  kOverhead,          // overhead
  kFlow,              // a flow category; see FlowKind
  kCount
};

enum class FlowKind : uint8_t {
  kCpuToGpu,  // ac2g, async_cpu_to_gpu, async_gpu, async: launch -> GPU activity
  kFwdBwd,    // fwdbwd: forward op -> its backward
  kOther,
};

// One recognised spelling of a category; `spelling` indexes kKnownCategories.
struct CategorySpelling {
  std::string_view text;
  Category category;
  FlowKind flow_kind;  // meaningful when category == kFlow
};

inline constexpr CategorySpelling kKnownCategories[] = {
    {"cpu_op", Category::kCpuOp, FlowKind::kOther},
    {"Operator", Category::kCpuOp, FlowKind::kOther},
    {"user_annotation", Category::kUserAnnotation, FlowKind::kOther},
    {"gpu_user_annotation", Category::kGpuUserAnnotation, FlowKind::kOther},
    {"python_function", Category::kPythonFunction, FlowKind::kOther},
    {"cuda_runtime", Category::kCudaRuntime, FlowKind::kOther},
    {"Runtime", Category::kCudaRuntime, FlowKind::kOther},
    {"cuda_driver", Category::kCudaDriver, FlowKind::kOther},
    {"kernel", Category::kKernel, FlowKind::kOther},
    {"Kernel", Category::kKernel, FlowKind::kOther},
    {"gpu_memcpy", Category::kGpuMemcpy, FlowKind::kOther},
    {"Memcpy", Category::kGpuMemcpy, FlowKind::kOther},
    {"gpu_memset", Category::kGpuMemset, FlowKind::kOther},
    {"Memset", Category::kGpuMemset, FlowKind::kOther},
    {"cuda_sync", Category::kCudaSync, FlowKind::kOther},
    {"cpu_instant_event", Category::kCpuInstant, FlowKind::kOther},
    {"Trace", Category::kTrace, FlowKind::kOther},
    {"overhead", Category::kOverhead, FlowKind::kOther},
    {"ac2g", Category::kFlow, FlowKind::kCpuToGpu},
    {"async_cpu_to_gpu", Category::kFlow, FlowKind::kCpuToGpu},
    {"async_gpu", Category::kFlow, FlowKind::kCpuToGpu},
    {"async", Category::kFlow, FlowKind::kCpuToGpu},
    {"fwdbwd", Category::kFlow, FlowKind::kFwdBwd},
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

std::string_view CategoryName(Category c);

// GPU activity: the things that occupy a GPU stream.
inline bool IsGpuActivity(Category c) {
  return c == Category::kKernel || c == Category::kGpuMemcpy || c == Category::kGpuMemset ||
         c == Category::kCudaSync;
}

}  // namespace rankscope

// What an event of the trace model is, whatever format it was read from.
//
// Every format maps its own event types onto these kinds (Kineto's "cat" spellings: see
// ingest/kineto/categories.h); analysis looks only at the kinds. A device is any accelerator
// (CUDA or ROCm GPU, MTIA, XPU, ...); the host is the CPU that drives it.
#pragma once

#include <cstdint>
#include <string_view>

namespace rankscope {

enum class ActivityKind : uint8_t {
  kNone = 0,           // the format gave the event no kind
  kOther,              // a kind rankscope does not interpret
  kHostOp,             // a framework operator run by the host (aten::mm, autograd nodes)
  kAnnotation,         // a range the program marked on the host (record_function, ProfilerStep#N)
  kDeviceAnnotation,   // such a range redrawn on a device's timeline
  kPythonFrame,        // a Python function call
  kRuntimeCall,        // a host call into the device runtime (cudaLaunchKernel, runFunction, ...)
  kDriverCall,         // a host call into the device driver (cuLaunchKernel, ...)
  kDeviceKernel,       // a kernel on a device stream: compute or communication (by its name)
  kDeviceMemcpy,       // a memory transfer on a device stream
  kDeviceMemset,       // a memory fill on a device stream
  kDeviceSync,         // a synchronisation: on a stream (a wait) or of the host (stream -1)
  kInstant,            // a point in time on the host
  kProfilerSpan,       // the profiler's own span
  kProfilerOverhead,   // time the profiler itself took
  kFlow,               // an arrow between two events; see FlowKind
  kCount
};

enum class FlowKind : uint8_t {
  kHostToDevice,        // a launch call -> the device activity it started
  kForwardToBackward,   // a forward op -> its backward op
  kOther,
};

std::string_view ActivityKindName(ActivityKind kind);  // "device_kernel", "host_op", ...

// Device activity: what occupies a device stream (and the host-side syncs recorded with it).
inline bool IsDeviceActivity(ActivityKind k) {
  return k == ActivityKind::kDeviceKernel || k == ActivityKind::kDeviceMemcpy ||
         k == ActivityKind::kDeviceMemset || k == ActivityKind::kDeviceSync;
}

// Host activity: what the host's threads run (ops, marked ranges, Python, runtime and driver
// calls), not the profiler's own events.
inline bool IsHostActivity(ActivityKind k) {
  return k == ActivityKind::kHostOp || k == ActivityKind::kAnnotation || k == ActivityKind::kPythonFrame ||
         k == ActivityKind::kRuntimeCall || k == ActivityKind::kDriverCall;
}

}  // namespace rankscope

// Waits and the collector's own threads: what a function table must not call work.
//
// A wait is time a thread spends blocked until something else happens — a timer (time.sleep),
// another thread (lock, event, condition, queue), the GPU (cudaStreamSynchronize and friends,
// reading a GPU tensor's value on the host), a peer (c10d's Work::wait). It still counts where
// it happens (it is on the stack; it may be what makes a rank late), but the report names it
// as a wait: speeding up the function itself is not the fix, what it waits for is.
//
// The collector's threads (rankscope's channel loop, its trace writer) are idle or busy on
// rankscope's own business; their Python frames are left out of the Python call paths so that
// the tool never shows up as the job's bottleneck.
#pragma once

#include <string_view>

namespace rankscope {

enum class FunctionTableKind : uint8_t { kKernel, kMemoryOp, kRuntimeCall, kCpuOp, kPythonFrame };

// Whether a function of that kind is a wait: runtime and CPU op names as written; a Python frame
// as the profiler names it ("<built-in function sleep>", "threading.py(331): wait").
bool IsWaitFunction(FunctionTableKind kind, std::string_view name);

// Whether a Python frame is the entry of one of rankscope's collector threads.
bool IsCollectorThreadFrame(std::string_view frame);

}  // namespace rankscope

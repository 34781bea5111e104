#include "rankscope/analysis/wait_functions.h"

#include <array>

namespace rankscope {
namespace {

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool Contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

// Host calls that block until the GPU (or another stream) is done.
constexpr std::array<std::string_view, 9> kRuntimeWaits = {
    "cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize", "cuStreamSynchronize",
    "cuCtxSynchronize",      "cuEventSynchronize",    "hipStreamSynchronize", "hipDeviceSynchronize",
    "hipEventSynchronize"};

// CPU ops whose time is waiting: for a peer (c10d's Work::wait), for the GPU (a GPU tensor's value
// read on the host: item() and _local_scalar_dense wait until the kernels before them are done).
constexpr std::array<std::string_view, 3> kCpuOpWaits = {"c10d::wait", "aten::_local_scalar_dense", "aten::item"};

}  // namespace

bool IsWaitFunction(FunctionTableKind kind, std::string_view name) {
  switch (kind) {
    case FunctionTableKind::kRuntimeCall:
      for (std::string_view w : kRuntimeWaits) {
        if (name == w) return true;
      }
      return false;
    case FunctionTableKind::kCpuOp:
      for (std::string_view w : kCpuOpWaits) {
        if (name == w) return true;
      }
      return false;
    case FunctionTableKind::kPythonFrame: {
      // Builtins: "<built-in function sleep>", "<method 'acquire' of '_thread.lock' objects>",
      // "<built-in method wait of ...>", "<method 'get' of '_queue.SimpleQueue' objects>".
      // A poll or select object's method ("<built-in method poll of select.poll object at 0x?>")
      // is how multiprocessing waits on a pipe: a DataLoader's main process for its workers.
      if (name == "<built-in function sleep>" || name == "<built-in function select>" ||
          name == "<built-in function poll>" || Contains(name, "<built-in method wait") ||
          Contains(name, "<built-in method synchronize") || name.starts_with("<built-in method poll of select.") ||
          name.starts_with("<built-in method select of select.")) {
        return true;
      }
      if (name.starts_with("<method 'acquire' of '_thread.") || name.starts_with("<method 'get' of '_queue.") ||
          name.starts_with("<method 'wait' of ")) {
        return true;
      }
      // Python functions of the standard library that block: threading's Event/Condition/Thread
      // waits, queue.get, time.sleep wrappers, selectors, subprocess waits, multiprocessing's
      // queue gets and connection waits.
      for (std::string_view file : {"threading.py(", "queue.py(", "selectors.py(", "subprocess.py(",
                                    "multiprocessing/queues.py(", "multiprocessing/connection.py("}) {
        const size_t at = name.find(file);
        if (at == std::string_view::npos || (at > 0 && name[at - 1] != '/')) continue;
        for (std::string_view fn : {"): wait", "): join", "): get", "): select", "): _wait_for_tstate_lock",
                                    "): communicate", "): _poll"}) {
          if (EndsWith(name, fn)) return true;
        }
      }
      // torch.cuda.synchronize() and Event.synchronize().
      return Contains(name, "torch/cuda/__init__.py(") && EndsWith(name, "): synchronize");
    }
    case FunctionTableKind::kKernel:
    case FunctionTableKind::kMemoryOp:
      return false;
  }
  return false;
}

bool IsCollectorThreadFrame(std::string_view frame) {
  // The channel thread (heartbeats, daemon requests) and the trace writer thread.
  return (Contains(frame, "rankscope/_channel.py(") && EndsWith(frame, "): _loop")) ||
         (Contains(frame, "rankscope/_capture.py(") && EndsWith(frame, "): _write"));
}

}  // namespace rankscope

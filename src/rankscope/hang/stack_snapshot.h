// One rank's stack snapshot (rank<R>.stacks.txt, format in docs/capture.md): every thread's
// stack, written by the in-process collector, or by the daemon from `py-spy dump --native` when
// the collector did not answer (then native frames are included and the header says
// `taken: py-spy`).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "rankscope/base/status.h"

namespace rankscope::hang {

struct Frame {
  std::string file;      // Python source file, or the shared library of a native frame
  int64_t line = 0;      // 0 for native frames
  std::string function;  // Python function name (co_name), or the native symbol
  std::string code;      // the source line, when known
  bool native = false;

  // "file:line function" (Python) or "function (file)" (native): the identity used to fold
  // stacks and to find where they diverge.
  std::string Key() const;
  bool operator==(const Frame& o) const {
    return native == o.native && line == o.line && function == o.function && file == o.file;
  }
};

struct ThreadStack {
  uint64_t ident = 0;
  std::string name;
  std::string kind;          // "main", "daemon" or "thread" (threading's view)
  bool owns_gil = false;     // py-spy only: this thread held the GIL
  std::vector<Frame> frames; // outermost first (most recent call last)

  // The Python frames only (a py-spy stack interleaves native frames; the collector's has none).
  std::vector<const Frame*> PythonFrames() const;
};

// How a rank's stack was taken.
enum class StackSource : uint8_t {
  kCollector,  // the rankscope collector inside the process (Python frames)
  kPySpy,      // py-spy from outside: the collector did not answer (Python and native frames)
};
std::string_view StackSourceName(StackSource s);

struct RankStacks {
  std::string path;
  int64_t rank = -1;
  int64_t pid = 0;
  int64_t parent_pid = 0;               // a DataLoader worker's: its rank's process
  int64_t world_size = -1;
  std::string host, job, capture;
  int64_t steps_completed = -1;
  double seconds_since_last_step = -1;  // -1: unknown
  double step_ms = 0;                   // the rank's recent step time, 0: unknown
  int64_t time_unix_ms = 0;
  StackSource source = StackSource::kCollector;
  std::string source_detail;            // e.g. why py-spy was used
  std::vector<ThreadStack> threads;
  std::vector<std::string> warnings;    // e.g. fewer threads than announced (truncated file)
};

// Parses the text of a stacks file; `path` is for messages only. The file must start with
// "rankscope-stacks 1"; a cut-off file parses with a warning (threads announced vs read).
StatusOr<RankStacks> ParseStacks(std::string_view text, std::string_view path);

// Larger files are refused (a snapshot of a process with thousands of threads is a few MB).
inline constexpr size_t kMaxStacksFileBytes = 64u << 20;

}  // namespace rankscope::hang

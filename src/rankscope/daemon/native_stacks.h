// Stacks taken from outside a process whose collector does not answer a snapshot — a thread
// holding the GIL while it blocks in C (a ctypes or extension call, a CUDA/NCCL call that does
// not release it): `py-spy dump --native --json --pid P` (py-spy from PyPI, installed by
// scripts/setup.sh), converted to the stacks format of docs/capture.md with `taken: py-spy`.
// py-spy attaches with ptrace: the daemon must run as root (or with CAP_SYS_PTRACE); it pauses
// the process for the dump (well under a second) and resumes it.
//
// A root daemon runs py-spy as the process's user, with CAP_SYS_PTRACE as its only privilege
// (an ambient capability): py-spy opens the files the process maps (its Python, its libraries)
// by the paths the process shows, and as that user it can open only what the user could. This
// needs py-spy itself to be a binary (it is exec'd through a descriptor the daemon opened, so it
// may live where the user cannot look); a script (a pyenv shim) runs as root, as it did before,
// and the daemon says so once.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "rankscope/base/status.h"

namespace rankscope::daemon {

struct NativeStackHeader {
  int32_t pid = 0;
  int32_t parent_pid = 0;  // a DataLoader worker's: its rank's process (0: the rank itself)
  int32_t rank = -1;
  int32_t world_size = -1;
  std::string job, host, capture;
  int64_t steps_completed = -1;
  double step_ms = 0;
  std::string because;  // why the stack was taken from outside
  std::string taken_as;  // whom py-spy ran as ("uid 1000 with CAP_SYS_PTRACE", "root"); set by TakeNativeStacks
};

// py-spy's JSON (a list of threads, frames innermost first) in the stacks format: Python frames
// as `File "...", line N, in f` (py-spy's qualified names cut to the function's own name, as
// Python's traceback writes them), native frames as `Native "<library>", in <symbol>`, the
// thread that holds the GIL marked ` gil`. Fails on JSON that is not py-spy's.
StatusOr<std::string> PySpyJsonToStacks(const nlohmann::json& threads, const NativeStackHeader& header,
                                        int64_t time_unix_ms);

// Whom py-spy runs as: a user and group (root: as the daemon).
struct RunAs {
  uid_t uid = 0;
  gid_t gid = 0;
};

// Runs py-spy (no shell; stdout read up to `max_output` bytes; killed after `timeout`) as `as`
// (above) and returns the stacks text. `py_spy` is an absolute path.
StatusOr<std::string> TakeNativeStacks(const std::string& py_spy, const NativeStackHeader& header,
                                       std::chrono::seconds timeout, const RunAs& as = {},
                                       size_t max_output = 16u << 20);

// TakeNativeStacks of the process (pid, start_ticks), as its user, only while it runs as `as.uid`
// (ProcessRunsAs), checked before and after the dump (capture_native.cc): never another process.
StatusOr<std::string> TakeStacksOf(const std::string& py_spy, const NativeStackHeader& header, uint64_t start_ticks,
                                   const RunAs& as, std::chrono::seconds timeout);

// Where py-spy is: `spec` if it contains a '/', else searched in $PATH; "" when not found.
std::string FindExecutable(const std::string& spec);

}  // namespace rankscope::daemon

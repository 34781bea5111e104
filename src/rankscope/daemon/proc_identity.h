// Who a training process is, read from /proc: its rank and job, from the environment that
// torchrun / SLURM / the user gave it. Kineto clients only send pids, so this is how the daemon
// tells real ranks from launcher processes that merely imported torch.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "rankscope/base/status.h"

namespace rankscope::daemon {

struct ProcIdentity {
  int32_t rank = -1;        // RANK, -1 when absent (a launcher, or a single-process job)
  int32_t local_rank = -1;  // LOCAL_RANK
  int32_t world_size = -1;  // WORLD_SIZE
  std::string job;          // see JobFromEnvironment
  uid_t uid = 0;            // from the kernel (the datagram's credentials), never from a client
  gid_t gid = 0;
  uint64_t start_ticks = 0; // /proc/<pid>/stat starttime: with the pid, names one process
  std::string command;      // argv joined by spaces, truncated
};

// Variables of /proc/<pid>/environ (the process's initial environment).
StatusOr<std::map<std::string, std::string>> ReadEnvironment(int32_t pid, const std::string& proc_root = "/proc");
StatusOr<ProcIdentity> ReadProcIdentity(int32_t pid, const std::string& proc_root = "/proc");

// The start time of process `pid` (clock ticks since boot), or 0 when there is no such process.
// A pid is reused after its process exits; the pair (pid, start time) is not.
uint64_t ProcessStartTicks(int32_t pid, const std::string& proc_root = "/proc");
// Is the process that had (pid, start_ticks) still running? start_ticks 0: any process of that pid.
bool ProcessAlive(int32_t pid, uint64_t start_ticks, const std::string& proc_root = "/proc");

// Does (pid, start_ticks) still name a running process whose real, effective, saved and file
// system uids are all `uid`, whose four gids are one, and which is dumpable (the kernel gives
// the files of /proc/<pid>/ to root otherwise)? That is, a process its user could ptrace.
// Checked right before and after the daemon ptraces a process (py-spy): a registered process
// that exec'd a setuid or setgid program (or one with file capabilities), or whose pid now names
// another process, is never dumped.
bool ProcessRunsAs(int32_t pid, uint64_t start_ticks, uid_t uid, const std::string& proc_root = "/proc");

// The parent pid of `pid` (0 when unknown).
int32_t ParentPid(int32_t pid, const std::string& proc_root = "/proc");

// The children of `pid` (from /proc/<n>/stat, as the kernel tells them), ascending, at most
// `max`; /proc is scanned once, at most `max_scanned` entries.
std::vector<int32_t> ChildProcesses(int32_t pid, size_t max, const std::string& proc_root = "/proc",
                                    size_t max_scanned = 1'000'000);

// The job a process belongs to, the same rule as the Python collector (rankscope/_identity.py):
// RANKSCOPE_JOB, else SLURM_JOB_ID, else TORCHELASTIC_RUN_ID unless it is "none", else
// "ppid<parent pid>" for a rank (its launcher) or "pid<pid>" for a lone process.
std::string JobFromEnvironment(const std::map<std::string, std::string>& env, int32_t pid, int32_t ppid);

}  // namespace rankscope::daemon

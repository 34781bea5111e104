// Who a training process is, read from /proc: its rank and job, from the environment that
// torchrun / SLURM / the user gave it. Kineto clients only send pids, so this is how the daemon
// tells real ranks from launcher processes that merely imported torch.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>

#include "rankscope/base/status.h"

namespace rankscope::daemon {

struct ProcIdentity {
  int32_t rank = -1;        // RANK, -1 when absent (a launcher, or a single-process job)
  int32_t local_rank = -1;  // LOCAL_RANK
  int32_t world_size = -1;  // WORLD_SIZE
  std::string job;          // see JobFromEnvironment
  uid_t uid = 0;
  std::string command;      // argv joined by spaces, truncated
  std::string ondemand_trace_dir;  // KINETO_ONDEMAND_TRACE_DIR of the process, if any
};

// Variables of /proc/<pid>/environ (the process's initial environment).
StatusOr<std::map<std::string, std::string>> ReadEnvironment(int32_t pid, const std::string& proc_root = "/proc");
StatusOr<ProcIdentity> ReadProcIdentity(int32_t pid, const std::string& proc_root = "/proc");

// Field 22 of /proc/<pid>/stat (start time in clock ticks since boot), 0 when unreadable: a pid
// with another start time is another process.
int64_t ProcessStartTicks(int32_t pid, const std::string& proc_root = "/proc");

// The job a process belongs to, the same rule as the Python collector (rankscope/_identity.py):
// RANKSCOPE_JOB, else SLURM_JOB_ID, else TORCHELASTIC_RUN_ID unless it is "none", else
// "ppid<parent pid>" for a rank (its launcher) or "pid<pid>" for a lone process.
std::string JobFromEnvironment(const std::map<std::string, std::string>& env, int32_t pid, int32_t ppid);

}  // namespace rankscope::daemon

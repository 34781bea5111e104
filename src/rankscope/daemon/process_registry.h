// The training processes of this node, as their collectors and Kineto clients announce them.
//
// Bounded: at most `max_processes` entries and `max_per_uid` per user, every string field of
// bounded length (the endpoints truncate them). A process is keyed by the pid the kernel gave
// with its datagram and its start time, so one process can neither speak for another nor
// outlive itself: an entry whose process has exited (or whose pid now names another process)
// is dropped the next time the registry is read. Silent processes expire too (Kineto polls
// every ~5 s, collectors send a heartbeat every ~2 s), except a collector's process that is
// still running: its collector is stuck (a thread holds the GIL) and a hang snapshot must still
// reach it from outside (docs/hang.md). The per-user quota bounds those too.
//
// Job names are per user: a process whose job name is already used by live processes of
// another uid is registered under "<job>.uid<U>", so nobody can join (and steer the aligned
// start of) someone else's job.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rankscope/base/status.h"
#include "rankscope/daemon/proc_identity.h"
#include "rankscope/daemon/unix_socket.h"

namespace rankscope::daemon {

using Clock = std::chrono::steady_clock;

enum ClientKind : uint8_t {
  kKinetoClient = 1,     // plain PyTorch with KINETO_USE_DAEMON=1
  kTrackerClient = 2,    // rankscope's Python collector (Tracker or `rankscope run`)
};

struct ProcessInfo {
  int32_t pid = 0;
  ProcIdentity identity;
  uint8_t kinds = 0;           // ClientKind bits
  Clock::time_point first_seen, last_seen;
  // Kineto
  int32_t kineto_type = 0;     // bit mask of the last poll; without bit 2 the profiler is busy
  int64_t slurm_job_id = 0;
  std::vector<int32_t> ancestors;
  // Collector
  UnixAddress collector_address;
  int64_t step = -1;           // completed steps at the last heartbeat
  double step_ms = 0;          // recent step time
  bool busy = false;           // profiling or writing a trace right now
  std::string host;
  double fr_pending_s = -1;    // the oldest open collective's age, sent while steps have stopped

  bool is_rank() const { return identity.rank >= 0; }
};

struct RegistryLimits {
  size_t max_processes = 4096;
  size_t max_per_uid = 256;
};

class ProcessRegistry {
 public:
  explicit ProcessRegistry(std::chrono::seconds expiry, RegistryLimits limits = {}, std::string proc_root = "/proc")
      : expiry_(expiry), limits_(limits), proc_root_(std::move(proc_root)) {}

  // A Kineto poll from `pid` (the kernel's). `identity` is read from /proc at registration
  // (uid and gid from the kernel). Returns true for a new registration, or why it was refused.
  StatusOr<bool> SeenKineto(int32_t pid, int32_t type, int64_t job_id, const std::vector<int32_t>& pids,
                            const ProcIdentity& identity);
  // A collector heartbeat; `info.pid` and `info.identity.uid/gid/start_ticks` come from the
  // kernel, the rest from the collector. Its rank, world size and job are taken from its first
  // message only; later ones update the step, step time, busy flag and host.
  StatusOr<bool> SeenCollector(const ProcessInfo& info);
  bool Contains(int32_t pid);
  // Could a new process of `uid` be registered now (the quotas)? Lets an endpoint skip reading
  // /proc for a process that would be refused anyway.
  bool HasRoomFor(uid_t uid);
  std::optional<ProcessInfo> Get(int32_t pid);
  void Remove(int32_t pid);
  // All live processes (expired and exited ones are dropped first), by pid.
  std::vector<ProcessInfo> List();
  size_t expired_total() const { return expired_total_; }
  size_t exited_total() const { return exited_total_; }
  size_t refused_total() const { return refused_total_; }

 private:
  void PruneLocked(Clock::time_point now);
  Status AdmitLocked(const ProcIdentity& identity);
  std::string JobForLocked(const std::string& job, uid_t uid, int32_t pid) const;
  ProcessInfo* FindLiveLocked(int32_t pid, uint64_t start_ticks);

  const std::chrono::seconds expiry_;
  const RegistryLimits limits_;
  const std::string proc_root_;
  std::mutex mu_;
  std::map<int32_t, ProcessInfo> procs_;
  size_t expired_total_ = 0, exited_total_ = 0, refused_total_ = 0;
};

nlohmann::json ToJson(const ProcessInfo& p, Clock::time_point now);

}  // namespace rankscope::daemon

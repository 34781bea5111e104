// The training processes of this node, as their collectors and Kineto clients announce them.
// Silent processes expire: Kineto polls every ~5 s, collectors send a heartbeat every ~2 s.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

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
  int32_t snapshot_signal = 0;
  double fr_pending_s = -1;    // the oldest open collective's age, sent while steps have stopped
  int64_t start_ticks = 0;     // /proc/<pid>/stat starttime: tells this process from a reused pid

  bool is_rank() const { return identity.rank >= 0; }
};

class ProcessRegistry {
 public:
  explicit ProcessRegistry(std::chrono::seconds expiry) : expiry_(expiry) {}

  // A Kineto poll. Returns true when the process was not known before (new registration).
  bool SeenKineto(int32_t pid, int32_t type, int64_t job_id, const std::vector<int32_t>& pids,
                  const ProcIdentity& identity);
  // A collector heartbeat; `info` carries the collector's own fields.
  bool SeenCollector(const ProcessInfo& info);
  bool Contains(int32_t pid);
  std::optional<ProcessInfo> Get(int32_t pid);
  void Remove(int32_t pid);
  // All live processes (expired ones are dropped first), by pid.
  std::vector<ProcessInfo> List();
  size_t expired_total() const { return expired_total_; }

 private:
  void ExpireLocked(Clock::time_point now);

  const std::chrono::seconds expiry_;
  std::mutex mu_;
  std::map<int32_t, ProcessInfo> procs_;
  size_t expired_total_ = 0;
};

nlohmann::json ToJson(const ProcessInfo& p, Clock::time_point now);

}  // namespace rankscope::daemon

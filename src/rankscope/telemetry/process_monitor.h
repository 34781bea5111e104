// The registered training processes (/proc/<pid>/stat): CPU, resident memory, threads, and the
// CPU of their descendants (DataLoader workers are child processes: an input-bound rank burns
// its CPU there, not in its own process).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "rankscope/telemetry/monitor.h"
#include "rankscope/telemetry/proc_files.h"

namespace rankscope::telemetry {

// A training process as the daemon's registry knows it.
struct Worker {
  int32_t pid = 0;
  int32_t rank = -1;
  int32_t local_rank = -1;
  std::string job;
};
using WorkerList = std::function<std::vector<Worker>()>;

// The fields of /proc/<pid>/stat we use.
struct ProcStat {
  int32_t ppid = 0;
  uint64_t cpu_ticks = 0;   // utime + stime
  uint64_t threads = 0;
  uint64_t start_ticks = 0; // starttime: with the pid, identifies the process (pids are reused)
  uint64_t rss_pages = 0;
};
// Fields after the command name, which may itself contain spaces and parentheses.
bool ParseProcStat(std::string_view text, ProcStat* out);

// The labels every process series carries: rank, job, pid.
Labels WorkerLabels(const Worker& w);

class ProcessMonitor : public Monitor {
 public:
  // Descendants are found by scanning every /proc/<pid>/stat (no /proc/<pid>/task/*/children
  // on kernels without CONFIG_PROC_CHILDREN); that costs ~5 us per process on the node, so it
  // is refreshed every `children_refresh_ns` (and when workers come or lack children), not at
  // every pass.
  ProcessMonitor(SystemRoots roots, WorkerList workers, int64_t children_refresh_ns = 5'000'000'000)
      : roots_(std::move(roots)), workers_(std::move(workers)), children_refresh_ns_(children_refresh_ns) {}
  std::string_view name() const override { return "process"; }
  Status Sample(int64_t mono_ns) override;
  void Log(Logger& logger) const override;

 private:
  struct Reading {
    uint64_t start_ticks = 0, cpu_ticks = 0;
  };
  struct Row {
    Worker worker;
    ProcStat stat;
    bool has_rate = false;
    double cpu_cores = 0, children_cores = 0;
    size_t children = 0;
  };
  void RefreshDescendants(const std::vector<Worker>& workers);
  // CPU cores used by `pid` since its last reading in `previous`; records it in `next`.
  bool CoresSince(int32_t pid, const ProcStat& st, const std::map<int32_t, Reading>& previous,
                  std::map<int32_t, Reading>* next, double* cores) const;

  SystemRoots roots_;
  WorkerList workers_;
  int64_t children_refresh_ns_;
  std::string buffer_;
  int64_t now_ns_ = 0, before_ns_ = 0, last_refresh_ns_ = 0;
  bool refreshed_once_ = false;
  std::vector<int32_t> refreshed_pids_;                   // the workers at the last scan
  std::map<int32_t, std::vector<int32_t>> descendants_;  // worker pid -> descendant pids
  std::map<int32_t, Reading> readings_;                   // every pid read last pass
  std::vector<Row> rows_;
};

}  // namespace rankscope::telemetry

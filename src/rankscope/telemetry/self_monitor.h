// The daemon's own cost and state: its CPU time and memory (the "< 1 % of a core" budget is
// watched through rankscope_daemon_cpu_seconds_total), the ring buffer, the samplers' passes.
#pragma once

#include "rankscope/telemetry/monitor.h"
#include "rankscope/telemetry/process_monitor.h"
#include "rankscope/telemetry/proc_files.h"
#include "rankscope/telemetry/telemetry_store.h"

namespace rankscope::telemetry {

class SelfMonitor : public Monitor {
 public:
  SelfMonitor(SystemRoots roots, TelemetryStore* store, WorkerList workers)
      : roots_(std::move(roots)), store_(store), workers_(std::move(workers)) {}
  std::string_view name() const override { return "self"; }
  Status Sample(int64_t mono_ns) override;
  void Log(Logger& logger) const override;

 private:
  SystemRoots roots_;
  TelemetryStore* store_;
  WorkerList workers_;
  std::string buffer_;
  ProcStat stat_;
  size_t workers_count_ = 0;
  RingStats ring_;
  size_t series_ = 0;
  std::map<std::string, TelemetryStore::PassStats> passes_;
};

}  // namespace rankscope::telemetry

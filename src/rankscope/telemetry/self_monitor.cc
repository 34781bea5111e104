#include "rankscope/telemetry/self_monitor.h"

namespace rankscope::telemetry {

Status SelfMonitor::Sample(int64_t) {
  if (!ReadSmallFile(roots_.proc + "/self/stat", &buffer_) || !ParseProcStat(buffer_, &stat_)) {
    return NotFound("cannot read {}/self/stat", roots_.proc);
  }
  workers_count_ = workers_ ? workers_().size() : 0;
  ring_ = store_->Stats();
  series_ = store_->series().size();
  passes_ = store_->Passes();
  return OkStatus();
}

void SelfMonitor::Log(Logger& logger) const {
  logger.Log("rankscope_daemon_cpu_seconds_total", {},
             static_cast<double>(stat_.cpu_ticks) / static_cast<double>(ClockTicksPerSecond()));
  logger.Log("rankscope_daemon_resident_bytes", {}, static_cast<double>(stat_.rss_pages * PageSize()));
  logger.Log("rankscope_registered_processes", {}, static_cast<double>(workers_count_));
  logger.Log("rankscope_telemetry_ring_frames", {}, static_cast<double>(ring_.frames));
  logger.Log("rankscope_telemetry_ring_bytes", {}, static_cast<double>(ring_.bytes));
  logger.Log("rankscope_telemetry_ring_span_seconds", {}, static_cast<double>(ring_.newest_unix_ns - ring_.oldest_unix_ns) / 1e9);
  logger.Log("rankscope_telemetry_series", {}, static_cast<double>(series_));
  for (const auto& [sampler, p] : passes_) {
    logger.Log("rankscope_telemetry_sample_seconds", {{"sampler", sampler}}, p.seconds);
    logger.Log("rankscope_telemetry_interval_seconds", {{"sampler", sampler}}, p.interval_s);
  }
}

}  // namespace rankscope::telemetry

// Block devices (/proc/diskstats): whole disks listed in /sys/block, without loop and ram
// devices; counters and rates over the last interval.
#pragma once

#include <map>
#include <set>
#include <string>

#include "rankscope/telemetry/monitor.h"
#include "rankscope/telemetry/proc_files.h"

namespace rankscope::telemetry {

struct DiskCounters {
  uint64_t reads = 0, writes = 0, read_sectors = 0, written_sectors = 0, io_ms = 0;
};
// Devices of /proc/diskstats whose name is in `disks` (all when empty).
std::map<std::string, DiskCounters> ParseDiskstats(std::string_view text, const std::set<std::string>& disks);

class DiskMonitor : public Monitor {
 public:
  explicit DiskMonitor(SystemRoots roots) : roots_(std::move(roots)) {}
  std::string_view name() const override { return "disk"; }
  Status Sample(int64_t mono_ns) override;
  void Log(Logger& logger) const override;

 private:
  SystemRoots roots_;
  std::string buffer_;
  std::map<std::string, DiskCounters> now_, before_;
  int64_t now_ns_ = 0, before_ns_ = 0;
  int passes_ = 0;
  std::set<std::string> disks_;
};

}  // namespace rankscope::telemetry

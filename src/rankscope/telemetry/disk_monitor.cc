#include "rankscope/telemetry/disk_monitor.h"

namespace rankscope::telemetry {

std::map<std::string, DiskCounters> ParseDiskstats(std::string_view text, const std::set<std::string>& disks) {
  // major minor name reads merged sectors ms_reading writes merged sectors ms_writing in_flight ms_io ...
  std::map<std::string, DiskCounters> out;
  for (std::string_view line : SplitLines(text)) {
    const auto f = SplitFields(line);
    if (f.size() < 13) continue;
    std::string name(f[2]);
    if (!disks.empty() && !disks.count(name)) continue;
    DiskCounters c;
    c.reads = ParseU64(f[3]);
    c.read_sectors = ParseU64(f[5]);
    c.writes = ParseU64(f[7]);
    c.written_sectors = ParseU64(f[9]);
    c.io_ms = ParseU64(f[12]);
    out.emplace(std::move(name), c);
  }
  return out;
}

Status DiskMonitor::Sample(int64_t mono_ns) {
  // The set of disks changes rarely (hotplug): list /sys/block every 60 passes.
  if (passes_++ % 60 == 0) {
    disks_.clear();
    for (const std::string& d : ListDir(roots_.sys + "/block")) {
      if (d.rfind("loop", 0) == 0 || d.rfind("ram", 0) == 0) continue;
      disks_.insert(d);
    }
  }
  if (!ReadSmallFile(roots_.proc + "/diskstats", &buffer_)) return NotFound("cannot read {}/diskstats", roots_.proc);
  before_ = std::move(now_);
  before_ns_ = now_ns_;
  now_ = disks_.empty() ? std::map<std::string, DiskCounters>{} : ParseDiskstats(buffer_, disks_);
  now_ns_ = mono_ns;
  return OkStatus();
}

void DiskMonitor::Log(Logger& logger) const {
  for (const auto& [dev, c] : now_) {
    const Labels l = {{"device", dev}};
    logger.Log("rankscope_disk_reads_total", l, static_cast<double>(c.reads));
    logger.Log("rankscope_disk_writes_total", l, static_cast<double>(c.writes));
    logger.Log("rankscope_disk_read_bytes_total", l, static_cast<double>(c.read_sectors) * 512);
    logger.Log("rankscope_disk_written_bytes_total", l, static_cast<double>(c.written_sectors) * 512);
    logger.Log("rankscope_disk_io_seconds_total", l, static_cast<double>(c.io_ms) / 1000.0);
    auto prev = before_.find(dev);
    if (prev == before_.end()) continue;
    const int64_t dt = now_ns_ - before_ns_;
    const DiskCounters& p = prev->second;
    logger.Log("rankscope_disk_read_bytes_per_second", l,
               CounterRate(static_cast<double>(p.read_sectors) * 512, static_cast<double>(c.read_sectors) * 512, dt));
    logger.Log("rankscope_disk_written_bytes_per_second", l,
               CounterRate(static_cast<double>(p.written_sectors) * 512, static_cast<double>(c.written_sectors) * 512, dt));
    // io_ms has millisecond resolution: over a 10 ms interval this ratio is coarse.
    logger.Log("rankscope_disk_busy_ratio", l,
               std::min(1.0, CounterRate(static_cast<double>(p.io_ms), static_cast<double>(c.io_ms), dt) / 1000.0));
  }
}

}  // namespace rankscope::telemetry

#include "rankscope/telemetry/cpu_monitor.h"

namespace rankscope::telemetry {
namespace {

CpuTicks ParseCpuLine(const std::vector<std::string_view>& fields) {
  CpuTicks t{};
  for (size_t i = 0; i < t.size() && i + 1 < fields.size(); ++i) t[i] = ParseU64(fields[i + 1]);
  return t;
}

}  // namespace

CpuShares SharesBetween(const CpuTicks& before, const CpuTicks& after) {
  CpuTicks d{};
  uint64_t total = 0;
  for (size_t i = 0; i < d.size(); ++i) {
    d[i] = after[i] >= before[i] ? after[i] - before[i] : 0;
    total += d[i];
  }
  CpuShares s;
  if (total == 0) {
    s.idle = 1;  // no tick elapsed (sampled faster than the 10 ms tick): call it idle
    return s;
  }
  const double t = static_cast<double>(total);
  s.user = static_cast<double>(d[0] + d[1]) / t;
  s.system = static_cast<double>(d[2] + d[5] + d[6]) / t;
  s.idle = static_cast<double>(d[3]) / t;
  s.iowait = static_cast<double>(d[4]) / t;
  s.steal = static_cast<double>(d[7]) / t;
  return s;
}

Status CpuMonitor::Sample(int64_t) {
  if (!ReadSmallFile(roots_.proc + "/stat", &buffer_)) return NotFound("cannot read {}/stat", roots_.proc);
  previous_total_ = total_;
  previous_cores_ = cores_;
  const std::vector<std::string> previous_names = core_names_;
  core_names_.clear();
  cores_.clear();
  for (std::string_view line : SplitLines(buffer_)) {
    if (line.substr(0, 3) != "cpu") continue;
    const auto fields = SplitFields(line);
    if (fields.empty()) continue;
    if (fields[0] == "cpu") {
      total_ = ParseCpuLine(fields);
    } else {
      core_names_.emplace_back(fields[0].substr(3));
      cores_.push_back(ParseCpuLine(fields));
    }
  }
  // Rates only between two readings of the same set of cores (CPU hotplug changes the set).
  has_previous_ = !previous_cores_.empty() && previous_names == core_names_;
  return OkStatus();
}

void CpuMonitor::Log(Logger& logger) const {
  // Divided, not multiplied by 1/ticks: 255 ticks read back as 2.55, not 2.5500000000000003.
  const double ticks_per_s = static_cast<double>(ClockTicksPerSecond());
  logger.Log("rankscope_cpu_count", {}, static_cast<double>(cores_.size()));
  for (size_t c = 0; c < cores_.size(); ++c) {
    for (size_t m = 0; m < kCpuModes.size(); ++m) {
      logger.Log("rankscope_cpu_seconds_total", {{"cpu", core_names_[c]}, {"mode", kCpuModes[m]}},
                 static_cast<double>(cores_[c][m]) / ticks_per_s);
    }
  }
  if (!has_previous_) return;
  const CpuShares all = SharesBetween(previous_total_, total_);
  logger.Log("rankscope_cpu_busy_ratio", {}, all.busy());
  const std::pair<const char*, double> modes[] = {
      {"user", all.user}, {"system", all.system}, {"iowait", all.iowait}, {"steal", all.steal}, {"idle", all.idle}};
  for (const auto& [mode, v] : modes) logger.Log("rankscope_cpu_utilization_ratio", {{"mode", mode}}, v);
  for (size_t c = 0; c < cores_.size(); ++c) {
    const CpuShares s = SharesBetween(previous_cores_[c], cores_[c]);
    logger.Log("rankscope_cpu_core_busy_ratio", {{"cpu", core_names_[c]}}, s.busy());
    const std::pair<const char*, double> core_modes[] = {
        {"user", s.user}, {"system", s.system}, {"iowait", s.iowait}, {"steal", s.steal}};
    for (const auto& [mode, v] : core_modes) {
      logger.Log("rankscope_cpu_core_utilization_ratio", {{"cpu", core_names_[c]}, {"mode", mode}}, v);
    }
  }
}

}  // namespace rankscope::telemetry

// CPU time per core from /proc/stat: counters per mode, and the share of each mode over the
// last interval, per core and for the whole node.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "rankscope/telemetry/monitor.h"
#include "rankscope/telemetry/proc_files.h"

namespace rankscope::telemetry {

// The eight modes of a cpu line, in /proc/stat's order (guest time is already in user).
inline constexpr std::array<const char*, 8> kCpuModes = {"user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal"};
using CpuTicks = std::array<uint64_t, 8>;

// Shares of an interval per reporting mode; computed from two readings of one cpu line.
struct CpuShares {
  double user = 0, system = 0, iowait = 0, steal = 0, idle = 0;
  double busy() const { return 1.0 - idle - iowait; }
};
CpuShares SharesBetween(const CpuTicks& before, const CpuTicks& after);

class CpuMonitor : public Monitor {
 public:
  explicit CpuMonitor(SystemRoots roots) : roots_(std::move(roots)) {}
  std::string_view name() const override { return "cpu"; }
  Status Sample(int64_t mono_ns) override;
  void Log(Logger& logger) const override;

 private:
  SystemRoots roots_;
  std::string buffer_;
  CpuTicks total_{}, previous_total_{};
  std::vector<std::string> core_names_;  // "0", "1", ...
  std::vector<CpuTicks> cores_, previous_cores_;
  bool has_previous_ = false;
};

}  // namespace rankscope::telemetry

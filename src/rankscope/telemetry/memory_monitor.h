// Memory of the node (/proc/meminfo) and of each NUMA node (/sys/devices/system/node).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "rankscope/telemetry/monitor.h"
#include "rankscope/telemetry/proc_files.h"

namespace rankscope::telemetry {

// "Key:   123 kB" lines -> bytes (values without a unit are kept as they are).
std::map<std::string, uint64_t, std::less<>> ParseMeminfo(std::string_view text, std::string_view line_prefix = "");

class MemoryMonitor : public Monitor {
 public:
  explicit MemoryMonitor(SystemRoots roots) : roots_(std::move(roots)) {}
  std::string_view name() const override { return "memory"; }
  Status Sample(int64_t mono_ns) override;
  void Log(Logger& logger) const override;

 private:
  SystemRoots roots_;
  std::string buffer_;
  std::map<std::string, uint64_t, std::less<>> info_;
};

class NumaMonitor : public Monitor {
 public:
  explicit NumaMonitor(SystemRoots roots) : roots_(std::move(roots)) {}
  std::string_view name() const override { return "numa"; }
  Status Sample(int64_t mono_ns) override;
  void Log(Logger& logger) const override;

 private:
  struct Node {
    std::string id;
    uint64_t total = 0, free = 0;
    std::map<std::string, uint64_t, std::less<>> numastat;
  };
  SystemRoots roots_;
  std::string buffer_;
  std::vector<Node> nodes_;
};

}  // namespace rankscope::telemetry

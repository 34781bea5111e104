// Network interfaces (/proc/net/dev) and InfiniBand ports (/sys/class/infiniband): counters and
// their rates over the last interval.
#pragma once

#include <map>
#include <string>

#include "rankscope/telemetry/monitor.h"
#include "rankscope/telemetry/proc_files.h"

namespace rankscope::telemetry {

struct InterfaceCounters {
  uint64_t rx_bytes = 0, rx_packets = 0, rx_errors = 0, rx_drops = 0;
  uint64_t tx_bytes = 0, tx_packets = 0, tx_errors = 0, tx_drops = 0;
};
std::map<std::string, InterfaceCounters> ParseNetDev(std::string_view text);

class NetworkMonitor : public Monitor {
 public:
  explicit NetworkMonitor(SystemRoots roots) : roots_(std::move(roots)) {}
  std::string_view name() const override { return "network"; }
  Status Sample(int64_t mono_ns) override;
  void Log(Logger& logger) const override;

 private:
  SystemRoots roots_;
  std::string buffer_;
  std::map<std::string, InterfaceCounters> now_, before_;
  int64_t now_ns_ = 0, before_ns_ = 0;
};

class InfinibandMonitor : public Monitor {
 public:
  explicit InfinibandMonitor(SystemRoots roots) : roots_(std::move(roots)) {}
  std::string_view name() const override { return "infiniband"; }
  Status Sample(int64_t mono_ns) override;
  void Log(Logger& logger) const override;

 private:
  struct Port {
    bool up = false;
    double rate_bps = 0;
    uint64_t rx_bytes = 0, tx_bytes = 0, rx_packets = 0, tx_packets = 0, xmit_wait = 0;
    std::map<std::string, uint64_t> errors;
  };
  using PortKey = std::pair<std::string, std::string>;  // device, port
  SystemRoots roots_;
  std::string buffer_;
  std::map<PortKey, Port> now_, before_;
  int64_t now_ns_ = 0, before_ns_ = 0;
};

}  // namespace rankscope::telemetry

#include "rankscope/telemetry/network_monitor.h"

namespace rankscope::telemetry {

std::map<std::string, InterfaceCounters> ParseNetDev(std::string_view text) {
  // Two header lines, then "  eth0: rx_bytes rx_packets errs drop fifo frame compressed
  // multicast tx_bytes tx_packets errs drop fifo colls carrier compressed".
  std::map<std::string, InterfaceCounters> out;
  for (std::string_view line : SplitLines(text)) {
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view dev = line.substr(0, colon);
    while (!dev.empty() && dev.front() == ' ') dev.remove_prefix(1);
    const auto f = SplitFields(line.substr(colon + 1));
    if (f.size() < 16 || dev.empty()) continue;
    InterfaceCounters c;
    c.rx_bytes = ParseU64(f[0]);
    c.rx_packets = ParseU64(f[1]);
    c.rx_errors = ParseU64(f[2]);
    c.rx_drops = ParseU64(f[3]);
    c.tx_bytes = ParseU64(f[8]);
    c.tx_packets = ParseU64(f[9]);
    c.tx_errors = ParseU64(f[10]);
    c.tx_drops = ParseU64(f[11]);
    out.emplace(std::string(dev), c);
  }
  return out;
}

Status NetworkMonitor::Sample(int64_t mono_ns) {
  if (!ReadSmallFile(roots_.proc + "/net/dev", &buffer_)) return NotFound("cannot read {}/net/dev", roots_.proc);
  before_ = std::move(now_);
  before_ns_ = now_ns_;
  now_ = ParseNetDev(buffer_);
  now_ns_ = mono_ns;
  return OkStatus();
}

void NetworkMonitor::Log(Logger& logger) const {
  for (const auto& [dev, c] : now_) {
    const Labels l = {{"device", dev}};
    logger.Log("rankscope_network_receive_bytes_total", l, static_cast<double>(c.rx_bytes));
    logger.Log("rankscope_network_transmit_bytes_total", l, static_cast<double>(c.tx_bytes));
    logger.Log("rankscope_network_receive_packets_total", l, static_cast<double>(c.rx_packets));
    logger.Log("rankscope_network_transmit_packets_total", l, static_cast<double>(c.tx_packets));
    logger.Log("rankscope_network_receive_errors_total", l, static_cast<double>(c.rx_errors));
    logger.Log("rankscope_network_transmit_errors_total", l, static_cast<double>(c.tx_errors));
    logger.Log("rankscope_network_receive_drops_total", l, static_cast<double>(c.rx_drops));
    logger.Log("rankscope_network_transmit_drops_total", l, static_cast<double>(c.tx_drops));
    auto prev = before_.find(dev);
    if (prev == before_.end()) continue;
    const int64_t dt = now_ns_ - before_ns_;
    logger.Log("rankscope_network_receive_bytes_per_second", l,
               CounterRate(static_cast<double>(prev->second.rx_bytes), static_cast<double>(c.rx_bytes), dt));
    logger.Log("rankscope_network_transmit_bytes_per_second", l,
               CounterRate(static_cast<double>(prev->second.tx_bytes), static_cast<double>(c.tx_bytes), dt));
  }
}

namespace {

// "200 Gb/sec (4X HDR)" -> 2e11 bits/s.
double ParseIbRate(std::string_view text) {
  const auto f = SplitFields(text);
  if (f.size() < 2) return 0;
  double v = static_cast<double>(ParseU64(f[0]));
  // A fractional rate ("2.5 Gb/sec") parses its integer part; add the fraction.
  if (size_t dot = f[0].find('.'); dot != std::string_view::npos) {
    const std::string_view frac = f[0].substr(dot + 1);
    double scale = 0.1;
    for (char ch : frac) {
      if (ch < '0' || ch > '9') break;
      v += (ch - '0') * scale;
      scale /= 10;
    }
  }
  return f[1].rfind("Gb", 0) == 0 ? v * 1e9 : f[1].rfind("Mb", 0) == 0 ? v * 1e6 : v;
}

}  // namespace

Status InfinibandMonitor::Sample(int64_t mono_ns) {
  before_ = std::move(now_);
  before_ns_ = now_ns_;
  now_.clear();
  now_ns_ = mono_ns;
  const std::string base = roots_.sys + "/class/infiniband";
  for (const std::string& dev : ListDir(base)) {
    for (const std::string& port : ListDir(base + "/" + dev + "/ports")) {
      const std::string dir = base + "/" + dev + "/ports/" + port;
      Port p;
      if (ReadSmallFile(dir + "/state", &buffer_)) p.up = buffer_.find("ACTIVE") != std::string::npos;
      if (ReadSmallFile(dir + "/rate", &buffer_)) p.rate_bps = ParseIbRate(buffer_);
      auto counter = [&](const char* name) -> uint64_t {
        return ReadSmallFile(dir + "/counters/" + name, &buffer_) ? ParseU64(buffer_) : 0;
      };
      // port_rcv_data / port_xmit_data count 4-byte words (IBA spec, PortCounters).
      p.rx_bytes = counter("port_rcv_data") * 4;
      p.tx_bytes = counter("port_xmit_data") * 4;
      p.rx_packets = counter("port_rcv_packets");
      p.tx_packets = counter("port_xmit_packets");
      p.xmit_wait = counter("port_xmit_wait");
      for (const char* e : {"symbol_error", "link_downed", "port_rcv_errors", "link_error_recovery"}) {
        p.errors[e] = counter(e);
      }
      now_.emplace(PortKey{dev, port}, std::move(p));
    }
  }
  return OkStatus();  // no /sys/class/infiniband: no ports, nothing to report
}

void InfinibandMonitor::Log(Logger& logger) const {
  for (const auto& [key, p] : now_) {
    const Labels l = {{"device", key.first}, {"port", key.second}};
    logger.Log("rankscope_infiniband_port_up", l, p.up ? 1 : 0);
    logger.Log("rankscope_infiniband_rate_bits_per_second", l, p.rate_bps);
    logger.Log("rankscope_infiniband_receive_bytes_total", l, static_cast<double>(p.rx_bytes));
    logger.Log("rankscope_infiniband_transmit_bytes_total", l, static_cast<double>(p.tx_bytes));
    logger.Log("rankscope_infiniband_receive_packets_total", l, static_cast<double>(p.rx_packets));
    logger.Log("rankscope_infiniband_transmit_packets_total", l, static_cast<double>(p.tx_packets));
    logger.Log("rankscope_infiniband_transmit_wait_total", l, static_cast<double>(p.xmit_wait));
    for (const auto& [counter, v] : p.errors) {
      logger.Log("rankscope_infiniband_errors_total", {{"device", key.first}, {"port", key.second}, {"counter", counter}},
                 static_cast<double>(v));
    }
    auto prev = before_.find(key);
    if (prev == before_.end()) continue;
    const int64_t dt = now_ns_ - before_ns_;
    logger.Log("rankscope_infiniband_receive_bytes_per_second", l,
               CounterRate(static_cast<double>(prev->second.rx_bytes), static_cast<double>(p.rx_bytes), dt));
    logger.Log("rankscope_infiniband_transmit_bytes_per_second", l,
               CounterRate(static_cast<double>(prev->second.tx_bytes), static_cast<double>(p.tx_bytes), dt));
  }
}

}  // namespace rankscope::telemetry

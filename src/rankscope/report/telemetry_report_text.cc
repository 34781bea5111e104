#include "rankscope/report/telemetry_report_text.h"

#include <fmt/format.h>

#include <cmath>

#include "rankscope/report/text_format.h"

namespace rankscope {
namespace {

std::string Pct(const telemetry::Figure& f) { return f ? fmt::format("{:.1f}%", *f * 100) : "-"; }
std::string Cores(const telemetry::Figure& f) { return f ? fmt::format("{:.2f}", *f) : "-"; }
std::string Bytes(const telemetry::Figure& f) {
  return f && std::isfinite(*f) ? FormatByteCount(static_cast<int64_t>(*f)) : "-";
}
std::string Rate(const telemetry::Figure& f) { return f ? fmt::format("{:.2f} MB/s", *f / 1e6) : "-"; }

}  // namespace

std::string RenderNodeTelemetry(const analysis::NodeWindowTelemetry& n) {
  std::string out;
  const auto& m = n.mean;
  const auto& p = n.peak;
  out += fmt::format("\nnode {}  ({:.0f}% of the window sampled; interval ms {})\n    from {}\n", n.host, n.coverage * 100,
                     n.interval_ms, n.source);
  out += fmt::format("  CPU      {} busy of {} cores (user {}, system {}, iowait {}, steal {}); peak {}\n", Pct(m.cpu_busy),
             m.cpu_count ? fmt::format("{:.0f}", *m.cpu_count) : "-", Pct(m.cpu_user), Pct(m.cpu_system), Pct(m.cpu_iowait),
             Pct(m.cpu_steal), Pct(p.cpu_busy));
  out += fmt::format("  memory   {} used of {} (peak {}), swap {}\n", Bytes(m.mem_used), Bytes(m.mem_total), Bytes(p.mem_used),
             Bytes(m.swap_used));
  out += fmt::format("  network  rx {} tx {}   disk read {} write {}", Rate(m.net_rx), Rate(m.net_tx), Rate(m.disk_read), Rate(m.disk_write));
  if (m.ib_rx || m.ib_tx) out += fmt::format("   InfiniBand rx {} tx {}", Rate(m.ib_rx), Rate(m.ib_tx));
  out += fmt::format("\n");
  if (m.gpus.empty()) out += fmt::format("  GPU      {}\n", n.gpu_status.empty() ? "no GPU telemetry" : n.gpu_status);
  for (size_t i = 0; i < m.gpus.size(); ++i) {
    const auto& g = m.gpus[i];
    const telemetry::Figure peak_util = i < p.gpus.size() ? p.gpus[i].util : std::nullopt;
    // Two lines per GPU so the report stays within 100 columns.
    out += fmt::format("  GPU {:<4} {} util {} (peak {}), memory {} of {}\n", g.device, g.name, Pct(g.util),
                       Pct(peak_util), Bytes(g.mem_used), Bytes(g.mem_total));
    out += fmt::format("           {:.0f} W, SM {:.0f} MHz, {:.0f} C, PCIe rx {} tx {}, NVLink rx {} tx {}\n",
                       g.power_w.value_or(0), g.sm_hz.value_or(0) / 1e6, g.temp_c.value_or(0), Rate(g.pcie_rx),
                       Rate(g.pcie_tx), Rate(g.nvlink_rx), Rate(g.nvlink_tx));
  }
  if (!m.processes.empty()) {
    out += fmt::format("  {:>5} {:>8} {:>10} {:>16} {:>11} {:>8}  {}\n", "rank", "pid", "cpu cores", "loader cores", "rss", "threads", "gpu memory");
    for (const auto& r : m.processes) {
      std::string gpu;
      for (const auto& [dev, bytes] : r.gpu_memory) gpu += fmt::format("gpu{} {} ", dev, Bytes(bytes));
      out += fmt::format("  {:>5} {:>8} {:>10} {:>16} {:>11} {:>8}  {}\n", r.rank, r.pid, Cores(r.cpu_cores),
                 fmt::format("{} ({:.0f} procs)", Cores(r.children_cpu_cores), r.children.value_or(0)), Bytes(r.rss),
                 r.threads ? fmt::format("{:.0f}", *r.threads) : "-", gpu.empty() ? "-" : gpu);
    }
  }
  for (const auto& w : n.warnings) out += fmt::format("  warning: {}\n", w);
  return out;
}


}  // namespace rankscope

#include "rankscope/telemetry/gpu_monitor.h"

#include <climits>

namespace rankscope::telemetry {
namespace {

std::optional<double> FieldAsDouble(const nvml::FieldValue& f) {
  if (f.nvml_return != nvml::kSuccess) return std::nullopt;
  switch (f.value_type) {
    case nvml::kValueTypeDouble: return f.value.d;
    case nvml::kValueTypeUnsignedInt: return static_cast<double>(f.value.ui);
    case nvml::kValueTypeUnsignedLong: return static_cast<double>(f.value.ul);
    case nvml::kValueTypeUnsignedLongLong: return static_cast<double>(f.value.ull);
    case nvml::kValueTypeSignedLongLong: return static_cast<double>(f.value.sll);
    case nvml::kValueTypeSignedInt: return static_cast<double>(f.value.si);
    default: return std::nullopt;
  }
}

}  // namespace

GpuMonitor::GpuMonitor(std::unique_ptr<nvml::Library> nvml, WorkerList workers)
    : nvml_(std::move(nvml)), workers_(std::move(workers)) {
  unsigned int count = 0;
  if (nvml_->DeviceGetCount(&count) != nvml::kSuccess) count = 0;
  for (unsigned int i = 0; i < count; ++i) {
    Device d;
    if (nvml_->DeviceGetHandleByIndex(i, &d.handle) != nvml::kSuccess) continue;
    d.index = std::to_string(i);
    char buf[128] = {};
    if (nvml_->DeviceGetName && nvml_->DeviceGetName(d.handle, buf, sizeof(buf)) == nvml::kSuccess) d.name = buf;
    buf[0] = 0;
    if (nvml_->DeviceGetUUID && nvml_->DeviceGetUUID(d.handle, buf, sizeof(buf)) == nvml::kSuccess) d.uuid = buf;
    devices_.push_back(std::move(d));
  }
}

void GpuMonitor::ReadDevice(Device& d, int64_t elapsed_ns) {
  d.before = std::move(d.now);
  Reading& r = d.now;
  r = Reading{};
  const nvml::Library& n = *nvml_;
  if (nvml::Utilization u{}; n.DeviceGetUtilizationRates && n.DeviceGetUtilizationRates(d.handle, &u) == nvml::kSuccess) {
    r.util = u.gpu / 100.0;
    r.mem_util = u.memory / 100.0;
  }
  if (nvml::Memory m{}; n.DeviceGetMemoryInfo && n.DeviceGetMemoryInfo(d.handle, &m) == nvml::kSuccess) {
    r.mem_used = static_cast<double>(m.used);
    r.mem_total = static_cast<double>(m.total);
  }
  unsigned int v = 0;
  if (n.DeviceGetPowerUsage && n.DeviceGetPowerUsage(d.handle, &v) == nvml::kSuccess) r.power_w = v / 1000.0;
  if (n.DeviceGetClockInfo && n.DeviceGetClockInfo(d.handle, nvml::kClockSm, &v) == nvml::kSuccess) r.sm_hz = v * 1e6;
  if (n.DeviceGetClockInfo && n.DeviceGetClockInfo(d.handle, nvml::kClockMem, &v) == nvml::kSuccess) r.mem_hz = v * 1e6;
  if (n.DeviceGetTemperature && n.DeviceGetTemperature(d.handle, nvml::kTemperatureGpu, &v) == nvml::kSuccess) r.temp_c = v;
  // NVML reports PCIe throughput in KB/s (1024 bytes).
  if (n.DeviceGetPcieThroughput && n.DeviceGetPcieThroughput(d.handle, nvml::kPcieRxBytes, &v) == nvml::kSuccess) r.pcie_rx = v * 1024.0;
  if (n.DeviceGetPcieThroughput && n.DeviceGetPcieThroughput(d.handle, nvml::kPcieTxBytes, &v) == nvml::kSuccess) r.pcie_tx = v * 1024.0;
  if (n.DeviceGetFieldValues) {
    nvml::FieldValue f[2] = {};
    f[0].field_id = nvml::kFieldNvlinkDataRx;
    f[1].field_id = nvml::kFieldNvlinkDataTx;
    f[0].scope_id = f[1].scope_id = UINT_MAX;  // summed over all links
    if (n.DeviceGetFieldValues(d.handle, 2, f) == nvml::kSuccess) {
      if (auto kib = FieldAsDouble(f[0])) r.nvlink_rx = *kib * 1024.0;
      if (auto kib = FieldAsDouble(f[1])) r.nvlink_tx = *kib * 1024.0;
    }
    if (r.nvlink_rx && d.before.nvlink_rx) r.nvlink_rx_rate = CounterRate(*d.before.nvlink_rx, *r.nvlink_rx, elapsed_ns);
    if (r.nvlink_tx && d.before.nvlink_tx) r.nvlink_tx_rate = CounterRate(*d.before.nvlink_tx, *r.nvlink_tx, elapsed_ns);
  }
  if (n.DeviceGetComputeRunningProcesses) {
    nvml::ProcessInfo procs[64] = {};
    unsigned int count = 64;
    if (n.DeviceGetComputeRunningProcesses(d.handle, &count, procs) == nvml::kSuccess) {
      for (unsigned int i = 0; i < count && i < 64; ++i) {
        r.processes.emplace_back(static_cast<int32_t>(procs[i].pid), static_cast<double>(procs[i].used_gpu_memory));
      }
    }
  }
}

Status GpuMonitor::Sample(int64_t mono_ns) {
  const int64_t elapsed = now_ns_ ? mono_ns - now_ns_ : 0;
  now_ns_ = mono_ns;
  workers_now_ = workers_ ? workers_() : std::vector<Worker>{};
  for (Device& d : devices_) ReadDevice(d, elapsed);
  return OkStatus();
}

void GpuMonitor::Log(Logger& logger) const {
  logger.Log("rankscope_gpu_available", {}, devices_.empty() ? 0 : 1);
  for (const Device& d : devices_) {
    const Labels l = {{"device", d.index}};
    logger.Log("rankscope_gpu_info", {{"device", d.index}, {"uuid", d.uuid}, {"name", d.name}}, 1);
    const Reading& r = d.now;
    auto log = [&](const char* metric, const std::optional<double>& v) {
      if (v) logger.Log(metric, l, *v);
    };
    log("rankscope_gpu_utilization_ratio", r.util);
    log("rankscope_gpu_memory_utilization_ratio", r.mem_util);
    log("rankscope_gpu_memory_used_bytes", r.mem_used);
    log("rankscope_gpu_memory_total_bytes", r.mem_total);
    log("rankscope_gpu_power_watts", r.power_w);
    log("rankscope_gpu_sm_clock_hertz", r.sm_hz);
    log("rankscope_gpu_memory_clock_hertz", r.mem_hz);
    log("rankscope_gpu_temperature_celsius", r.temp_c);
    log("rankscope_gpu_pcie_receive_bytes_per_second", r.pcie_rx);
    log("rankscope_gpu_pcie_transmit_bytes_per_second", r.pcie_tx);
    log("rankscope_gpu_nvlink_receive_bytes_total", r.nvlink_rx);
    log("rankscope_gpu_nvlink_transmit_bytes_total", r.nvlink_tx);
    log("rankscope_gpu_nvlink_receive_bytes_per_second", r.nvlink_rx_rate);
    log("rankscope_gpu_nvlink_transmit_bytes_per_second", r.nvlink_tx_rate);
    for (const auto& [pid, bytes] : r.processes) {
      for (const Worker& w : workers_now_) {
        if (w.pid != pid) continue;
        Labels pl = WorkerLabels(w);
        pl.push_back({"device", d.index});
        logger.Log("rankscope_process_gpu_memory_bytes", pl, bytes);
      }
    }
  }
}

StatusOr<std::unique_ptr<GpuMonitor>> OpenGpuMonitor(const std::string& library, WorkerList workers) {
  RANKSCOPE_ASSIGN_OR_RETURN(std::unique_ptr<nvml::Library> lib, nvml::Library::Load(library));
  auto monitor = std::make_unique<GpuMonitor>(std::move(lib), std::move(workers));
  if (monitor->device_count() == 0) return NotFound("NVML found no GPU on this node");
  return monitor;
}

}  // namespace rankscope::telemetry

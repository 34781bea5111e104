// GPUs through NVML: utilization, memory, power, clocks, temperature, PCIe and NVLink
// throughput, and the GPU memory of each registered training process. Runs on a sampler
// thread of its own: some NVML calls take milliseconds (PCIe throughput samples over 20 ms),
// and must never delay the /proc samplers.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rankscope/telemetry/monitor.h"
#include "rankscope/telemetry/nvml_library.h"
#include "rankscope/telemetry/process_monitor.h"

namespace rankscope::telemetry {

class GpuMonitor : public Monitor {
 public:
  GpuMonitor(std::unique_ptr<nvml::Library> nvml, WorkerList workers);
  std::string_view name() const override { return "gpu"; }
  Status Sample(int64_t mono_ns) override;
  void Log(Logger& logger) const override;
  size_t device_count() const { return devices_.size(); }

 private:
  struct Reading {
    std::optional<double> util, mem_util, mem_used, mem_total, power_w, sm_hz, mem_hz, temp_c, pcie_rx, pcie_tx;
    std::optional<double> nvlink_rx, nvlink_tx;            // bytes, cumulative
    std::optional<double> nvlink_rx_rate, nvlink_tx_rate;  // bytes/s
    std::vector<std::pair<int32_t, double>> processes;     // pid, GPU memory bytes
  };
  struct Device {
    nvml::Device handle = nullptr;
    std::string index, name, uuid;
    Reading now, before;
  };
  void ReadDevice(Device& d, int64_t elapsed_ns);

  std::unique_ptr<nvml::Library> nvml_;
  WorkerList workers_;
  std::vector<Device> devices_;
  std::vector<Worker> workers_now_;
  int64_t now_ns_ = 0;
};

// Loads NVML from `library` and builds the monitor; the Status says why there is no GPU
// telemetry (no driver, no device) and is reported as "unavailable", not as an error.
StatusOr<std::unique_ptr<GpuMonitor>> OpenGpuMonitor(const std::string& library, WorkerList workers);

}  // namespace rankscope::telemetry

// The daemon's telemetry: builds the monitors, runs the "proc" and "gpu" sampler threads, and
// answers what the HTTP API and the capture manager ask of it (/metrics, the latest key
// figures, the samples of a capture's window saved beside its traces).
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "rankscope/telemetry/process_monitor.h"
#include "rankscope/telemetry/proc_files.h"
#include "rankscope/telemetry/sampler_loop.h"
#include "rankscope/telemetry/sidecar.h"
#include "rankscope/telemetry/telemetry_store.h"

namespace rankscope::telemetry {

class TelemetryService {
 public:
  struct Options {
    std::string host;
    SystemRoots roots;
    std::chrono::milliseconds interval{1000};      // /proc and /sys sources; 10 ms at least
    std::chrono::milliseconds gpu_interval{1000};  // NVML; 100 ms at least
    std::string nvml_library = "libnvidia-ml.so.1";
    TelemetryStore::Options ring;
    WorkerList workers;
  };
  static constexpr std::chrono::milliseconds kMinInterval{10}, kMinGpuInterval{100};

  explicit TelemetryService(Options options);
  ~TelemetryService();
  void Start();
  void Stop();

  TelemetryStore& store() { return store_; }
  bool gpu_available() const { return gpu_loop_ != nullptr; }
  const std::string& gpu_status() const { return gpu_status_; }  // "available" or "unavailable: why"

  std::string Metrics() const;         // /metrics
  nlohmann::json LatestJson() const;   // /v1/telemetry: key figures of the latest values
  // The samples of [start_ns, end_ns] as the text of a sidecar file (see sidecar.h).
  std::string WindowText(const std::string& capture, const std::string& job, int64_t start_ns, int64_t end_ns) const;

 private:
  Options options_;
  TelemetryStore store_;
  std::unique_ptr<SamplerLoop> proc_loop_, gpu_loop_;
  std::string gpu_status_;
};

}  // namespace rankscope::telemetry

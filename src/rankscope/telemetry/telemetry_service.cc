#include "rankscope/telemetry/telemetry_service.h"

#include <algorithm>

#include <fmt/format.h>

#include "rankscope/telemetry/cpu_monitor.h"
#include "rankscope/telemetry/disk_monitor.h"
#include "rankscope/telemetry/gpu_monitor.h"
#include "rankscope/telemetry/memory_monitor.h"
#include "rankscope/telemetry/network_monitor.h"
#include "rankscope/telemetry/node_figures.h"
#include "rankscope/telemetry/prometheus_text.h"
#include "rankscope/telemetry/self_monitor.h"

namespace rankscope::telemetry {

TelemetryService::TelemetryService(Options options) : options_(std::move(options)), store_(options_.ring) {
  options_.interval = std::max(options_.interval, kMinInterval);
  options_.gpu_interval = std::max(options_.gpu_interval, kMinGpuInterval);
  std::vector<std::unique_ptr<Monitor>> proc;
  proc.push_back(std::make_unique<CpuMonitor>(options_.roots));
  proc.push_back(std::make_unique<MemoryMonitor>(options_.roots));
  proc.push_back(std::make_unique<NumaMonitor>(options_.roots));
  proc.push_back(std::make_unique<NetworkMonitor>(options_.roots));
  proc.push_back(std::make_unique<InfinibandMonitor>(options_.roots));
  proc.push_back(std::make_unique<DiskMonitor>(options_.roots));
  proc.push_back(std::make_unique<ProcessMonitor>(options_.roots, options_.workers));
  proc.push_back(std::make_unique<SelfMonitor>(options_.roots, &store_, options_.workers));
  proc_loop_ = std::make_unique<SamplerLoop>("proc", options_.interval, std::move(proc), &store_);

  auto gpu = OpenGpuMonitor(options_.nvml_library, options_.workers);
  if (gpu.ok()) {
    gpu_status_ = "available";
    std::vector<std::unique_ptr<Monitor>> monitors;
    monitors.push_back(std::move(*gpu));
    gpu_loop_ = std::make_unique<SamplerLoop>("gpu", options_.gpu_interval, std::move(monitors), &store_);
  } else {
    // No driver is the normal state of a CPU node: say so once, and export gpu_available 0.
    gpu_status_ = "unavailable: " + gpu.status().message();
    store_.Publish("gpu", UnixNowNs(), {{store_.series().Intern("rankscope_gpu_available", {}), 0.0}});
  }
}

TelemetryService::~TelemetryService() { Stop(); }

void TelemetryService::Start() {
  proc_loop_->Start();
  if (gpu_loop_) gpu_loop_->Start();
}

void TelemetryService::Stop() {
  if (proc_loop_) proc_loop_->Stop();
  if (gpu_loop_) gpu_loop_->Stop();
}

std::string TelemetryService::Metrics() const { return RenderPrometheus(store_.Latest(), options_.host); }

nlohmann::json TelemetryService::LatestJson() const {
  const std::vector<SeriesValue> latest = store_.Latest();
  std::vector<FigureInput> inputs;
  int64_t newest = 0;
  for (const auto& v : latest) {
    inputs.push_back({v.key->metric, &v.key->labels, v.value});
    newest = std::max(newest, v.unix_ns);
  }
  nlohmann::json j = ToJson(BuildNodeFigures(inputs));
  j["host"] = options_.host;
  j["time_unix_ms"] = newest / 1'000'000;
  j["interval_ms"] = {{"proc", options_.interval.count()}, {"gpu", options_.gpu_interval.count()}};
  j["gpu_status"] = gpu_status_;
  return j;
}

std::string TelemetryService::WindowText(const std::string& capture, const std::string& job, int64_t start_ns,
                                         int64_t end_ns) const {
  // The sample that follows the end of the window describes its last interval: wait for it
  // (one interval, a little more on a loaded node; never long, this runs on the capture watcher).
  const auto slack = std::chrono::milliseconds(500);
  store_.WaitForSample("proc", end_ns, 2 * options_.interval + slack);
  if (gpu_loop_) store_.WaitForSample("gpu", end_ns, 2 * options_.gpu_interval + slack);
  SidecarHeader h;
  h.host = options_.host;
  h.capture = capture;
  h.job = job;
  h.window_start_ns = start_ns;
  h.window_end_ns = end_ns;
  h.coverage_start_ns = store_.Stats().oldest_unix_ns;
  h.interval_ms = fmt::format("proc={} gpu={}", options_.interval.count(), options_.gpu_interval.count());
  h.gpu = gpu_status_;
  // Up to one interval past the end: that sample covers the window's last moments.
  const int64_t after_ns = std::chrono::nanoseconds(std::max(options_.interval, options_.gpu_interval)).count();
  return RenderSidecar(h, store_.Range(start_ns, end_ns + after_ns), store_.series());
}

}  // namespace rankscope::telemetry

// A thread that runs a set of monitors every `interval` and publishes their values to the
// store. The daemon runs two: "proc" (every /proc and /sys source, down to 10 ms) and "gpu"
// (NVML, at least 100 ms), so a slow driver call never delays the /proc sources, and neither
// ever runs on the threads that answer Kineto clients or HTTP requests.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "rankscope/telemetry/monitor.h"
#include "rankscope/telemetry/telemetry_store.h"

namespace rankscope::telemetry {

// Interns every logged value into the store's series table and collects the points of a pass.
class FrameLogger : public Logger {
 public:
  FrameLogger(SeriesTable* table, std::vector<Point>* points) : table_(table), points_(points) {}
  void Log(std::string_view metric, const Labels& labels, double value) override {
    const SeriesId id = table_->Intern(metric, labels);
    if (id != kNoSeries) points_->push_back({id, value});  // kNoSeries: the table is full
  }

 private:
  SeriesTable* table_;
  std::vector<Point>* points_;
};

class SamplerLoop {
 public:
  SamplerLoop(std::string name, std::chrono::nanoseconds interval, std::vector<std::unique_ptr<Monitor>> monitors,
              TelemetryStore* store);
  ~SamplerLoop();
  void Start();
  void Stop();
  // One pass (what the thread does each interval); tests call it directly.
  void Pass();
  const std::string& name() const { return name_; }

 private:
  void Run();

  const std::string name_;
  const std::chrono::nanoseconds interval_;
  std::vector<std::unique_ptr<Monitor>> monitors_;
  std::vector<bool> reported_failure_;
  TelemetryStore* store_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

int64_t UnixNowNs();
int64_t MonotonicNowNs();

}  // namespace rankscope::telemetry

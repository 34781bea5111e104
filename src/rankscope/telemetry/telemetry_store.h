// The telemetry of this node: the latest values of every series (for /metrics and `rankscope
// top`) and a bounded ring buffer of recent samples (saved beside a capture's traces).
//
// The ring keeps gauges only: counters (_total) are exposed on /metrics, and their rates are
// gauges of their own. It is bounded twice: by age (retention) and by memory (max_bytes), oldest
// frames first, so a 10 ms interval on a large node shortens the history instead of growing it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "rankscope/telemetry/series.h"

namespace rankscope::telemetry {

struct Point {
  SeriesId series = 0;
  double value = 0;
};

// The values one sampler produced at one time.
struct Frame {
  int64_t unix_ns = 0;
  std::vector<Point> points;
  size_t MemoryBytes() const { return sizeof(Frame) + points.capacity() * sizeof(Point); }
};

struct SeriesValue {
  std::shared_ptr<const SeriesKey> key;
  double value = 0;
  int64_t unix_ns = 0;
};

struct RingStats {
  size_t frames = 0;
  size_t bytes = 0;
  int64_t oldest_unix_ns = 0, newest_unix_ns = 0;
};

class TelemetryStore {
 public:
  struct Options {
    int64_t retention_ns = 600'000'000'000;  // 10 minutes
    size_t max_bytes = 64u << 20;
  };
  explicit TelemetryStore(Options options) : options_(options) {}

  SeriesTable& series() { return series_; }
  const SeriesTable& series() const { return series_; }

  // The points of one sampler pass. They replace that sampler's previous latest values (series
  // that are gone, e.g. an exited process, disappear from /metrics); gauges enter the ring.
  // Series with no sample left in the ring nor among the latest values are forgotten.
  void Publish(const std::string& sampler, int64_t unix_ns, const std::vector<Point>& points);

  std::vector<SeriesValue> Latest() const;
  // Gauge frames with unix_ns in [start_ns, end_ns], oldest first.
  std::vector<Frame> Range(int64_t start_ns, int64_t end_ns) const;
  RingStats Stats() const;

  // How long each sampler's last pass took, and its interval (for the daemon's own metrics).
  struct PassStats {
    double seconds = 0, interval_s = 0;
  };
  void RecordPass(const std::string& sampler, PassStats stats);
  std::map<std::string, PassStats> Passes() const;

  // Waits until `sampler` has published values taken at or after `unix_ns` (so that a window
  // ending now is covered by the sample that follows it), or `timeout` passes. True if covered.
  bool WaitForSample(const std::string& sampler, int64_t unix_ns, std::chrono::milliseconds timeout) const;

 private:
  void EvictLocked(int64_t now_ns);
  void ExpireSeriesLocked(int64_t now_ns);

  const Options options_;
  SeriesTable series_;
  mutable std::mutex mu_;
  mutable std::condition_variable published_;
  std::map<std::string, Frame> latest_;  // by sampler
  std::deque<Frame> ring_;
  size_t ring_bytes_ = 0;
  int64_t last_series_expiry_ns_ = 0;
  std::map<std::string, PassStats> passes_;
};

}  // namespace rankscope::telemetry

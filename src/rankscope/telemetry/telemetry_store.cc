#include "rankscope/telemetry/telemetry_store.h"

#include <algorithm>

namespace rankscope::telemetry {

namespace {

// How often series without samples are looked for: often enough to bound the table under
// label churn, rarely enough to cost nothing.
constexpr int64_t kSeriesExpiryEveryNs = 5'000'000'000;

}  // namespace

void TelemetryStore::Publish(const std::string& sampler, int64_t unix_ns, const std::vector<Point>& points) {
  Frame gauges;
  gauges.unix_ns = unix_ns;
  gauges.points.reserve(points.size());
  std::vector<SeriesId> ids;
  ids.reserve(points.size());
  for (const Point& p : points) {
    ids.push_back(p.series);
    if (!series_.IsCounter(p.series)) gauges.points.push_back(p);
  }
  gauges.points.shrink_to_fit();
  series_.MarkUsed(ids, unix_ns);
  std::lock_guard lock(mu_);
  Frame& latest = latest_[sampler];
  latest.unix_ns = unix_ns;
  latest.points = points;
  if (!gauges.points.empty()) {
    ring_bytes_ += gauges.MemoryBytes();
    ring_.push_back(std::move(gauges));
  }
  EvictLocked(unix_ns);
  ExpireSeriesLocked(unix_ns);
  published_.notify_all();
}

void TelemetryStore::ExpireSeriesLocked(int64_t now_ns) {
  if (now_ns - last_series_expiry_ns_ < kSeriesExpiryEveryNs) return;
  last_series_expiry_ns_ = now_ns;
  // Older than the oldest frame of the ring and not among the latest values: nothing refers
  // to the series any more.
  const int64_t cutoff = ring_.empty() ? now_ns - options_.retention_ns : ring_.front().unix_ns;
  std::unordered_set<SeriesId> keep;
  for (const auto& [name, frame] : latest_) {
    for (const Point& p : frame.points) keep.insert(p.series);
  }
  series_.ExpireUnused(cutoff, keep);
}

void TelemetryStore::EvictLocked(int64_t now_ns) {
  while (!ring_.empty() &&
         (ring_bytes_ > options_.max_bytes || now_ns - ring_.front().unix_ns > options_.retention_ns)) {
    ring_bytes_ -= ring_.front().MemoryBytes();
    ring_.pop_front();
  }
}

std::vector<SeriesValue> TelemetryStore::Latest() const {
  std::vector<SeriesValue> out;
  std::lock_guard lock(mu_);
  for (const auto& [sampler, frame] : latest_) {
    for (const Point& p : frame.points) {
      if (auto key = series_.Get(p.series)) out.push_back({std::move(key), p.value, frame.unix_ns});
    }
  }
  return out;
}

std::vector<Frame> TelemetryStore::Range(int64_t start_ns, int64_t end_ns) const {
  std::vector<Frame> out;
  std::lock_guard lock(mu_);
  // Frames of the two samplers interleave but each sampler's are in time order; the ring as a
  // whole is in publication order, which is time order up to one pass of skew: scan it all.
  for (const Frame& f : ring_) {
    if (f.unix_ns >= start_ns && f.unix_ns <= end_ns) out.push_back(f);
  }
  std::stable_sort(out.begin(), out.end(), [](const Frame& a, const Frame& b) { return a.unix_ns < b.unix_ns; });
  return out;
}

RingStats TelemetryStore::Stats() const {
  std::lock_guard lock(mu_);
  RingStats s;
  s.frames = ring_.size();
  s.bytes = ring_bytes_;
  if (!ring_.empty()) {
    s.oldest_unix_ns = ring_.front().unix_ns;
    s.newest_unix_ns = ring_.back().unix_ns;
  }
  return s;
}

void TelemetryStore::RecordPass(const std::string& sampler, PassStats stats) {
  std::lock_guard lock(mu_);
  passes_[sampler] = stats;
}

std::map<std::string, TelemetryStore::PassStats> TelemetryStore::Passes() const {
  std::lock_guard lock(mu_);
  return passes_;
}

bool TelemetryStore::WaitForSample(const std::string& sampler, int64_t unix_ns, std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mu_);
  return published_.wait_for(lock, timeout, [&] {
    auto it = latest_.find(sampler);
    return it != latest_.end() && it->second.unix_ns >= unix_ns;
  });
}

}  // namespace rankscope::telemetry

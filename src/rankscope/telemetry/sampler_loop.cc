#include "rankscope/telemetry/sampler_loop.h"

#include <time.h>

#include <fmt/format.h>

namespace rankscope::telemetry {

int64_t UnixNowNs() {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

int64_t MonotonicNowNs() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

SamplerLoop::SamplerLoop(std::string name, std::chrono::nanoseconds interval,
                         std::vector<std::unique_ptr<Monitor>> monitors, TelemetryStore* store)
    : name_(std::move(name)), interval_(interval), monitors_(std::move(monitors)),
      reported_failure_(monitors_.size(), false), store_(store) {}

SamplerLoop::~SamplerLoop() { Stop(); }

void SamplerLoop::Start() { thread_ = std::thread([this] { Run(); }); }

void SamplerLoop::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void SamplerLoop::Pass() {
  const int64_t mono = MonotonicNowNs();
  const int64_t unix_ns = UnixNowNs();
  std::vector<Point> points;
  FrameLogger logger(&store_->series(), &points);
  for (size_t i = 0; i < monitors_.size(); ++i) {
    Monitor& m = *monitors_[i];
    if (Status s = m.Sample(mono); !s.ok()) {
      // Once per monitor: a missing source (e.g. no /proc/diskstats in a container) would
      // otherwise fill the log at 100 lines a second.
      if (!reported_failure_[i]) fmt::print(stderr, "rankscoped: telemetry {}: {}\n", m.name(), s.message());
      reported_failure_[i] = true;
      continue;
    }
    m.Log(logger);
  }
  store_->Publish(name_, unix_ns, points);
  const double seconds = static_cast<double>(MonotonicNowNs() - mono) / 1e9;
  store_->RecordPass(name_, {seconds, std::chrono::duration<double>(interval_).count()});
}

void SamplerLoop::Run() {
  // A fixed schedule (not "sleep interval after each pass"), so samples stay evenly spaced;
  // after a stall, skip the missed passes instead of bursting to catch up.
  auto next = std::chrono::steady_clock::now();
  std::unique_lock lock(mu_);
  while (!stop_) {
    lock.unlock();
    Pass();
    lock.lock();
    next += interval_;
    const auto now = std::chrono::steady_clock::now();
    if (next < now) next = now + interval_;
    cv_.wait_until(lock, next, [this] { return stop_; });
  }
}

}  // namespace rankscope::telemetry

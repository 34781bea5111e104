#include "rankscope/report/progress.h"

#include <fmt/format.h>

#include <cstdio>

namespace rankscope {

ProgressLine::ProgressLine(std::string what, size_t total, bool enabled)
    : what_(std::move(what)), total_(total), start_(std::chrono::steady_clock::now()) {
  if (enabled) thread_ = std::thread([this] { Run(); });
}

ProgressLine::~ProgressLine() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
  if (drawn_) fmt::print(stderr, "\r\x1b[2K");
}

void ProgressLine::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!cv_.wait_for(lock, std::chrono::milliseconds(250), [this] { return stop_; })) {
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (secs < 1.0) continue;
    fmt::print(stderr, "\r\x1b[2Krankscope: reading and analysing {}: {}/{} done ({:.1f} s)", what_,
               done_.load(std::memory_order_relaxed), total_, secs);
    std::fflush(stderr);
    drawn_ = true;
  }
}

}  // namespace rankscope

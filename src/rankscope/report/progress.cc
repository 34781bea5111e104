#include "rankscope/report/progress.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace rankscope {

ProgressLine::ProgressLine(std::string what, size_t total, bool enabled)
    : what_(std::move(what)), total_(total), start_(std::chrono::steady_clock::now()) {
  if (const char* env = std::getenv("RANKSCOPE_PROGRESS_AFTER_MS")) {
    char* end = nullptr;
    const long ms = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && ms >= 0) show_after_ = std::chrono::milliseconds(ms);
  }
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
  const auto tick = std::min(std::chrono::milliseconds(250), std::max(show_after_, std::chrono::milliseconds(10)));
  while (!cv_.wait_for(lock, tick, [this] { return stop_; })) {
    const auto elapsed = std::chrono::steady_clock::now() - start_;
    if (elapsed < show_after_) continue;
    const double secs = std::chrono::duration<double>(elapsed).count();
    fmt::print(stderr, "\r\x1b[2Krankscope: reading and analysing {}: {}/{} done ({:.1f} s)", what_,
               done_.load(std::memory_order_relaxed), total_, secs);
    std::fflush(stderr);
    drawn_ = true;
  }
}

}  // namespace rankscope

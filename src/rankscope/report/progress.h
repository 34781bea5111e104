// A progress line on stderr for long runs: shown only on a terminal and only once the work has
// taken more than a second (RANKSCOPE_PROGRESS_AFTER_MS changes that), redrawn a few times per
// second by a small thread, erased at the end.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <string>
#include <memory>
#include <thread>

#include "rankscope/engine/analyze_job.h"

namespace rankscope {

class ProgressLine {
 public:
  // `what` names the items ("trace files"). Disabled unless `enabled` (stderr is a terminal).
  ProgressLine(std::string what, size_t total, bool enabled);
  ~ProgressLine();  // erases the line and stops the thread
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  void ItemDone() { done_.fetch_add(1, std::memory_order_relaxed); }

 private:
  void Run();

  std::string what_;
  size_t total_;
  std::atomic<size_t> done_{0};
  std::chrono::steady_clock::time_point start_;
  std::chrono::milliseconds show_after_{1000};
  bool drawn_ = false;
  bool stop_ = false;
  std::mutex mu_;
  std::condition_variable cv_;
  std::thread thread_;
};

// The engine's Progress (engine/analyze_job.h) drawn as a ProgressLine on stderr.
class TerminalProgress : public Progress {
 public:
  explicit TerminalProgress(bool enabled) : enabled_(enabled) {}
  void Start(size_t total_files) override {
    line_ = std::make_unique<ProgressLine>("trace files", total_files, enabled_);
  }
  void FileDone() override {
    if (line_) line_->ItemDone();
  }

 private:
  bool enabled_;
  std::unique_ptr<ProgressLine> line_;
};

}  // namespace rankscope

// A job's healthy baseline, kept by the daemon, and the comparison of the job's automatic (slow)
// captures with it (docs/compare.md, "A job's baseline").
//
//  - Keep: after a capture is saved, it becomes its job's baseline when the request asked for it
//    (`rankscope trace --baseline`), or, with --baseline-first-healthy, when it is the job's first
//    complete trace capture (every target done; not automatic, not a snapshot) and the job has
//    none. The baseline is <out>/<job>/baseline (compare/baseline_file.h), written and read
//    through directory descriptors (DirHandle: never following a link, the file the daemon's
//    own); its capture is never evicted by the disk budget.
//  - Compare: when an automatic capture of a job with a baseline is saved, a worker thread runs
//    `rankscope compare --baseline <out>/<job> <capture> --json -` as a child process (as the capture
//    directory's owner when the daemon runs as root; bounded in time and output) and saves its
//    report as baseline-comparison (JSON, rankscope.compare/1) in the capture directory, owned
//    by the capture's user like the traces beside it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "rankscope/base/status.h"
#include "rankscope/compare/baseline_file.h"
#include "rankscope/daemon/capture.h"
#include "rankscope/daemon/dir_handle.h"

namespace rankscope::daemon {

inline constexpr const char* kBaselineComparisonFile = "baseline-comparison";

class BaselineKeeper {
 public:
  struct Options {
    std::filesystem::path root;      // the daemon's output directory
    bool first_healthy = false;      // --baseline-first-healthy
    std::string compare_bin;         // `rankscope`; "" = no automatic comparison
    std::chrono::seconds compare_timeout{600};
    size_t max_report_bytes = 64u << 20;
    size_t max_queue = 8;            // automatic captures waiting for a comparison
  };

  explicit BaselineKeeper(Options options);
  ~BaselineKeeper();
  BaselineKeeper(const BaselineKeeper&) = delete;
  BaselineKeeper& operator=(const BaselineKeeper&) = delete;

  // Called after a capture's manifest is written (CaptureManager::Options::on_saved).
  void OnSaved(const Capture& c);
  // The captures ("<job>/<id>") that are some job's baseline: never evicted.
  std::set<std::string> Protected() const;

  // <root>/<job>/baseline := capture `id` (atomic; relative to the job directory).
  Status Keep(const std::string& job, const std::string& id, const std::string& reason);

 private:
  struct Work {
    std::string job, id;
    std::filesystem::path baseline_dir, capture_dir;
  };
  StatusOr<DirHandle> JobDir(const std::string& job) const;
  // The job's baseline file, if it has one (NotFound otherwise).
  StatusOr<compare::Baseline> ReadBaseline(const DirHandle& job_dir) const;
  void Loop();
  void Compare(const Work& w);
  // Runs `rankscope compare` on the work as `owner`; its report, or why there is none.
  StatusOr<std::string> RunCompare(const Work& w, const struct stat& owner) const;

  Options options_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Work> queue_;
  bool stop_ = false;
  std::thread worker_;
};

}  // namespace rankscope::daemon

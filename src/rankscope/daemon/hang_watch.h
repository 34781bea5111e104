// Automatic hang detection on this node (docs/hang.md): a thread looks at the registered ranks
// of every job once per interval; when a job counts as hung (hang_rule.h) it takes a snapshot
// of the job's ranks here — every thread's stack, taken from outside with py-spy where the
// collector does not answer, and every rank's Flight Recorder — by itself, analyses it
// (hang/hang_analysis.h), keeps the result (in memory and as hang.report in the snapshot's
// directory), and serves it: GET /v1/hangs, /v1/status, and the /metrics gauge
// rankscope_hang_detected. At most one automatic snapshot per job per cooldown. Every daemon of
// a multi-host job sees its own ranks stop and snapshots them.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "rankscope/daemon/capture_manager.h"
#include "rankscope/daemon/hang_rule.h"
#include "rankscope/daemon/output_dir.h"
#include "rankscope/daemon/process_registry.h"

namespace rankscope::daemon {

class HangWatch {
 public:
  struct Options {
    HangThresholds thresholds;
    std::chrono::milliseconds interval{1000};
    std::chrono::seconds cooldown{1800};
    int snapshot_timeout_s = 30;
    size_t max_jobs = 256;      // jobs watched at once (the registry bounds them too)
    size_t max_results = 64;    // hang results remembered (their hang.report files stay)
  };

  HangWatch(Options options, ProcessRegistry* registry, CaptureManager* captures);
  ~HangWatch();
  HangWatch(const HangWatch&) = delete;
  HangWatch& operator=(const HangWatch&) = delete;

  void Start();
  void Stop();

  nlohmann::json Json();      // GET /v1/hangs
  nlohmann::json Brief();     // for /v1/status: one line per hang
  std::string Metrics();      // Prometheus text: rankscope_hang_detected, rankscope_hang_snapshots_total

 private:
  struct JobState {
    std::map<int32_t, int64_t> steps;  // pid -> completed steps
    JobProgress progress;
    std::chrono::steady_clock::time_point last_auto{};
    bool fired = false;
    bool hung = false;                 // a hang was detected and the job has not progressed since
  };
  struct Result {
    std::string job, capture_id, dir, reason;
    int64_t detected_unix_ms = 0;
    std::string state = "snapshotting";  // -> "analysed" | "failed"
    std::string error;
    nlohmann::json report;               // the hang report (schema rankscope.hang/1)
  };

  void Loop();
  void Check(std::chrono::steady_clock::time_point now);
  void Fire(const std::string& job, const std::string& reason);
  void AnalysePending();
  static nlohmann::json ResultJson(const Result& r, bool full);

  Options options_;
  ProcessRegistry* registry_;
  CaptureManager* captures_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::map<std::string, JobState> jobs_;
  std::deque<Result> results_;
  uint64_t snapshots_total_ = 0;
  std::thread thread_;
};

}  // namespace rankscope::daemon

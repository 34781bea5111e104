// Runs trace and snapshot requests on this node: picks the target processes, hands each its
// part (pushed to collectors at once; given to Kineto clients at their next poll), watches for
// the files, and records for every process what it produced or why it did not.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "rankscope/daemon/capture.h"
#include "rankscope/daemon/target_selection.h"
#include "rankscope/daemon/output_dir.h"

namespace rankscope::daemon {

class CaptureManager {
 public:
  struct Options {
    std::string host;
    // Kineto clients do not report their iteration count: ranks are aligned by starting at the
    // next multiple of this (see docs/capture.md for its limits).
    int32_t default_kineto_roundup = 20;
    std::chrono::seconds auto_cooldown{600};
    // Where Kineto clients write before the daemon compresses the trace into the output
    // directory. Under /tmp because recent Kineto refuses on-demand paths elsewhere.
    std::filesystem::path kineto_staging;
    size_t max_remembered = 200;
    // Called on the watcher thread when a capture has finished, before its manifest is written
    // (the daemon saves the telemetry of the capture's window beside the traces). May block for
    // about a sampling interval.
    std::function<void(const Capture&)> on_finished;
    // Snapshot targets whose collector has not answered after `native_after` get their stack
    // taken from outside with py-spy (native_stacks.h, capture_native.cc); "" = never.
    std::string py_spy;
    std::chrono::seconds native_after{5};
    std::chrono::seconds native_timeout{20};
  };
  using CollectorSend = std::function<Status(const UnixAddress&, const nlohmann::json&)>;

  CaptureManager(Options options, ProcessRegistry* registry, OutputDir* out, CollectorSend send);
  ~CaptureManager();
  CaptureManager(const CaptureManager&) = delete;
  CaptureManager& operator=(const CaptureManager&) = delete;

  StatusOr<nlohmann::json> StartTrace(TraceSpec spec, const std::string& reason = "request");
  StatusOr<nlohmann::json> StartSnapshot(SnapshotSpec spec, const std::string& reason = "request");

  // Called by the Kineto endpoint on every poll; "" when nothing is pending for `pid`.
  std::string TakeKinetoConfig(int32_t pid, int32_t type);
  // A collector's progress report on a capture (started / done / failed).
  void OnCollectorReport(int32_t pid, const nlohmann::json& msg);
  // A collector saw its step time degrade: trace the whole job on this node, unless a
  // capture of that job is running or one was triggered within the cooldown.
  void OnAutoTrigger(const ProcessInfo& from, const nlohmann::json& msg);

  std::optional<nlohmann::json> Describe(const std::string& id);
  nlohmann::json List();
  size_t active();

 private:
  struct KinetoCheck;
  StatusOr<Capture> NewCapture(Capture::Kind kind, const std::string& id, const SelectedTargets& sel,
                               int64_t timeout_s);
  Capture* FindLocked(const std::string& id);
  StatusOr<nlohmann::json> Launch(Capture c, const std::vector<ProcessInfo>& procs,
                                  const std::vector<nlohmann::json>& messages);
  void RememberLocked(Capture c);
  void SetupKinetoTarget(Capture& c, CaptureTarget& t, const ProcessInfo& p);
  void DeliverToCollector(Capture& c, CaptureTarget& t, const ProcessInfo& p, const nlohmann::json& msg);
  void WatchLoop();
  void NativeStacksPass(std::unique_lock<std::mutex>& lock);  // capture_native.cc
  void CheckDeadlinesLocked(Clock::time_point now);
  void FinishCapturesLocked(std::vector<Capture>* finished);
  void WriteManifest(const Capture& c);

  Options options_;
  ProcessRegistry* registry_;
  OutputDir* out_;
  CollectorSend send_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Capture> captures_;
  std::map<std::string, Clock::time_point> last_auto_;  // by job
  bool stop_ = false;
  std::thread watcher_;
};

}  // namespace rankscope::daemon

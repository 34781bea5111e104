// Runs trace and snapshot requests on this node: picks the target processes, hands each its
// part (pushed to collectors at once; given to Kineto clients at their next poll), watches for
// the files, and records for every process what it produced or why it did not.
//
// Bounded: at most `max_active` captures run at once and `max_remembered` are kept in memory;
// a start step too far ahead of the job, or a start time too far away, is refused (a collector
// would otherwise wait for it, busy, for the rest of the job). A target whose process exits
// fails at once, with that reason.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string_view>
#include <thread>

#include "rankscope/daemon/capture.h"
#include "rankscope/daemon/kineto_staging.h"
#include "rankscope/daemon/output_dir.h"
#include "rankscope/daemon/target_selection.h"

namespace rankscope::daemon {

class CaptureManager {
 public:
  // Writes one file into a capture's directory (through its descriptor).
  using FileWriter = std::function<Status(const std::string& name, std::string_view content)>;

  struct Options {
    std::string host;
    // Kineto clients do not report their iteration count: ranks are aligned by starting at the
    // next multiple of this (see docs/capture.md for its limits).
    int32_t default_kineto_roundup = 20;
    std::chrono::seconds auto_cooldown{600};
    // Where Kineto clients write before the daemon compresses the trace into the output
    // directory; null: Kineto targets fail with that reason.
    const KinetoStaging* kineto_staging = nullptr;
    size_t max_remembered = 200;
    size_t max_active = 16;
    // How far ahead of the furthest rank an explicit start step may lie, and a start time.
    int64_t max_start_lead_steps = 10'000;
    int64_t max_start_lead_ms = 600'000;
    // Called on the watcher thread when a capture has finished, before its manifest is written
    // (the daemon saves the telemetry of the capture's window beside the traces). May block for
    // about a sampling interval.
    std::function<Status(const Capture&, const FileWriter&)> on_finished;
    // Called on the watcher thread once a capture's manifest is written (the daemon keeps it as
    // its job's baseline, or compares it with that baseline: baseline_keeper.h).
    std::function<void(const Capture&)> on_saved;
    // Captures ("<job>/<id>") the disk budget must never evict (jobs' baselines).
    std::function<std::set<std::string>()> protected_captures;
    // Snapshot targets whose collector has not answered after `native_after` get their stack
    // taken from outside with py-spy (native_stacks.h, capture_native.cc); "" = never.
    std::string py_spy;
    std::chrono::seconds native_after{5};
    std::chrono::seconds native_timeout{20};
    // DataLoader worker processes whose stacks are taken per rank that waits on its DataLoader.
    size_t max_dataloader_workers = 8;
  };
  using CollectorSend = std::function<Status(const UnixAddress&, const nlohmann::json&)>;

  CaptureManager(Options options, ProcessRegistry* registry, OutputDir* out, CollectorSend send);
  ~CaptureManager();
  CaptureManager(const CaptureManager&) = delete;
  CaptureManager& operator=(const CaptureManager&) = delete;

  // `who`: a local user may capture only their own processes (target_selection.h).
  StatusOr<nlohmann::json> StartTrace(TraceSpec spec, const Requester& who = {}, const std::string& reason = "request");
  StatusOr<nlohmann::json> StartSnapshot(SnapshotSpec spec, const Requester& who = {},
                                         const std::string& reason = "request");

  // Called by the Kineto endpoint on every poll; "" when nothing is pending for `pid`.
  std::string TakeKinetoConfig(int32_t pid, int32_t type);
  // A collector's progress report on a capture (started / done / failed); `pid` is the
  // kernel's, so a process can only report on its own part.
  void OnCollectorReport(int32_t pid, const nlohmann::json& msg);
  // A collector saw its step time degrade: trace the whole job on this node, unless a
  // capture of that job is running or one was triggered within the cooldown.
  void OnAutoTrigger(const ProcessInfo& from, const nlohmann::json& msg);

  std::optional<nlohmann::json> Describe(const std::string& id);

  // A capture's directory, opened through descriptors (never a path a user could redirect),
  // with the user its files belong to and the files it produced.
  struct OpenedCapture {
    DirHandle dir;
    FileOwner owner;
    Capture::Kind kind = Capture::Kind::kTrace;
    bool saved = false;
    std::vector<std::string> files;  // CaptureFileNames
  };
  StatusOr<OpenedCapture> OpenCapture(const std::string& id);
  // Writes a file into a capture's directory as its user (atomically: a temporary file, then
  // renamed); `replace` = false refuses a name that is already there.
  Status WriteCaptureFile(const std::string& id, const std::string& name, std::string_view content, bool replace);
  Status WriteCaptureFile(const std::string& id, const std::string& name, const std::function<Status(int fd)>& write,
                          bool replace);
  nlohmann::json List();
  size_t active();

 private:
  struct KinetoCheck;

  // Starting a capture.
  Status CheckCapacity();
  StatusOr<FileOwner> CommonOwner(const SelectedTargets& sel) const;
  Status PlanTrace(TraceSpec* spec, const SelectedTargets& sel, int64_t now_unix_ms) const;
  StatusOr<Capture> NewCapture(Capture::Kind kind, const std::string& id, const SelectedTargets& sel, int64_t timeout_s);
  CaptureTarget NewTarget(const ProcessInfo& p, size_t n_processes) const;
  nlohmann::json TraceMessage(const Capture& c, const CaptureTarget& t) const;
  void SetupKinetoTarget(const Capture& c, CaptureTarget& t, const ProcessInfo& p) const;
  StatusOr<nlohmann::json> Launch(Capture c, const std::vector<ProcessInfo>& procs,
                                  const std::vector<nlohmann::json>& messages);
  void DeliverToCollector(CaptureTarget& t, const ProcessInfo& p, const nlohmann::json& msg);
  Capture* FindLocked(const std::string& id);
  void MarkDoneLocked(const Capture& c, CaptureTarget& t, const std::string& file, const nlohmann::json& msg);
  void RememberLocked(Capture c);

  // The watcher thread: one pass per tick, one step per function.
  void WatchLoop();
  bool AnyActiveLocked() const;
  void CollectKinetoTraces(std::unique_lock<std::mutex>& lock);
  void CollectKinetoTrace(KinetoCheck& k) const;
  void NativeStacksPass(std::unique_lock<std::mutex>& lock);  // capture_native.cc
  void WorkerStacksPass(std::unique_lock<std::mutex>& lock);  // capture_workers.cc
  void TakeWorkerStacks(const std::string& capture_id, const std::string& job, int32_t pid, int32_t rank,
                        const FileOwner& owner, const std::string& stacks_file, std::vector<std::string>* worker_files,
                        std::string* note) const;
  void FailExitedTargetsLocked();
  void CheckDeadlinesLocked(Clock::time_point now);
  std::string TimeoutReason(const CaptureTarget& t) const;
  void CancelAtCollector(const Capture& c, const CaptureTarget& t);
  void DiscardStaging(const Capture& c, const CaptureTarget& t) const;
  void SaveFinished(std::unique_lock<std::mutex>& lock);
  void SaveBesideTraces(Capture& c) const;
  Status WriteManifest(const Capture& c) const;

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

// One trace or snapshot request on this node: which processes it went to, and what became of
// each (file produced, or why not). Reported by the HTTP API and saved as capture.manifest.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rankscope/daemon/capture_spec.h"
#include "rankscope/daemon/dir_handle.h"
#include "rankscope/daemon/output_dir.h"
#include "rankscope/daemon/process_registry.h"

namespace rankscope::daemon {

enum class TargetState : uint8_t {
  kWaiting,   // not delivered yet (a Kineto client gets it at its next poll)
  kRunning,   // delivered; the process is recording or writing
  kDone,      // the file exists in the capture directory
  kFailed,    // see `detail`
};
const char* TargetStateName(TargetState s);

struct CaptureTarget {
  int32_t pid = 0;
  uint64_t start_ticks = 0;        // with the pid, the process (to see that it exited)
  int32_t rank = -1;
  ClientKind via = kTrackerClient;
  TargetState state = TargetState::kWaiting;
  std::string detail;              // why it failed, or a note (e.g. late start)
  std::string file;                // absolute path once done
  std::string kineto_log_file;     // Kineto: the path we asked for
  std::string kineto_expected;     // Kineto: the path it will write (pid inserted)
  Clock::time_point delivered_at{};
  int64_t start_step = -1;         // planned first recorded step (collector targets)
  int64_t first_step = -1, last_step = -1;  // as recorded
  bool native_tried = false;       // snapshot: py-spy was run because the collector did not answer
  std::string extra_file;          // snapshot: the collector's flight-recorder dump, if any
  // Snapshot: the stacks file is in; the target is done once the daemon has looked whether its
  // main thread waits on its DataLoader, and if so taken its workers' stacks (capture_workers.cc).
  bool stacks_in = false;
  std::vector<std::string> worker_files;  // snapshot: rank<R>.worker<K>.stacks.txt

  bool finished() const { return state == TargetState::kDone || state == TargetState::kFailed; }
  // rank<R>, or pid<P> for a process without a rank; files are <base>.pt.trace.json.gz and
  // <base>.stacks.txt (never *.json for anything but traces: the reader takes those as traces).
  std::string BaseName() const;
  std::string TraceFileName() const { return BaseName() + ".pt.trace.json.gz"; }
  std::string StacksFileName() const { return BaseName() + ".stacks.txt"; }
};

struct Capture {
  enum class Kind : uint8_t { kTrace, kSnapshot };
  std::string id;
  Kind kind = Kind::kTrace;
  std::string job;
  std::string reason = "request";   // "request" or why the auto-trigger fired
  std::filesystem::path dir;
  FileOwner owner;                  // the user (kernel's uid/gid) of every target process
  TraceSpec trace;
  SnapshotSpec snapshot;
  Clock::time_point created{}, deadline{};
  int64_t created_unix_ms = 0;
  std::vector<CaptureTarget> targets;
  std::vector<std::string> notes;   // processes left out, and why
  bool manifest_written = false;   // claimed by the watcher, which then saves telemetry + manifest
  bool saved = false;              // telemetry sidecar and capture.manifest are on disk
  std::vector<std::string> save_errors;  // files beside the traces that could not be written
  Eviction eviction;               // what the disk budget removed once this capture was saved

  std::string Key() const { return job + "/" + id; }  // relative to the output directory

  bool finished() const;
  CaptureTarget* Find(int32_t pid);
};

// The names of the files a capture produced in its directory, capture.manifest included once
// saved: what GET /v1/captures/<id>/files/<name> serves, and what other daemons gather.
std::vector<std::string> CaptureFileNames(const Capture& c);

nlohmann::json ToJson(const Capture& c, const std::string& host);

}  // namespace rankscope::daemon

// The map on the node (docs/scale.md): once a trace capture is saved, rankscoped analyses each
// of its traces to the rank's summary and writes it beside the trace as <trace>.rsum, as the
// trace's user. `rankscope analyze` then reads the summaries instead of the traces, and
// `rankscope trace --analyze` gathers them over HTTP (GET /v1/captures/<id>/summaries) when the
// traces are on other machines: raw traces stay on the node until someone asks for them.
//
// Bounded so that it never competes with training for more than that: `threads` worker threads
// (rankscoped --summary-threads, default 1; 0 = none), each at nice 19, one trace at a time.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "rankscope/daemon/capture_manager.h"

namespace rankscope::daemon {

class SummaryWorker {
 public:
  // Writes a file into a capture's directory as its user (CaptureManager::WriteCaptureFile).
  using Writer = std::function<Status(const std::string& capture_id, const std::string& name, std::string_view content)>;
  SummaryWorker(unsigned threads, Writer write);
  ~SummaryWorker();
  SummaryWorker(const SummaryWorker&) = delete;
  SummaryWorker& operator=(const SummaryWorker&) = delete;

  // Queues the traces a saved capture produced (CaptureManager::Options::on_saved).
  void OnSaved(const Capture& c);

  // {"pending": n, "failed": [{"file", "error"}]} for a capture (zeros when never queued).
  nlohmann::json Progress(const std::string& capture_id) const;

 private:
  struct Job {
    std::string capture_id;
    std::string trace_path;  // absolute
    std::string trace_name;  // in the capture's directory
  };
  struct CaptureProgress {
    size_t pending = 0;
    std::vector<std::pair<std::string, std::string>> failed;  // file, error
  };
  void Run();
  void Summarize(const Job& job);

  Writer write_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> queue_;
  std::map<std::string, CaptureProgress> progress_;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace rankscope::daemon

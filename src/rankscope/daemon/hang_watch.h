// Automatic hang detection (docs/hang.md): a thread looks at the registered ranks of every job
// once per interval; when a job counts as hung (hang_rule.h) it takes a snapshot of the job by
// itself — every thread's stack (py-spy from outside where the collector does not answer, and
// the DataLoader workers of a rank that waits on them) and every rank's Flight Recorder — on
// this host and, with --peers, on every other host of the job (their daemons snapshot their
// ranks under the same id, and their files are gathered here over their HTTP API), analyses
// all ranks together (hang/hang_analysis.h), keeps the result (in memory and as hang.report in
// the snapshot's directory), and serves it: GET /v1/hangs, /v1/status, and the /metrics gauge
// rankscope_hang_detected. At most one automatic snapshot per job per cooldown.
//
// Which daemon gathers: the one hosting rank 0 fires at once; the others wait `peer_grace`
// more, and do not fire when a peer's snapshot request for the job came meanwhile (then they
// record that they took their part for a peer). If the daemon of rank 0 is down, another one
// gathers after the grace.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "rankscope/daemon/capture_manager.h"
#include "rankscope/daemon/hang_rule.h"
#include "rankscope/daemon/output_dir.h"
#include "rankscope/daemon/peers.h"
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
    // The other hosts' daemons (--peers), the token they are asked with, and how long a daemon
    // without rank 0 waits for the one with it to gather.
    std::vector<Peer> peers;
    std::string token;
    std::chrono::seconds peer_grace{30};
    std::chrono::seconds peer_timeout{10};   // per HTTP request to a peer
    std::chrono::seconds gather_after{60};   // beyond the snapshot timeout: peers that did not finish are left out
  };

  HangWatch(Options options, ProcessRegistry* registry, CaptureManager* captures);
  ~HangWatch();
  HangWatch(const HangWatch&) = delete;
  HangWatch& operator=(const HangWatch&) = delete;

  void Start();
  void Stop();

  // A peer's daemon detected a hang of `job` and this daemon snapshotted its ranks for it.
  void OnPeerSnapshot(const std::string& job, const std::string& capture_id, const std::string& dir,
                      const std::string& reason);

  nlohmann::json Json();      // GET /v1/hangs
  nlohmann::json Brief();     // for /v1/status: one line per hang
  std::string Metrics();      // Prometheus text: rankscope_hang_detected, rankscope_hang_snapshots_total

 private:
  using SteadyClock = std::chrono::steady_clock;
  struct JobState {
    std::map<int32_t, int64_t> steps;  // pid -> completed steps
    JobProgress progress;
    SteadyClock::time_point last_auto{};
    SteadyClock::time_point hung_since{};  // when the rule first said hung (the grace runs from it)
    bool fired = false;
    bool hung = false;                 // a hang was detected and the job has not progressed since
  };
  // A peer's part of a snapshot this daemon gathers.
  struct PeerPart {
    std::string peer;
    std::string state = "requested";   // -> "gathered" | "no ranks" | "failed"
    std::string error;
    std::vector<int64_t> ranks;
    size_t files = 0;
  };
  struct Result {
    std::string job, capture_id, dir, reason;
    int64_t detected_unix_ms = 0;
    SteadyClock::time_point started{};
    // "snapshotting" -> "analysed" | "failed"; "taken for a peer" (its daemon gathers and analyses)
    std::string state = "snapshotting";
    std::string error;
    std::vector<PeerPart> peers;
    nlohmann::json report;               // the hang report (schema rankscope.hang/1)
  };

  void Loop();
  void Check(SteadyClock::time_point now);
  void Fire(const std::string& job, const std::string& reason, uid_t uid);
  void AnalysePending();
  // hang_peers.cc: asking the peers, and gathering their files once their part is saved.
  std::vector<PeerPart> AskPeers(const SnapshotSpec& spec);
  bool GatherFromPeers(const std::string& capture_id, SteadyClock::time_point started, std::vector<PeerPart>* peers);
  void Analyse(const std::string& capture_id, const std::string& dir);
  static nlohmann::json ResultJson(const Result& r, bool full);

  Options options_;
  ProcessRegistry* registry_;
  CaptureManager* captures_;
  PeerClient peer_client_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::map<std::string, JobState> jobs_;
  std::deque<Result> results_;
  uint64_t snapshots_total_ = 0;
  std::thread thread_;
};

}  // namespace rankscope::daemon

#include "rankscope/daemon/hang_watch.h"

#include <algorithm>

#include "rankscope/base/json_text.h"
#include "rankscope/base/utf8.h"
#include "rankscope/hang/hang_analysis.h"
#include "rankscope/report/hang_report.h"

namespace rankscope::daemon {
namespace {

int64_t UnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace

HangWatch::HangWatch(Options options, ProcessRegistry* registry, CaptureManager* captures)
    : options_(std::move(options)), registry_(registry), captures_(captures),
      peer_client_(options_.token, options_.peer_timeout) {}

HangWatch::~HangWatch() { Stop(); }

void HangWatch::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void HangWatch::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void HangWatch::Loop() {
  std::unique_lock lock(mu_);
  while (!stop_) {
    cv_.wait_for(lock, options_.interval);
    if (stop_) break;
    lock.unlock();
    Check(SteadyClock::now());
    AnalysePending();
    lock.lock();
  }
}

void HangWatch::Check(SteadyClock::time_point now) {
  std::map<std::string, std::vector<ProcessInfo>> by_job;
  for (auto& p : registry_->List()) {
    if (p.is_rank() && (p.kinds & kTrackerClient)) by_job[p.identity.job].push_back(std::move(p));
  }
  struct ToFire {
    std::string job, reason;
    uid_t uid;  // the job's user (job names are per user: process_registry.h)
  };
  std::vector<ToFire> fire;
  {
    std::lock_guard lock(mu_);
    for (auto it = jobs_.begin(); it != jobs_.end();) {  // jobs that are gone
      it = by_job.count(it->first) ? std::next(it) : jobs_.erase(it);
    }
    for (const auto& [job, procs] : by_job) {
      if (!jobs_.count(job) && jobs_.size() >= options_.max_jobs) continue;
      JobState& s = jobs_[job];
      const bool fresh = s.steps.empty();
      std::vector<double> step_ms;
      JobProgress& p = s.progress;
      p.max_fr_pending_s = -1;
      for (const auto& proc : procs) {
        auto [it, inserted] = s.steps.try_emplace(proc.pid, proc.step);
        if (!inserted && proc.step > it->second) {
          it->second = proc.step;
          p.last_progress = now;
          s.hung = false;  // it moves again
        }
        p.step = std::max(p.step, proc.step);
        if (proc.step_ms > 0) step_ms.push_back(proc.step_ms);
        if (proc.fr_pending_s > p.max_fr_pending_s) {
          p.max_fr_pending_s = proc.fr_pending_s;
          p.fr_pending_rank = proc.identity.rank;
        }
      }
      if (fresh) p.last_progress = now;
      p.median_step_ms = Median(step_ms);
      if (s.hung) continue;
      auto reason = HangReason(p, now, options_.thresholds);
      if (!reason) {
        s.hung_since = {};
        continue;
      }
      if (s.fired && now - s.last_auto < options_.cooldown) continue;  // one per job per cooldown
      if (s.hung_since == SteadyClock::time_point{}) s.hung_since = now;
      // With peers, the daemon of rank 0 gathers: the others give it time to ask them.
      const bool has_rank0 = std::any_of(procs.begin(), procs.end(), [](const ProcessInfo& q) { return q.identity.rank == 0; });
      if (!options_.peers.empty() && !has_rank0 && now - s.hung_since < options_.peer_grace) continue;
      s.fired = true;
      s.hung = true;
      s.last_auto = now;
      fire.push_back({job, *reason, procs.front().identity.uid});
    }
  }
  for (const ToFire& f : fire) Fire(f.job, f.reason, f.uid);
}

void HangWatch::Fire(const std::string& job, const std::string& reason, uid_t uid) {
  SnapshotSpec spec;
  spec.snapshot_id = "hang-" + NewCaptureId();
  spec.selection.job = job;
  spec.timeout_s = options_.snapshot_timeout_s;
  Result r;
  r.job = job;
  r.capture_id = spec.snapshot_id;
  r.reason = reason;
  r.detected_unix_ms = UnixMs();
  r.started = SteadyClock::now();
  auto started = captures_->StartSnapshot(spec, Requester{}, "hang detected: " + reason);
  if (!started.ok()) {
    r.state = "failed";
    r.error = std::string(started.status().message());
    fmt::print(stderr, "rankscoped: hang of job {} detected ({}), but the snapshot failed: {}\n", job, reason, r.error);
  } else {
    r.dir = started->value("dir", "");
    fmt::print(stderr, "rankscoped: hang of job {} detected ({}) -> snapshot {}\n", job, reason, r.capture_id);
    spec.hang_reason = ClipUtf8(reason, kMaxHangReason);
    spec.as_uid = uid;  // the peers take only this user's ranks of the job
    r.peers = AskPeers(spec);  // the other hosts snapshot their ranks under the same id
  }
  std::lock_guard lock(mu_);
  ++snapshots_total_;
  results_.push_back(std::move(r));
  while (results_.size() > options_.max_results) results_.pop_front();
}

void HangWatch::OnPeerSnapshot(const std::string& job, const std::string& capture_id, const std::string& dir,
                               const std::string& reason) {
  const auto now = SteadyClock::now();
  std::lock_guard lock(mu_);
  if (jobs_.count(job) || jobs_.size() < options_.max_jobs) {
    JobState& s = jobs_[job];
    s.fired = true;  // its daemon gathers and analyses: this one does not take a snapshot of its own
    s.hung = true;
    s.last_auto = now;
  }
  Result r;
  r.job = job;
  r.capture_id = capture_id;
  r.dir = dir;
  r.reason = "detected by a peer's daemon: " + reason;
  r.detected_unix_ms = UnixMs();
  r.started = now;
  r.state = "taken for a peer";
  ++snapshots_total_;
  results_.push_back(std::move(r));
  while (results_.size() > options_.max_results) results_.pop_front();
  fmt::print(stderr, "rankscoped: snapshot {} of job {} taken for a peer's daemon ({})\n", capture_id, job, reason);
}

void HangWatch::AnalysePending() {
  struct Pending {
    std::string id, dir;
    SteadyClock::time_point started;
    std::vector<PeerPart> peers;
  };
  std::vector<Pending> ready;
  {
    std::lock_guard lock(mu_);
    for (const Result& r : results_) {
      if (r.state == "snapshotting") ready.push_back({r.capture_id, r.dir, r.started, r.peers});
    }
  }
  for (Pending& p : ready) {
    auto c = captures_->Describe(p.id);
    if (c && !c->value("saved", false)) continue;  // still taking stacks here
    const bool all_in = c && GatherFromPeers(p.id, p.started, &p.peers);
    {
      std::lock_guard lock(mu_);
      for (Result& r : results_) {
        if (r.capture_id != p.id) continue;
        r.peers = p.peers;
        if (!c) {
          r.state = "failed";
          r.error = "the snapshot is no longer known to the daemon";
        }
      }
    }
    if (all_in) Analyse(p.id, p.dir);  // else a peer is still taking its part
  }
}

// Every host's files are in the capture directory now: read them through its descriptor, only
// files of the capture's user, analyse, keep the report beside them.
void HangWatch::Analyse(const std::string& capture_id, const std::string& dir) {
  std::string state = "failed", error;
  nlohmann::json report;
  auto capture = captures_->OpenCapture(capture_id);
  if (!capture.ok()) {
    error = capture.status().message();
  } else if (auto files = hang::ReadSnapshotDirectory(capture->dir.fd(), dir, {.job = "", .owner = capture->owner.uid});
             !files.ok()) {
    error = files.status().message();
  } else {
    report = HangReportJson(hang::AnalyzeSnapshot(std::move(*files), hang::HangOptions{}));
    state = "analysed";
    if (Status s = captures_->WriteCaptureFile(capture_id, "hang.report", DumpJson(report), /*replace=*/true); !s.ok()) {
      fmt::print(stderr, "rankscoped: {}: hang.report not written: {}\n", capture_id, s.message());
    }
  }
  std::lock_guard lock(mu_);
  for (Result& r : results_) {
    if (r.capture_id != capture_id) continue;
    r.state = state;
    r.error = error;
    r.report = std::move(report);
  }
}

nlohmann::json HangWatch::ResultJson(const Result& r, bool full) {
  nlohmann::json j = {{"job", r.job}, {"capture", r.capture_id}, {"dir", r.dir}, {"reason", r.reason},
                      {"detected_unix_ms", r.detected_unix_ms}, {"state", r.state}};
  if (!r.error.empty()) j["error"] = r.error;
  if (!r.peers.empty()) {
    nlohmann::json peers = nlohmann::json::array();
    for (const PeerPart& p : r.peers) {
      nlohmann::json pj = {{"peer", p.peer}, {"state", p.state}, {"ranks", p.ranks}, {"files", p.files}};
      if (!p.error.empty()) pj["error"] = p.error;
      peers.push_back(std::move(pj));
    }
    j["peers"] = std::move(peers);
  }
  if (r.report.is_object()) {
    nlohmann::json findings = nlohmann::json::array();
    for (const auto& f : r.report.value("findings", nlohmann::json::array())) {
      findings.push_back({{"kind", f.value("kind", "")}, {"ranks", f.value("ranks", nlohmann::json::array())},
                          {"sentence", f.value("sentence", "")}});
    }
    j["findings"] = findings;
    if (full) j["report"] = r.report;
  }
  return j;
}

nlohmann::json HangWatch::Json() {
  std::lock_guard lock(mu_);
  nlohmann::json hangs = nlohmann::json::array();
  for (const Result& r : results_) {
    nlohmann::json j = ResultJson(r, true);
    auto it = jobs_.find(r.job);
    j["still_hung"] = it != jobs_.end() && it->second.hung;
    hangs.push_back(std::move(j));
  }
  return {{"thresholds",
           {{"min_stall_s", options_.thresholds.min_stall_s}, {"step_factor", options_.thresholds.step_factor},
            {"fr_pending_s", options_.thresholds.fr_pending_s}, {"cooldown_s", options_.cooldown.count()}}},
          {"snapshots_total", snapshots_total_},
          {"hangs", hangs}};
}

nlohmann::json HangWatch::Brief() {
  std::lock_guard lock(mu_);
  nlohmann::json out = nlohmann::json::array();
  for (const Result& r : results_) {
    nlohmann::json j = ResultJson(r, false);
    auto it = jobs_.find(r.job);
    j["still_hung"] = it != jobs_.end() && it->second.hung;
    out.push_back(std::move(j));
  }
  return out;
}

std::string HangWatch::Metrics() {
  std::lock_guard lock(mu_);
  std::string out =
      "# HELP rankscope_hang_detected 1 while a job of this node is hung: detected by the daemon, no step since\n"
      "# TYPE rankscope_hang_detected gauge\n";
  for (const auto& [job, s] : jobs_) out += fmt::format("rankscope_hang_detected{{job=\"{}\"}} {}\n", job, s.hung ? 1 : 0);
  out += "# HELP rankscope_hang_snapshots_total Automatic hang snapshots taken by this daemon\n"
         "# TYPE rankscope_hang_snapshots_total counter\n";
  out += fmt::format("rankscope_hang_snapshots_total {}\n", snapshots_total_);
  return out;
}

}  // namespace rankscope::daemon

#include "rankscope/daemon/capture_manager.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "rankscope/daemon/gzip_file.h"
#include "rankscope/daemon/kineto_config.h"
#include "rankscope/daemon/kineto_wire.h"
#include "rankscope/daemon/step_alignment.h"
#include "rankscope/daemon/target_selection.h"

namespace fs = std::filesystem;

namespace rankscope::daemon {
namespace {

int64_t UnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch()).count();
}

// A file Kineto has finished: present, and no longer being written (it writes <path>.tmp and
// renames it when complete).
bool Complete(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool CompleteSince(const std::string& path, int64_t since_unix_ms) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  const int64_t mtime_ms = int64_t{st.st_mtim.tv_sec} * 1000 + st.st_mtim.tv_nsec / 1'000'000;
  return mtime_ms >= since_unix_ms;
}

}  // namespace

// One Kineto target to look at outside the lock.
struct CaptureManager::KinetoCheck {
  std::string capture_id;
  int32_t pid = 0;
  std::string expected, fallback, destination;
  int64_t delivered_unix_ms = 0;
  // results
  bool done = false;
  std::string detail, error;
};

CaptureManager::CaptureManager(Options options, ProcessRegistry* registry, OutputDir* out, CollectorSend send)
    : options_(std::move(options)), registry_(registry), out_(out), send_(std::move(send)) {
  watcher_ = std::thread([this] { WatchLoop(); });
}

CaptureManager::~CaptureManager() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  watcher_.join();
}

Capture* CaptureManager::FindLocked(const std::string& id) {
  for (auto& c : captures_) {
    if (c.id == id) return &c;
  }
  return nullptr;
}

void CaptureManager::RememberLocked(Capture c) {
  captures_.push_back(std::move(c));
  // Forget the oldest finished captures (their manifests stay on disk).
  while (captures_.size() > options_.max_remembered && captures_.front().finished()) captures_.pop_front();
}

void CaptureManager::DeliverToCollector(Capture& c, CaptureTarget& t, const ProcessInfo& p, const nlohmann::json& msg) {
  if (Status s = send_(p.collector_address, msg); !s.ok()) {
    t.state = TargetState::kFailed;
    t.detail = fmt::format("could not reach the collector of pid {}: {}", p.pid, s.message());
    return;
  }
  t.state = TargetState::kRunning;
  t.delivered_at = Clock::now();
}

void CaptureManager::SetupKinetoTarget(Capture& c, CaptureTarget& t, const ProcessInfo& p) {
  // The process's own KINETO_ONDEMAND_TRACE_DIR is the one place recent Kineto accepts besides
  // /tmp; otherwise stage under /tmp. The daemon moves the result into the output directory.
  fs::path staging = p.identity.ondemand_trace_dir.empty()
                         ? options_.kineto_staging / c.id
                         : fs::path(p.identity.ondemand_trace_dir) / fmt::format("rankscope-{}", c.id);
  std::error_code ec;
  fs::create_directories(staging, ec);
  if (ec) {
    t.state = TargetState::kFailed;
    t.detail = fmt::format("cannot create the Kineto staging directory {}: {}", staging.string(), ec.message());
    return;
  }
  ::chmod(staging.c_str(), 0777);  // the trainer may run as another user; files are renamed away
  t.kineto_log_file = (staging / (t.BaseName() + ".json")).string();
  t.kineto_expected = KinetoOutputPath(t.kineto_log_file, p.pid);
  t.state = TargetState::kWaiting;
  if (!(p.kineto_type & kineto::kActivityProfiler)) {
    t.detail = "its Kineto profiler is busy; the configuration waits for its next idle poll";
  }
}

// A capture of `kind` for the selected processes; its id must be new on this host.
StatusOr<Capture> CaptureManager::NewCapture(Capture::Kind kind, const std::string& id, const SelectedTargets& sel,
                                             int64_t timeout_s) {
  Capture c;
  c.id = id;
  c.kind = kind;
  c.job = sel.job;
  c.created = Clock::now();
  c.created_unix_ms = UnixMs();
  c.deadline = c.created + std::chrono::seconds(timeout_s);
  c.notes = sel.notes;
  std::lock_guard lock(mu_);
  if (FindLocked(c.id)) return FailedPrecondition("a capture with id {} already exists on this host", c.id);
  return c;
}

StatusOr<nlohmann::json> CaptureManager::StartTrace(TraceSpec spec, const std::string& reason) {
  RANKSCOPE_ASSIGN_OR_RETURN(SelectedTargets sel, SelectTargets(registry_->List(), spec.selection, false));
  RANKSCOPE_ASSIGN_OR_RETURN(Capture c, NewCapture(Capture::Kind::kTrace, spec.trace_id, sel, spec.timeout_s));
  c.reason = reason;
  uid_t owner = sel.processes.front().identity.uid;
  RANKSCOPE_ASSIGN_OR_RETURN(c.dir, out_->MakeCaptureDir(c.job, c.id, owner));

  // Collectors know their step: one absolute start step for all of them.
  std::vector<ProcessInfo> collectors;
  for (const auto& p : sel.processes) {
    if (p.kinds & kTrackerClient) collectors.push_back(p);
  }
  if (spec.steps > 0 && spec.start_step < 0 && !collectors.empty()) {
    spec.start_step = AlignedStartStep(collectors, Clock::now(), spec.roundup);
  }
  if (spec.steps > 0 && spec.roundup <= 0) spec.roundup = options_.default_kineto_roundup;
  if (spec.duration_ms > 0 && spec.start_unix_ms <= 0) spec.start_unix_ms = c.created_unix_ms + 6000;
  c.trace = spec;

  std::vector<nlohmann::json> messages;  // per target; null for Kineto targets
  for (const auto& p : sel.processes) {
    CaptureTarget t;
    t.pid = p.pid;
    t.rank = p.identity.rank >= 0 ? p.identity.rank : (sel.processes.size() == 1 ? 0 : -1);
    if (p.kinds & kTrackerClient) {
      t.via = kTrackerClient;
      if (spec.steps > 0) t.start_step = spec.start_step;
      messages.push_back({{"op", "trace"}, {"id", c.id}, {"dir", c.dir.string()},
                          {"file", t.BaseName() + ".pt.trace.json.gz"}, {"steps", spec.steps},
                          {"start_step", spec.start_step}, {"duration_ms", spec.duration_ms},
                          {"start_unix_ms", spec.duration_ms > 0 ? spec.start_unix_ms : 0},
                          {"record_shapes", spec.record_shapes}, {"with_stack", spec.with_stack},
                          {"profile_memory", spec.profile_memory}});
    } else {
      t.via = kKinetoClient;
      SetupKinetoTarget(c, t, p);
      messages.emplace_back();
    }
    c.targets.push_back(std::move(t));
  }
  return Launch(std::move(c), sel.processes, messages);
}

StatusOr<nlohmann::json> CaptureManager::Launch(Capture c, const std::vector<ProcessInfo>& procs,
                                                const std::vector<nlohmann::json>& messages) {
  nlohmann::json result;
  {
    // Remembered before anything is sent, so that a collector's quick report finds it; sends
    // never block (MSG_DONTWAIT), so holding the lock here is cheap.
    std::lock_guard lock(mu_);
    if (FindLocked(c.id)) return FailedPrecondition("a capture with id {} already exists on this host", c.id);
    RememberLocked(std::move(c));
    Capture& rc = captures_.back();
    for (size_t i = 0; i < rc.targets.size(); ++i) {
      if (!messages[i].is_null()) DeliverToCollector(rc, rc.targets[i], procs[i], messages[i]);
    }
    result = ToJson(rc, options_.host);
  }
  cv_.notify_all();
  return result;
}

StatusOr<nlohmann::json> CaptureManager::StartSnapshot(SnapshotSpec spec, const std::string& reason) {
  RANKSCOPE_ASSIGN_OR_RETURN(SelectedTargets sel, SelectTargets(registry_->List(), spec.selection, true));
  RANKSCOPE_ASSIGN_OR_RETURN(Capture c, NewCapture(Capture::Kind::kSnapshot, spec.snapshot_id, sel, spec.timeout_s));
  c.snapshot = spec;
  c.reason = reason;
  RANKSCOPE_ASSIGN_OR_RETURN(c.dir, out_->MakeCaptureDir(c.job, c.id, sel.processes.front().identity.uid));
  std::vector<nlohmann::json> messages;
  for (const auto& p : sel.processes) {
    CaptureTarget t;
    t.pid = p.pid;
    t.rank = p.identity.rank >= 0 ? p.identity.rank : (sel.processes.size() == 1 ? 0 : -1);
    t.via = kTrackerClient;
    messages.push_back({{"op", "snapshot"}, {"id", c.id}, {"dir", c.dir.string()},
                        {"file", t.BaseName() + ".stacks.txt"}});
    c.targets.push_back(std::move(t));
  }
  return Launch(std::move(c), sel.processes, messages);
}

std::string CaptureManager::TakeKinetoConfig(int32_t pid, int32_t type) {
  if (!(type & kineto::kActivityProfiler)) return "";  // its profiler is busy: keep it pending
  std::lock_guard lock(mu_);
  for (auto& c : captures_) {
    if (c.kind != Capture::Kind::kTrace) continue;
    CaptureTarget* t = c.Find(pid);
    if (!t || t->via != kKinetoClient || t->state != TargetState::kWaiting) continue;
    t->state = TargetState::kRunning;
    t->detail.clear();
    t->delivered_at = Clock::now();
    return BuildKinetoConfig(c.trace, t->kineto_log_file, UnixMs());  // handed out once
  }
  return "";
}

void CaptureManager::OnCollectorReport(int32_t pid, const nlohmann::json& msg) {
  const std::string id = msg.value("id", "");
  const std::string state = msg.value("state", "");
  {
    std::lock_guard lock(mu_);
    Capture* c = FindLocked(id);
    CaptureTarget* t = c ? c->Find(pid) : nullptr;
    if (!t || t->finished()) return;
    t->first_step = msg.value("first_step", t->first_step);
    t->last_step = msg.value("last_step", t->last_step);
    if (state == "started") {
      t->state = TargetState::kRunning;
      if (t->start_step >= 0 && t->first_step > t->start_step) {
        t->detail = fmt::format("started late, at step {} instead of {}", t->first_step, t->start_step);
      }
    } else if (state == "done") {
      const fs::path file = c->dir / msg.value("file", "");
      std::error_code ec;
      if (file.parent_path() != c->dir || !fs::is_regular_file(file, ec)) {
        t->state = TargetState::kFailed;
        t->detail = fmt::format("the collector reported {} but it is not a file in {}", file.string(), c->dir.string());
      } else {
        t->state = TargetState::kDone;
        t->file = file.string();
        const fs::path fr = c->dir / msg.value("fr_file", "");  // the flight recorder (docs/hang.md)
        if (msg.contains("fr_file") && fr.parent_path() == c->dir && fs::is_regular_file(fr, ec)) {
          t->extra_file = fr.string();
        }
      }
    } else if (state == "failed") {
      t->state = TargetState::kFailed;
      t->detail = "the collector failed: " + msg.value("error", std::string("no reason given"));
    }
  }
  cv_.notify_all();
}

void CaptureManager::OnAutoTrigger(const ProcessInfo& from, const nlohmann::json& msg) {
  const std::string job = from.identity.job;
  const auto now = Clock::now();
  {
    std::lock_guard lock(mu_);
    auto it = last_auto_.find(job);
    if (it != last_auto_.end() && now - it->second < options_.auto_cooldown) return;
    for (const auto& c : captures_) {
      if (c.job == job && !c.finished()) return;  // something is already recording this job
    }
    last_auto_[job] = now;
  }
  TraceSpec spec;
  spec.trace_id = fmt::format("auto-{}", NewCaptureId());
  spec.selection.job = job;
  spec.steps = std::clamp(msg.value("steps", 3), 1, 50);
  spec.timeout_s = 600;
  const std::string reason = fmt::format("auto-trigger from rank {}: {}", from.identity.rank,
                                         msg.value("reason", std::string("step time degraded")));
  auto r = StartTrace(spec, reason);
  if (!r.ok()) fmt::print(stderr, "rankscoped: auto-trigger for job {} failed: {}\n", job, r.status().message());
  else fmt::print(stderr, "rankscoped: {} -> trace {}\n", reason, spec.trace_id);
}

std::optional<nlohmann::json> CaptureManager::Describe(const std::string& id) {
  std::lock_guard lock(mu_);
  Capture* c = FindLocked(id);
  if (!c) return std::nullopt;
  return ToJson(*c, options_.host);
}

nlohmann::json CaptureManager::List() {
  std::lock_guard lock(mu_);
  nlohmann::json out = nlohmann::json::array();
  for (const auto& c : captures_) out.push_back(ToJson(c, options_.host));
  return out;
}

size_t CaptureManager::active() {
  std::lock_guard lock(mu_);
  size_t n = 0;
  for (const auto& c : captures_) n += !c.finished();
  return n;
}

void CaptureManager::CheckDeadlinesLocked(Clock::time_point now) {
  for (auto& c : captures_) {
    if (c.finished() || now < c.deadline) continue;
    const auto timeout_s = std::chrono::duration_cast<std::chrono::seconds>(c.deadline - c.created).count();
    for (auto& t : c.targets) {
      if (t.finished()) continue;
      std::string why;
      if (t.via == kKinetoClient && t.state == TargetState::kWaiting) {
        why = registry_->Contains(t.pid)
                  ? "the process kept polling but its Kineto profiler stayed busy"
                  : "the process stopped polling for its configuration (it exited?)";
      } else if (t.via == kKinetoClient) {
        why = fmt::format("the process took the configuration but no trace appeared at {} (nor at {}): it did not "
                          "reach the start iteration (Kineto counts optimizer.step() calls), or it wrote elsewhere",
                          t.kineto_expected, KinetoFallbackPath(t.pid));
      } else if (t.first_step >= 0) {
        why = fmt::format("the collector started at step {} but did not finish (the job stopped stepping?)", t.first_step);
      } else {
        why = registry_->Contains(t.pid)
                  ? (t.start_step >= 0 ? fmt::format("the collector accepted but the job never reached step {}", t.start_step)
                                       : std::string("the collector accepted but reported nothing"))
                  : "the process exited or stopped sending heartbeats";
      }
      t.state = TargetState::kFailed;
      t.detail = fmt::format("timed out after {} s: {}", timeout_s, why);
    }
  }
}

void CaptureManager::FinishCapturesLocked(std::vector<Capture>* finished) {
  for (auto& c : captures_) {
    if (c.finished() && !c.manifest_written) {
      c.manifest_written = true;
      finished->push_back(c);
    }
  }
}

void CaptureManager::WriteManifest(const Capture& c) {
  // Not *.json: the trace reader takes every *.json in a directory for a trace.
  const fs::path path = c.dir / "capture.manifest";
  const fs::path tmp = c.dir / ".capture.manifest.tmp";
  {
    std::ofstream out(tmp);
    out << ToJson(c, options_.host).dump(2) << "\n";
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
}

void CaptureManager::WatchLoop() {
  std::unique_lock lock(mu_);
  while (!stop_) {
    bool any_active = false;
    for (const auto& c : captures_) any_active |= !c.finished();
    // Idle: sleep until a capture starts. Active: look for files five times a second.
    if (!any_active) {
      cv_.wait(lock);
    } else {
      cv_.wait_for(lock, std::chrono::milliseconds(200));
    }
    if (stop_) break;

    std::vector<KinetoCheck> checks;
    for (const auto& c : captures_) {
      for (const auto& t : c.targets) {
        if (t.via != kKinetoClient || t.state != TargetState::kRunning) continue;
        const int64_t delivered_ms =
            c.created_unix_ms + std::chrono::duration_cast<std::chrono::milliseconds>(t.delivered_at - c.created).count();
        KinetoCheck k;
        k.capture_id = c.id;
        k.pid = t.pid;
        k.expected = t.kineto_expected;
        k.fallback = KinetoFallbackPath(t.pid);
        k.destination = (c.dir / (t.BaseName() + ".pt.trace.json.gz")).string();
        k.delivered_unix_ms = delivered_ms;
        checks.push_back(std::move(k));
      }
    }
    lock.unlock();
    for (auto& k : checks) {
      std::string source;
      if (Complete(k.expected)) {
        source = k.expected;
      } else if (CompleteSince(k.fallback, k.delivered_unix_ms)) {
        source = k.fallback;
        k.detail = fmt::format("Kineto ignored the requested path and wrote {} (its on-demand path restriction)", source);
      }
      if (source.empty()) continue;
      if (Status s = GzipFile(source, k.destination); s.ok()) {
        k.done = true;
        std::error_code ec;
        fs::remove(source, ec);
        fs::remove(fs::path(k.expected).parent_path(), ec);  // the staging dir, once empty
      } else {
        k.error = s.message();
      }
    }
    lock.lock();
    for (const auto& k : checks) {
      Capture* c = FindLocked(k.capture_id);
      CaptureTarget* t = c ? c->Find(k.pid) : nullptr;
      if (!t || t->finished()) continue;
      if (k.done) {
        t->state = TargetState::kDone;
        t->file = k.destination;
        t->detail = k.detail;
      } else if (!k.error.empty()) {
        t->state = TargetState::kFailed;
        t->detail = k.error;
      }
    }
    NativeStacksPass(lock);
    CheckDeadlinesLocked(Clock::now());
    std::vector<Capture> finished;
    FinishCapturesLocked(&finished);
    std::set<fs::path> keep;
    for (const auto& c : captures_) {
      if (!c.finished()) keep.insert(c.dir);
    }
    lock.unlock();
    for (const auto& c : finished) {
      if (options_.on_finished) options_.on_finished(c);
      WriteManifest(c);
    }
    if (!finished.empty()) {
      for (const auto& gone : out_->EnforceBudget(keep)) {
        fmt::print(stderr, "rankscoped: disk budget: removed {}\n", gone);
      }
    }
    lock.lock();
    for (const auto& f : finished) {
      if (Capture* c = FindLocked(f.id)) c->saved = true;
    }
  }
}

}  // namespace rankscope::daemon

#include "rankscope/daemon/capture_manager.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <algorithm>

#include "rankscope/base/json_text.h"
#include "rankscope/base/utf8.h"
#include "rankscope/daemon/gzip_file.h"
#include "rankscope/daemon/kineto_config.h"
#include "rankscope/daemon/kineto_wire.h"
#include "rankscope/daemon/step_alignment.h"
#include "rankscope/hang/snapshot_files.h"

namespace rankscope::daemon {
namespace {

// While a capture runs, the watcher looks for files and exited processes this often.
constexpr auto kWatchInterval = std::chrono::milliseconds(200);
// Text a collector sends us (an error message) is kept to this length.
constexpr size_t kMaxReportText = 300;

int64_t UnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch()).count();
}

// A collector's text, valid UTF-8 and cut between characters: it goes into JSON (the manifest,
// the API), which cannot carry anything else.
std::string Clip(const std::string& s, size_t n) { return ClipUtf8(s, n); }

}  // namespace

// One Kineto target to look at outside the lock.
struct CaptureManager::KinetoCheck {
  std::string capture_id, job;
  int32_t pid = 0;
  KinetoStaging::Target staged;
  std::string destination;  // a file name in the capture directory
  std::string destination_path;
  FileOwner owner;
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

// ---------------------------------------------------------------------------------------------
// Starting a capture

Capture* CaptureManager::FindLocked(const std::string& id) {
  for (auto& c : captures_) {
    if (c.id == id) return &c;
  }
  return nullptr;
}

void CaptureManager::RememberLocked(Capture c) {
  captures_.push_back(std::move(c));
  // Forget the oldest finished captures (their manifests stay on disk).
  while (captures_.size() > options_.max_remembered && captures_.front().finished() && captures_.front().saved) {
    captures_.pop_front();
  }
}

Status CaptureManager::CheckCapacity() {
  std::lock_guard lock(mu_);
  size_t running = 0;
  for (const auto& c : captures_) running += !c.finished();
  if (running >= options_.max_active) {
    return FailedPrecondition("{} captures are running on this host, the limit; wait for one to finish", running);
  }
  return OkStatus();
}

StatusOr<FileOwner> CaptureManager::CommonOwner(const SelectedTargets& sel) const {
  const ProcIdentity& first = sel.processes.front().identity;
  for (const auto& p : sel.processes) {
    if (p.identity.uid != first.uid) {
      return FailedPrecondition("the selected processes of job {} run as different users (uids {} and {}); a capture "
                                "directory belongs to one user: select the ranks of one user", sel.job, first.uid,
                                p.identity.uid);
    }
  }
  return FileOwner{first.uid, first.gid, 0644};
}

Status CaptureManager::PlanTrace(TraceSpec* spec, const SelectedTargets& sel, int64_t now_unix_ms) const {
  std::vector<ProcessInfo> collectors;
  for (const auto& p : sel.processes) {
    if (p.kinds & kTrackerClient) collectors.push_back(p);
  }
  const auto now = Clock::now();
  if (spec->steps > 0 && !collectors.empty()) {
    // Collectors know their step: one absolute start step for all of them. A start far beyond
    // the job's step would keep every collector waiting (busy) for the rest of the job.
    const int64_t furthest = AlignedStartStep(collectors, now, 0, 0);
    if (spec->start_step < 0) {
      spec->start_step = AlignedStartStep(collectors, now, spec->roundup);
    } else if (spec->start_step > furthest + options_.max_start_lead_steps) {
      return OutOfRange("start_step {} is {} steps ahead of the furthest rank (step {}); at most {} ahead",
                        spec->start_step, spec->start_step - furthest, furthest, options_.max_start_lead_steps);
    }
  }
  if (spec->steps > 0 && spec->roundup <= 0) spec->roundup = options_.default_kineto_roundup;
  if (spec->duration_ms > 0 && spec->start_unix_ms <= 0) spec->start_unix_ms = now_unix_ms + 6000;
  if (spec->duration_ms > 0 && spec->start_unix_ms > now_unix_ms + options_.max_start_lead_ms) {
    return OutOfRange("start_unix_ms is {} s from now; at most {} s ahead", (spec->start_unix_ms - now_unix_ms) / 1000,
                      options_.max_start_lead_ms / 1000);
  }
  return OkStatus();
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

CaptureTarget CaptureManager::NewTarget(const ProcessInfo& p, size_t n_processes) const {
  CaptureTarget t;
  t.pid = p.pid;
  t.start_ticks = p.identity.start_ticks;
  t.rank = p.identity.rank >= 0 ? p.identity.rank : (n_processes == 1 ? 0 : -1);
  t.via = (p.kinds & kTrackerClient) ? kTrackerClient : kKinetoClient;
  return t;
}

nlohmann::json CaptureManager::TraceMessage(const Capture& c, const CaptureTarget& t) const {
  const TraceSpec& s = c.trace;
  return {{"op", "trace"}, {"id", c.id}, {"dir", c.dir.string()}, {"file", t.TraceFileName()}, {"steps", s.steps},
          {"start_step", s.start_step}, {"duration_ms", s.duration_ms},
          {"start_unix_ms", s.duration_ms > 0 ? s.start_unix_ms : 0}, {"record_shapes", s.record_shapes},
          {"with_stack", s.with_stack}, {"profile_memory", s.profile_memory}};
}

void CaptureManager::SetupKinetoTarget(const Capture& c, CaptureTarget& t, const ProcessInfo& p) const {
  if (!options_.kineto_staging) {
    t.state = TargetState::kFailed;
    t.detail = "the Kineto endpoint is off on this daemon (--no-kineto)";
    return;
  }
  const KinetoStaging::Target staged{c.id, p.pid, c.owner.uid, c.owner.gid, t.BaseName()};
  auto log_file = options_.kineto_staging->Prepare(staged);
  if (!log_file.ok()) {
    t.state = TargetState::kFailed;
    t.detail = "cannot prepare its Kineto staging directory: " + log_file.status().message();
    return;
  }
  t.kineto_log_file = *log_file;
  t.kineto_expected = options_.kineto_staging->ExpectedPath(staged);
  t.state = TargetState::kWaiting;
  if (!(p.kineto_type & kineto::kActivityProfiler)) {
    t.detail = "its Kineto profiler is busy; the configuration waits for its next idle poll";
  }
}

StatusOr<nlohmann::json> CaptureManager::StartTrace(TraceSpec spec, const Requester& who, const std::string& reason) {
  RANKSCOPE_RETURN_IF_ERROR(CheckCapacity());
  RANKSCOPE_ASSIGN_OR_RETURN(SelectedTargets sel, SelectTargets(registry_->List(), spec.selection, false, who));
  RANKSCOPE_ASSIGN_OR_RETURN(Capture c, NewCapture(Capture::Kind::kTrace, spec.trace_id, sel, spec.timeout_s));
  RANKSCOPE_RETURN_IF_ERROR(PlanTrace(&spec, sel, c.created_unix_ms));
  c.reason = reason;
  c.trace = spec;
  RANKSCOPE_ASSIGN_OR_RETURN(c.owner, CommonOwner(sel));
  RANKSCOPE_ASSIGN_OR_RETURN(c.dir, out_->MakeCaptureDir(c.job, c.id, c.owner));
  std::vector<nlohmann::json> messages;  // per target; null for Kineto targets
  for (const auto& p : sel.processes) {
    CaptureTarget t = NewTarget(p, sel.processes.size());
    if (t.via == kTrackerClient) {
      if (spec.steps > 0) t.start_step = spec.start_step;
      messages.push_back(TraceMessage(c, t));
    } else {
      SetupKinetoTarget(c, t, p);
      messages.emplace_back();
    }
    c.targets.push_back(std::move(t));
  }
  return Launch(std::move(c), sel.processes, messages);
}

StatusOr<nlohmann::json> CaptureManager::StartSnapshot(SnapshotSpec spec, const Requester& who,
                                                     const std::string& reason) {
  RANKSCOPE_RETURN_IF_ERROR(CheckCapacity());
  RANKSCOPE_ASSIGN_OR_RETURN(SelectedTargets sel, SelectTargets(registry_->List(), spec.selection, true, who));
  RANKSCOPE_ASSIGN_OR_RETURN(Capture c, NewCapture(Capture::Kind::kSnapshot, spec.snapshot_id, sel, spec.timeout_s));
  c.snapshot = spec;
  c.reason = reason;
  RANKSCOPE_ASSIGN_OR_RETURN(c.owner, CommonOwner(sel));
  RANKSCOPE_ASSIGN_OR_RETURN(c.dir, out_->MakeCaptureDir(c.job, c.id, c.owner));
  std::vector<nlohmann::json> messages;
  for (const auto& p : sel.processes) {
    CaptureTarget t = NewTarget(p, sel.processes.size());
    messages.push_back({{"op", "snapshot"}, {"id", c.id}, {"dir", c.dir.string()}, {"file", t.StacksFileName()}});
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
      if (!messages[i].is_null()) DeliverToCollector(rc.targets[i], procs[i], messages[i]);
    }
    result = ToJson(rc, options_.host);
  }
  cv_.notify_all();
  return result;
}

void CaptureManager::DeliverToCollector(CaptureTarget& t, const ProcessInfo& p, const nlohmann::json& msg) {
  if (Status s = send_(p.collector_address, msg); !s.ok()) {
    t.state = TargetState::kFailed;
    t.detail = fmt::format("could not reach the collector of pid {}: {}", p.pid, s.message());
    return;
  }
  t.state = TargetState::kRunning;
  t.delivered_at = Clock::now();
}

// ---------------------------------------------------------------------------------------------
// What the clients tell us

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
  auto id = StringField(msg, "id", 128);
  auto state = StringField(msg, "state", 16);
  auto file = StringField(msg, "file", 255);
  auto error = StringField(msg, "error", 64 * 1024);
  auto first = IntegerField(msg, "first_step", -1, -1, kMaxStep);
  auto last = IntegerField(msg, "last_step", -1, -1, kMaxStep);
  if (!id.ok() || !state.ok() || !file.ok() || !error.ok() || !first.ok() || !last.ok()) return;
  {
    std::lock_guard lock(mu_);
    Capture* c = FindLocked(*id);
    CaptureTarget* t = c ? c->Find(pid) : nullptr;
    if (!t || t->finished() || t->stacks_in) return;
    if (*first >= 0) t->first_step = *first;
    if (*last >= 0) t->last_step = *last;
    if (*state == "started") {
      t->state = TargetState::kRunning;
      if (t->start_step >= 0 && t->first_step > t->start_step) {
        t->detail = fmt::format("started late, at step {} instead of {}", t->first_step, t->start_step);
      }
    } else if (*state == "done") {
      MarkDoneLocked(*c, *t, *file, msg);
    } else if (*state == "failed") {
      t->state = TargetState::kFailed;
      t->detail = "the collector failed: " + (error->empty() ? std::string("no reason given") : Clip(*error, kMaxReportText));
    }
  }
  cv_.notify_all();
}

void CaptureManager::MarkDoneLocked(const Capture& c, CaptureTarget& t, const std::string& file,
                                    const nlohmann::json& msg) {
  // Only the file it was asked for, and only a regular file (lstat: not a symlink).
  const std::string expected = c.kind == Capture::Kind::kTrace ? t.TraceFileName() : t.StacksFileName();
  auto dir = out_->OpenCaptureDir(c.job, c.id);
  auto regular = [&](const std::string& name) {
    auto st = dir.ok() ? dir->StatEntry(name) : StatusOr<struct stat>(dir.status());
    return st.ok() && S_ISREG(st->st_mode);
  };
  if (file != expected || !regular(expected)) {
    t.state = TargetState::kFailed;
    t.detail = fmt::format("the collector reported {} done but {} is not a regular file in {}", Clip(file, 64),
                           expected, c.dir.string());
    return;
  }
  t.file = (c.dir / expected).string();
  if (c.kind == Capture::Kind::kTrace) {
    t.state = TargetState::kDone;
    return;
  }
  // A snapshot may come with the collector's flight-recorder dump (docs/hang.md): a regular
  // file of a plain name in the same directory. The target is done once the watcher has looked
  // at its DataLoader (WorkerStacksPass).
  auto fr = StringField(msg, "fr_file", 255);
  if (fr.ok() && IsPlainName(*fr) && hang::ClassifySnapshotFile(*fr) == hang::SnapshotFileKind::kFlightRecorder &&
      regular(*fr)) {
    t.extra_file = (c.dir / *fr).string();
  }
  t.stacks_in = true;
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
    if (last_auto_.size() >= 4096) last_auto_.clear();  // bounded: forgetting only re-allows a trace
    last_auto_[job] = now;
  }
  TraceSpec spec;
  spec.trace_id = fmt::format("auto-{}", NewCaptureId());
  spec.selection.job = job;
  auto steps = IntegerField(msg, "steps", 3, 1, 50);
  spec.steps = static_cast<int32_t>(steps.ok() ? *steps : 3);
  spec.timeout_s = 600;
  auto why = StringField(msg, "reason", 200);
  const std::string reason = fmt::format("auto-trigger from rank {}: {}", from.identity.rank,
                                         why.ok() && !why->empty() ? *why : std::string("step time degraded"));
  // The job of the process that fired, which is its own user's (job names are per user).
  auto r = StartTrace(spec, Requester{from.identity.uid}, reason);
  if (!r.ok()) fmt::print(stderr, "rankscoped: auto-trigger for job {} failed: {}\n", job, r.status().message());
  else fmt::print(stderr, "rankscoped: {} -> trace {}\n", reason, spec.trace_id);
}

StatusOr<CaptureManager::OpenedCapture> CaptureManager::OpenCapture(const std::string& id) {
  std::string job;
  OpenedCapture out;
  {
    std::lock_guard lock(mu_);
    Capture* c = FindLocked(id);
    if (!c) return NotFound("no capture {} on this host (or it is no longer remembered)", id);
    job = c->job;
    out.owner = c->owner;
    out.kind = c->kind;
    out.saved = c->saved;
    out.files = CaptureFileNames(*c);
  }
  RANKSCOPE_ASSIGN_OR_RETURN(out.dir, out_->OpenCaptureDir(job, id));
  return out;
}

Status CaptureManager::WriteCaptureFile(const std::string& id, const std::string& name,
                                        const std::function<Status(int fd)>& write, bool replace) {
  if (!IsPlainName(name) || name.front() == '.') return InvalidArgument("'{}' is not a file name", name);
  RANKSCOPE_ASSIGN_OR_RETURN(OpenedCapture c, OpenCapture(id));
  if (!replace && c.dir.StatEntry(name).ok()) {
    return FailedPrecondition("{} is already in the snapshot directory", name);
  }
  return c.dir.WriteFile(name, write, c.owner);
}

Status CaptureManager::WriteCaptureFile(const std::string& id, const std::string& name, std::string_view content,
                                        bool replace) {
  return WriteCaptureFile(id, name, [&](int fd) -> Status {
    size_t done = 0;
    while (done < content.size()) {
      const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return IoError("writing {}: {}", name, std::strerror(errno));
      done += static_cast<size_t>(n);
    }
    return OkStatus();
  }, replace);
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

// ---------------------------------------------------------------------------------------------
// The watcher

void CaptureManager::WatchLoop() {
  std::unique_lock lock(mu_);
  while (!stop_) {
    // Idle: sleep until a capture starts. Active: look five times a second.
    if (AnyActiveLocked()) {
      cv_.wait_for(lock, kWatchInterval);
    } else {
      cv_.wait(lock);
    }
    if (stop_) break;
    CollectKinetoTraces(lock);
    NativeStacksPass(lock);
    WorkerStacksPass(lock);
    FailExitedTargetsLocked();
    CheckDeadlinesLocked(Clock::now());
    SaveFinished(lock);
  }
}

bool CaptureManager::AnyActiveLocked() const {
  return std::any_of(captures_.begin(), captures_.end(),
                     [](const Capture& c) { return !c.finished() || !c.manifest_written; });
}

void CaptureManager::CollectKinetoTraces(std::unique_lock<std::mutex>& lock) {
  std::vector<KinetoCheck> checks;
  for (const auto& c : captures_) {
    for (const auto& t : c.targets) {
      if (t.via != kKinetoClient || t.state != TargetState::kRunning) continue;
      KinetoCheck k;
      k.capture_id = c.id;
      k.job = c.job;
      k.pid = t.pid;
      k.staged = {c.id, t.pid, c.owner.uid, c.owner.gid, t.BaseName()};
      k.destination = t.TraceFileName();
      k.destination_path = (c.dir / k.destination).string();
      k.owner = c.owner;
      k.delivered_unix_ms =
          c.created_unix_ms + std::chrono::duration_cast<std::chrono::milliseconds>(t.delivered_at - c.created).count();
      checks.push_back(std::move(k));
    }
  }
  if (checks.empty() || !options_.kineto_staging) return;
  lock.unlock();  // compression takes a while; collectors' reports must not wait for it
  for (auto& k : checks) CollectKinetoTrace(k);
  lock.lock();
  for (const auto& k : checks) {
    Capture* c = FindLocked(k.capture_id);
    CaptureTarget* t = c ? c->Find(k.pid) : nullptr;
    if (!t || t->finished()) continue;
    if (k.done) {
      t->state = TargetState::kDone;
      t->file = k.destination_path;
      t->detail = k.detail;
    } else if (!k.error.empty()) {
      t->state = TargetState::kFailed;
      t->detail = k.error;
    }
  }
}

void CaptureManager::CollectKinetoTrace(KinetoCheck& k) const {
  const KinetoStaging& staging = *options_.kineto_staging;
  auto found = staging.Find(k.staged, k.delivered_unix_ms);
  if (!found.ok()) {
    k.error = "the staged trace was not taken: " + found.status().message();
    staging.Discard(k.staged, nullptr);
    return;
  }
  if (!found->has_value()) return;  // not written yet
  KinetoStaging::Found& f = **found;
  auto dir = out_->OpenCaptureDir(k.job, k.capture_id);
  Status s = dir.ok() ? dir->WriteFile(k.destination, [&](int fd) { return GzipStream(f.fd.get(), fd); }, k.owner)
                      : dir.status();
  staging.Discard(k.staged, &f);
  if (!s.ok()) {
    k.error = fmt::format("compressing {} into the capture directory failed: {}", f.path, s.message());
    return;
  }
  k.done = true;
  if (f.fallback) k.detail = fmt::format("Kineto ignored the requested path and wrote {} (its on-demand path restriction)", f.path);
}

void CaptureManager::FailExitedTargetsLocked() {
  for (auto& c : captures_) {
    if (c.finished()) continue;
    for (auto& t : c.targets) {
      if (t.finished() || ProcessAlive(t.pid, t.start_ticks)) continue;
      if (t.stacks_in) {  // its stacks were written before it exited
        t.state = TargetState::kDone;
        continue;
      }
      t.state = TargetState::kFailed;
      t.detail = t.first_step >= 0 ? fmt::format("the process exited (pid {} is gone) after starting at step {}", t.pid, t.first_step)
                                   : fmt::format("the process exited (pid {} is gone) before producing its file", t.pid);
      DiscardStaging(c, t);
    }
  }
}

std::string CaptureManager::TimeoutReason(const CaptureTarget& t) const {
  if (t.via == kKinetoClient && t.state == TargetState::kWaiting) {
    return registry_->Contains(t.pid) ? "the process kept polling but its Kineto profiler stayed busy"
                                      : "the process stopped polling for its configuration";
  }
  if (t.via == kKinetoClient) {
    return fmt::format("the process took the configuration but no trace appeared at {} (nor at {}): it did not reach "
                       "the start iteration (Kineto counts optimizer.step() calls), or it wrote elsewhere",
                       t.kineto_expected, KinetoFallbackPath(t.pid));
  }
  if (t.first_step >= 0) return fmt::format("the collector started at step {} but did not finish (the job stopped stepping?)", t.first_step);
  if (!registry_->Contains(t.pid)) return "the process stopped sending heartbeats";
  return t.start_step >= 0 ? fmt::format("the collector accepted but the job never reached step {}", t.start_step)
                           : std::string("the collector accepted but reported nothing");
}

void CaptureManager::CancelAtCollector(const Capture& c, const CaptureTarget& t) {
  if (t.via != kTrackerClient) return;
  // So that the collector does not stay busy waiting for a start that will never be recorded.
  if (auto p = registry_->Get(t.pid)) (void)send_(p->collector_address, {{"op", "cancel"}, {"id", c.id}});
}

void CaptureManager::DiscardStaging(const Capture& c, const CaptureTarget& t) const {
  if (t.via != kKinetoClient || !options_.kineto_staging) return;
  options_.kineto_staging->Discard({c.id, t.pid, c.owner.uid, c.owner.gid, t.BaseName()}, nullptr);
}

void CaptureManager::CheckDeadlinesLocked(Clock::time_point now) {
  for (auto& c : captures_) {
    if (c.finished() || now < c.deadline) continue;
    const auto timeout_s = std::chrono::duration_cast<std::chrono::seconds>(c.deadline - c.created).count();
    for (auto& t : c.targets) {
      if (t.finished()) continue;
      if (t.stacks_in) {
        t.state = TargetState::kDone;
        t.detail = fmt::format("{}{}its DataLoader workers' stacks were not taken within {} s", t.detail,
                               t.detail.empty() ? "" : "; ", timeout_s);
        continue;
      }
      t.detail = fmt::format("timed out after {} s: {}", timeout_s, TimeoutReason(t));
      t.state = TargetState::kFailed;
      CancelAtCollector(c, t);
      DiscardStaging(c, t);
    }
  }
}

void CaptureManager::SaveFinished(std::unique_lock<std::mutex>& lock) {
  std::vector<Capture> finished;
  std::set<std::string> keep;  // never evicted: captures still running and the ones saved now
  for (auto& c : captures_) {
    if (!c.finished() || !c.manifest_written) keep.insert(c.Key());
    if (c.finished() && !c.manifest_written) {
      c.manifest_written = true;
      finished.push_back(c);
    }
  }
  if (finished.empty()) return;
  lock.unlock();
  for (auto& c : finished) SaveBesideTraces(c);
  if (options_.protected_captures) keep.merge(options_.protected_captures());
  const Eviction eviction = out_->EnforceBudget(keep);
  for (const auto& gone : eviction.removed) fmt::print(stderr, "rankscoped: disk budget: removed {}\n", gone);
  for (const auto& e : eviction.errors) fmt::print(stderr, "rankscoped: disk budget: {}\n", e);
  for (auto& c : finished) {
    c.eviction = eviction;
    c.saved = true;
    if (Status s = WriteManifest(c); !s.ok()) {
      c.save_errors.push_back("capture.manifest: " + s.message());
      fmt::print(stderr, "rankscoped: capture {}: manifest not written: {}\n", c.id, s.message());
    }
    if (options_.on_saved) options_.on_saved(c);
  }
  lock.lock();
  for (const auto& f : finished) {
    if (Capture* c = FindLocked(f.id)) {
      c->eviction = f.eviction;
      c->save_errors = f.save_errors;
      c->saved = true;
    }
  }
}

void CaptureManager::SaveBesideTraces(Capture& c) const {
  if (!options_.on_finished) return;
  auto dir = out_->OpenCaptureDir(c.job, c.id);
  if (!dir.ok()) {
    c.save_errors.push_back(dir.status().message());
    return;
  }
  const FileWriter write = [&](const std::string& name, std::string_view content) {
    return dir->WriteFile(name, content, c.owner);
  };
  if (Status s = options_.on_finished(c, write); !s.ok()) c.save_errors.push_back(s.message());
}

Status CaptureManager::WriteManifest(const Capture& c) const {
  // Not *.json: the trace reader takes every *.json in a directory for a trace.
  RANKSCOPE_ASSIGN_OR_RETURN(DirHandle dir, out_->OpenCaptureDir(c.job, c.id));
  return dir.WriteFile("capture.manifest", DumpJson(ToJson(c, options_.host)), c.owner);
}

}  // namespace rankscope::daemon

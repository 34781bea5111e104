#include "rankscope/daemon/baseline_keeper.h"

#include <fcntl.h>
#include <grp.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "rankscope/daemon/capture_spec.h"

namespace rankscope::daemon {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxBaselineFileBytes = 4096;
// Job directories looked at for baselines on each save (the disk budget's keep set).
constexpr size_t kMaxJobsScanned = 10'000;
// The comparison child's whole environment: nothing of the daemon's reaches the user's process.
char kPath[] = "PATH=/usr/local/bin:/usr/bin:/bin";
char kLang[] = "LC_ALL=C";
char* const kChildEnv[] = {kPath, kLang, nullptr};

bool IsAutomatic(const Capture& c) { return c.id.rfind("auto-", 0) == 0 || c.reason.rfind("auto-trigger", 0) == 0; }

bool AllDone(const Capture& c) {
  if (c.targets.empty()) return false;
  for (const CaptureTarget& t : c.targets) {
    if (t.state != TargetState::kDone) return false;
  }
  return true;
}

int64_t NowUnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

BaselineKeeper::BaselineKeeper(Options options) : options_(std::move(options)) {
  if (!options_.compare_bin.empty()) worker_ = std::thread([this] { Loop(); });
}

BaselineKeeper::~BaselineKeeper() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (worker_.joinable()) worker_.join();
}

StatusOr<DirHandle> BaselineKeeper::JobDir(const std::string& job) const {
  if (!IsSafeName(job)) return InvalidArgument("baseline: unsafe job name '{}'", job);
  RANKSCOPE_ASSIGN_OR_RETURN(DirHandle root, DirHandle::OpenPath(options_.root.string()));
  return root.Child(job);
}

StatusOr<compare::Baseline> BaselineKeeper::ReadBaseline(const DirHandle& job_dir) const {
  // The daemon's own file: a regular file of its user, one link, never a symlink.
  RANKSCOPE_ASSIGN_OR_RETURN(UniqueFd fd, job_dir.OpenOwnedFile(compare::kBaselineFileName, ::geteuid()));
  char text[kMaxBaselineFileBytes];
  ssize_t n;
  do {
    n = ::read(fd.get(), text, sizeof(text));
  } while (n < 0 && errno == EINTR);
  if (n <= 0) return IoError("{}/{}: cannot read", job_dir.path(), compare::kBaselineFileName);
  return compare::ParseBaselineFile(std::string_view(text, static_cast<size_t>(n)),
                                    job_dir.path() + "/" + compare::kBaselineFileName);
}

Status BaselineKeeper::Keep(const std::string& job, const std::string& id, const std::string& reason) {
  if (!IsSafeName(id)) return InvalidArgument("baseline: unsafe capture name '{}'", id);
  RANKSCOPE_ASSIGN_OR_RETURN(DirHandle dir, JobDir(job));
  compare::Baseline b;
  b.job = job;
  b.capture = id;
  b.reason = reason;
  b.kept_unix_ms = NowUnixMs();
  return dir.WriteFile(compare::kBaselineFileName, compare::BaselineFileText(b),
                       FileOwner{::geteuid(), ::getegid(), 0644});
}

std::set<std::string> BaselineKeeper::Protected() const {
  std::set<std::string> out;
  std::error_code ec;
  size_t scanned = 0;
  for (const auto& entry : fs::directory_iterator(options_.root, ec)) {  // names only; opened below
    if (++scanned > kMaxJobsScanned) {
      fmt::print(stderr, "rankscoped: more than {} job directories: baselines beyond them are not protected\n",
                 kMaxJobsScanned);
      break;
    }
    const std::string job = entry.path().filename().string();
    auto dir = JobDir(job);
    if (!dir.ok()) continue;
    auto b = ReadBaseline(*dir);
    if (b.ok() && IsSafeName(b->capture)) out.insert(job + "/" + b->capture);
  }
  return out;
}

void BaselineKeeper::OnSaved(const Capture& c) {
  if (c.kind != Capture::Kind::kTrace || c.job.empty()) return;
  auto job_dir = JobDir(c.job);
  if (!job_dir.ok()) return;
  auto baseline = ReadBaseline(*job_dir);
  const bool has_baseline = baseline.ok();
  if (c.trace.baseline || (options_.first_healthy && !has_baseline && !IsAutomatic(c))) {
    if (!AllDone(c)) {
      if (c.trace.baseline) {
        fmt::print(stderr, "rankscoped: capture {} of job {} is not kept as the baseline: not every rank's trace is there\n",
                   c.id, c.job);
      }
      return;
    }
    const Status s = Keep(c.job, c.id, c.trace.baseline ? "trace --baseline" : "first healthy capture");
    if (!s.ok()) fmt::print(stderr, "rankscoped: {}\n", s.message());
    return;
  }
  if (!IsAutomatic(c) || options_.compare_bin.empty()) return;
  if (!has_baseline) {
    if (baseline.status().code() != StatusCode::kNotFound) {
      fmt::print(stderr, "rankscoped: job {}: {}\n", c.job, baseline.status().message());
    }
    return;
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (queue_.size() >= options_.max_queue) {
    fmt::print(stderr, "rankscoped: {} comparisons waiting; capture {} is not compared with its baseline\n",
               queue_.size(), c.id);
    return;
  }
  queue_.push_back({c.job, c.id, options_.root / c.job / baseline->capture, c.dir});
  cv_.notify_one();
}

void BaselineKeeper::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (stop_) return;
    const Work w = queue_.front();
    queue_.pop_front();
    lock.unlock();
    Compare(w);
    lock.lock();
  }
}

// `rankscope compare --baseline <out>/<job> CAPTURE --json -`, its stdout bounded, its time bounded; as the
// capture directory's owner when the daemon is root (the traces are that user's).
StatusOr<std::string> BaselineKeeper::RunCompare(const Work& w, const struct stat& owner) const {
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return IoError("pipe: {}", std::strerror(errno));
  UniqueFd read_end(out[0]), write_end(out[1]);
  // `--baseline <out>/<job>`: the report names the baseline capture and why it was kept.
  const std::string job_dir = w.baseline_dir.parent_path().string(), neu = w.capture_dir.string();
  const pid_t pid = ::fork();
  if (pid < 0) return IoError("fork: {}", std::strerror(errno));
  if (pid == 0) {
    ::dup2(write_end.get(), STDOUT_FILENO);
    const int devnull = ::open("/dev/null", O_RDWR);
    if (devnull >= 0) {
      ::dup2(devnull, STDIN_FILENO);
      ::dup2(devnull, STDERR_FILENO);
    }
    // Nothing of the daemon's (its sockets, directory handles, staging files) reaches the
    // child, which runs as the capture's user: every descriptor above stderr is closed.
    if (::close_range(3, ~0U, 0) != 0) {  // kernels before 5.9
      for (int fd = 3; fd < 65536; ++fd) ::close(fd);
    }
    if (::geteuid() == 0 && owner.st_uid != 0) {
      if (::setgroups(0, nullptr) != 0 || ::setgid(owner.st_gid) != 0 || ::setuid(owner.st_uid) != 0) ::_exit(126);
    }
    ::execle(options_.compare_bin.c_str(), "rankscope", "compare", "--baseline", job_dir.c_str(), neu.c_str(), "--json",
             "-", "--threads", "1", static_cast<char*>(nullptr), kChildEnv);
    ::_exit(127);
  }
  write_end.Reset();
  std::string report;
  bool too_big = false;
  const auto deadline = std::chrono::steady_clock::now() + options_.compare_timeout;
  char buf[65536];
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd p{read_end.get(), POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (r <= 0) continue;  // EINTR or not yet
    const ssize_t n = ::read(read_end.get(), buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (report.size() + static_cast<size_t>(n) > options_.max_report_bytes) {
      too_big = true;
      break;
    }
    report.append(buf, static_cast<size_t>(n));
  }
  // Its output has ended (or is too large, or time is up): wait for it until the deadline.
  int status = 0;
  pid_t done;
  while ((done = ::waitpid(pid, &status, WNOHANG)) == 0 && !too_big && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (done == 0) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    status = -1;
  }
  if (too_big) return OutOfRange("report too large");
  if (status == -1) return IoError("timed out");
  if (status != 0 || report.empty()) return IoError("rankscope compare failed");
  return report;
}

void BaselineKeeper::Compare(const Work& w) {
  auto job_dir = JobDir(w.job);
  if (!job_dir.ok()) return;
  auto dir = job_dir->Child(w.id);
  if (!dir.ok()) return;
  auto st = dir->Stat();
  if (!st.ok()) return;
  auto report = RunCompare(w, *st);
  if (!report.ok()) {
    fmt::print(stderr, "rankscoped: comparing {}/{} with its baseline failed ({})\n", w.job, w.id,
               report.status().message());
    return;
  }
  const Status s = dir->WriteFile(kBaselineComparisonFile, *report, FileOwner{st->st_uid, st->st_gid, 0644});
  if (!s.ok()) fmt::print(stderr, "rankscoped: {}/{}: {}\n", w.job, w.id, s.message());
}

}  // namespace rankscope::daemon

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

#include "rankscope/compare/baseline_file.h"

namespace rankscope::daemon {
namespace {

namespace fs = std::filesystem;

// A file in `dir_fd`, written under a temporary name and renamed over `name`; nothing is followed.
Status WriteAt(int dir_fd, const std::string& name, const std::string& text) {
  const std::string tmp = "." + name + ".tmp";
  ::unlinkat(dir_fd, tmp.c_str(), 0);
  const int fd = ::openat(dir_fd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return IoError("create {}: {}", tmp, std::strerror(errno));
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  if (done != text.size() || ::renameat(dir_fd, tmp.c_str(), dir_fd, name.c_str()) != 0) {
    ::unlinkat(dir_fd, tmp.c_str(), 0);
    return IoError("write {}: {}", name, std::strerror(errno));
  }
  return OkStatus();
}

// <root>/<a>[/<b>] opened as a directory without following a link at any level.
int OpenDirNoFollow(const fs::path& root, const std::string& a, const std::string& b = "") {
  const int root_fd = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (root_fd < 0) return -1;
  int fd = ::openat(root_fd, a.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  ::close(root_fd);
  if (fd >= 0 && !b.empty()) {
    const int inner = ::openat(fd, b.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    ::close(fd);
    fd = inner;
  }
  return fd;
}

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

Status BaselineKeeper::Keep(const std::string& job, const std::string& id, const std::string& reason) {
  if (!IsSafeName(job) || !IsSafeName(id)) return InvalidArgument("baseline: unsafe job or capture name");
  const int job_fd = OpenDirNoFollow(options_.root, job);
  if (job_fd < 0) return IoError("baseline: open {}/{}: {}", options_.root.string(), job, std::strerror(errno));
  compare::Baseline b;
  b.job = job;
  b.capture = id;
  b.reason = reason;
  b.kept_unix_ms = NowUnixMs();
  Status s = WriteAt(job_fd, compare::kBaselineFileName, compare::BaselineFileText(b));
  ::close(job_fd);
  return s;
}

std::set<fs::path> BaselineKeeper::Protected() {
  std::set<fs::path> out;
  std::error_code ec;
  for (const auto& job : fs::directory_iterator(options_.root, ec)) {
    if (!job.is_directory(ec) || job.is_symlink(ec)) continue;
    const int fd = OpenDirNoFollow(options_.root, job.path().filename().string());
    if (fd < 0) continue;
    char text[4096];
    const int file = ::openat(fd, compare::kBaselineFileName, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    ::close(fd);
    if (file < 0) continue;
    const ssize_t n = ::read(file, text, sizeof(text));
    ::close(file);
    if (n <= 0) continue;
    auto b = compare::ParseBaselineFile(std::string_view(text, static_cast<size_t>(n)), "baseline");
    if (b.ok()) out.insert(job.path() / b->capture);
  }
  return out;
}

void BaselineKeeper::OnSaved(const Capture& c) {
  if (c.kind != Capture::Kind::kTrace || c.job.empty()) return;
  const fs::path job_dir = options_.root / c.job;
  std::error_code ec;
  const bool has_baseline = fs::exists(job_dir / compare::kBaselineFileName, ec);
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
  if (!IsAutomatic(c) || !has_baseline || options_.compare_bin.empty()) return;
  auto found = compare::FindBaseline(job_dir.string(), "");
  if (!found.ok()) {
    fmt::print(stderr, "rankscoped: job {}: {}\n", c.job, found.status().message());
    return;
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (queue_.size() >= options_.max_queue) {
    fmt::print(stderr, "rankscoped: {} comparisons waiting; capture {} is not compared with its baseline\n",
               queue_.size(), c.id);
    return;
  }
  queue_.push_back({c.job, c.id, found->capture_dir, c.dir});
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

// `rankscope compare BASELINE CAPTURE --json -`, its stdout bounded, its time bounded; as the
// capture directory's owner when the daemon is root (the traces are that user's).
void BaselineKeeper::Compare(const Work& w) {
  const int cap_fd = OpenDirNoFollow(options_.root, w.job, w.id);
  if (cap_fd < 0) return;
  struct stat st {};
  if (::fstat(cap_fd, &st) != 0) {
    ::close(cap_fd);
    return;
  }
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) {
    ::close(cap_fd);
    return;
  }
  const std::string base = w.baseline_dir.string(), neu = w.capture_dir.string();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out[1], STDOUT_FILENO);
    const int devnull = ::open("/dev/null", O_WRONLY);
    if (devnull >= 0) ::dup2(devnull, STDERR_FILENO);
    if (::geteuid() == 0 && st.st_uid != 0) {
      if (::setgroups(0, nullptr) != 0 || ::setgid(st.st_gid) != 0 || ::setuid(st.st_uid) != 0) ::_exit(126);
    }
    ::execl(options_.compare_bin.c_str(), "rankscope", "compare", base.c_str(), neu.c_str(), "--json", "-", "--threads",
            "1", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(out[1]);
  std::string report;
  bool too_big = false;
  const auto deadline = std::chrono::steady_clock::now() + options_.compare_timeout;
  if (pid > 0) {
    char buf[65536];
    while (true) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) break;
      pollfd p{out[0], POLLIN, 0};
      const int r = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) continue;
      const ssize_t n = ::read(out[0], buf, sizeof(buf));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      if (report.size() + static_cast<size_t>(n) > options_.max_report_bytes) {
        too_big = true;
        break;
      }
      report.append(buf, static_cast<size_t>(n));
    }
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      status = -1;
    }
    if (status == 0 && !too_big && !report.empty()) {
      const Status s = WriteAt(cap_fd, kBaselineComparisonFile, report);
      if (!s.ok()) fmt::print(stderr, "rankscoped: {}/{}: {}\n", w.job, w.id, s.message());
    } else {
      fmt::print(stderr, "rankscoped: comparing {}/{} with its baseline failed ({})\n", w.job, w.id,
                 too_big ? "report too large" : status == -1 ? "timed out" : "rankscope compare failed");
    }
  }
  ::close(out[0]);
  ::close(cap_fd);
}

}  // namespace rankscope::daemon

#include "rankscope/daemon/output_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <queue>

#include "rankscope/daemon/capture_spec.h"

namespace fs = std::filesystem;

namespace rankscope::daemon {
namespace {

int64_t Ms(const timespec& t) { return int64_t{t.tv_sec} * 1000 + t.tv_nsec / 1'000'000; }

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Directories the daemon writes into must be its own and writable by nobody else: otherwise
// another user could rename what is in them or plant entries.
Status CheckOwnDirectory(const DirHandle& dir) {
  RANKSCOPE_ASSIGN_OR_RETURN(struct stat st, dir.Stat());
  if (st.st_uid != ::geteuid()) {
    return FailedPrecondition("{} belongs to uid {}, not to the daemon's uid {}: remove it or choose another directory",
                              dir.path(), st.st_uid, ::geteuid());
  }
  if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    return FailedPrecondition("{} is writable by other users (mode {:o}): make it 0755", dir.path(), st.st_mode & 07777);
  }
  return OkStatus();
}

// One capture directory met by a scan: <job>/<id>.
struct CaptureUsage {
  uint64_t bytes = 0;
  int64_t changed_ms = 0;  // newest ctime below it: users cannot set ctime (utime sets it to now)
};

struct Scan {
  uint64_t bytes = 0;
  size_t files = 0;
  std::map<std::string, CaptureUsage> captures;  // by "<job>/<id>"
};

// The capture a relative path belongs to ("<job>/<id>"), or "" for entries above that level.
std::string CaptureKey(const std::string& relative) {
  const size_t first = relative.find('/');
  if (first == std::string::npos) return "";
  const size_t second = relative.find('/', first + 1);
  return second == std::string::npos ? relative : relative.substr(0, second);
}

}  // namespace

StatusOr<std::unique_ptr<OutputDir>> OutputDir::Open(const std::string& root, uint64_t budget_bytes) {
  std::error_code ec;
  fs::path abs = fs::absolute(root, ec).lexically_normal();
  if (ec) return InvalidArgument("output directory {}: {}", root, ec.message());
  if (!fs::exists(abs, ec)) {
    fs::create_directories(abs, ec);
    if (ec) return IoError("cannot create the output directory {}: {}", abs.string(), ec.message());
    fs::permissions(abs, fs::perms(0755), ec);
  }
  // Canonical form so that Contains() compares like with like (symlinked /tmp etc.).
  abs = fs::canonical(abs, ec);
  if (ec) return IoError("output directory {}: {}", root, ec.message());
  RANKSCOPE_ASSIGN_OR_RETURN(DirHandle handle, DirHandle::OpenPath(abs.string()));
  RANKSCOPE_RETURN_IF_ERROR(CheckOwnDirectory(handle).WithContext("output directory"));
  std::unique_ptr<OutputDir> out(new OutputDir(abs, std::move(handle), budget_bytes));
  out->Rescan();
  return out;
}

StatusOr<fs::path> OutputDir::MakeCaptureDir(const std::string& job, const std::string& id, const FileOwner& owner) {
  if (!IsSafeName(job)) return InvalidArgument("job '{}' is not a safe directory name", job);
  if (!IsSafeName(id)) return InvalidArgument("capture id '{}' is not a safe directory name", id);
  if (::geteuid() != 0 && owner.uid != ::geteuid()) {
    return FailedPrecondition("the daemon runs as uid {} and cannot give uid {} a directory to write to; run rankscoped "
                              "as root (deploy/rankscoped.service)", ::geteuid(), owner.uid);
  }
  RANKSCOPE_ASSIGN_OR_RETURN(DirHandle job_dir, handle_.MakeChild(job, 0755, /*exclusive=*/false));
  RANKSCOPE_RETURN_IF_ERROR(CheckOwnDirectory(job_dir));
  RANKSCOPE_ASSIGN_OR_RETURN(DirHandle dir, job_dir.MakeChild(id, 0755, /*exclusive=*/true));
  if (::geteuid() == 0 && owner.uid != 0) RANKSCOPE_RETURN_IF_ERROR(dir.SetOwner(owner.uid, owner.gid));
  RANKSCOPE_RETURN_IF_ERROR(dir.SetMode(0755));
  return root_ / job / id;
}

StatusOr<DirHandle> OutputDir::OpenCaptureDir(const std::string& job, const std::string& id) const {
  RANKSCOPE_ASSIGN_OR_RETURN(DirHandle job_dir, handle_.Child(job));
  return job_dir.Child(id);
}

bool OutputDir::Contains(const fs::path& path) const {
  const fs::path norm = path.lexically_normal();
  auto rel = norm.lexically_relative(root_);
  return !rel.empty() && *rel.begin() != ".." && norm.is_absolute();
}

FileListing OutputDir::List(size_t limit) const {
  FileListing out;
  // The newest `limit` files, kept in a heap whose top is the oldest of them.
  auto newer = [](const ProducedFile& a, const ProducedFile& b) {
    return a.mtime_unix_ms != b.mtime_unix_ms ? a.mtime_unix_ms > b.mtime_unix_ms : a.relative > b.relative;
  };
  std::priority_queue<ProducedFile, std::vector<ProducedFile>, decltype(newer)> newest(newer);
  handle_.Walk([&](const WalkEntry& e) {
    if (!S_ISREG(e.st.st_mode)) return S_ISDIR(e.st.st_mode);
    ++out.total;
    out.bytes += static_cast<uint64_t>(e.st.st_size);
    if (limit == 0) return false;
    newest.push({e.relative, static_cast<uint64_t>(e.st.st_size), Ms(e.st.st_mtim)});
    if (newest.size() > limit) newest.pop();
    return false;
  });
  out.files.reserve(newest.size());
  for (; !newest.empty(); newest.pop()) out.files.push_back(newest.top());  // the top is the oldest
  used_bytes_.store(out.bytes);
  used_scanned_unix_ms_.store(NowMs());
  return out;
}

Status OutputDir::RemoveCapture(const std::string& job, const std::string& id) const {
  if (!IsSafeName(job) || !IsSafeName(id)) return InvalidArgument("'{}/{}' is not a capture directory", job, id);
  RANKSCOPE_ASSIGN_OR_RETURN(DirHandle job_dir, handle_.Child(job));
  // The descriptor was reached from the root without following links; check once more that
  // the kernel agrees it is <root>/<job> before removing anything below it.
  const std::string real = job_dir.RealPath();
  if (real != (root_ / job).string()) {
    return FailedPrecondition("{} resolves to {}, outside the output directory: not removed", job_dir.path(), real);
  }
  return job_dir.RemoveTree(id);
}

Eviction OutputDir::EnforceBudget(const std::set<std::string>& keep) {
  std::lock_guard lock(evict_mu_);
  Eviction ev;
  Scan scan;
  handle_.Walk([&](const WalkEntry& e) {
    const std::string key = CaptureKey(e.relative);
    if (!key.empty()) {
      CaptureUsage& c = scan.captures[key];
      c.changed_ms = std::max(c.changed_ms, Ms(e.st.st_ctim));
      if (S_ISREG(e.st.st_mode)) c.bytes += static_cast<uint64_t>(e.st.st_size);
    }
    if (S_ISREG(e.st.st_mode)) scan.bytes += static_cast<uint64_t>(e.st.st_size);
    return S_ISDIR(e.st.st_mode);
  });
  ev.used_before = ev.used_after = scan.bytes;
  if (budget_ > 0 && scan.bytes > budget_) {
    std::vector<std::pair<int64_t, std::string>> order;
    for (const auto& [key, c] : scan.captures) order.emplace_back(c.changed_ms, key);
    std::sort(order.begin(), order.end());
    for (const auto& [changed, key] : order) {
      if (ev.used_after <= budget_) break;
      if (keep.count(key)) continue;
      const size_t slash = key.find('/');
      if (Status s = RemoveCapture(key.substr(0, slash), key.substr(slash + 1)); !s.ok()) {
        ev.errors.push_back(s.message());
        continue;
      }
      ev.used_after -= std::min(ev.used_after, scan.captures[key].bytes);
      ev.removed.push_back(key);
    }
  }
  ev.over_budget = budget_ > 0 && ev.used_after > budget_;
  used_bytes_.store(ev.used_after);
  used_scanned_unix_ms_.store(NowMs());
  return ev;
}

nlohmann::json ToJson(const ProducedFile& f) {
  return {{"path", f.relative}, {"bytes", f.bytes}, {"mtime_unix_ms", f.mtime_unix_ms}};
}

nlohmann::json ToJson(const Eviction& e) {
  return {{"removed", e.removed}, {"errors", e.errors}, {"used_before_bytes", e.used_before},
          {"used_after_bytes", e.used_after}, {"over_budget", e.over_budget}};
}

}  // namespace rankscope::daemon

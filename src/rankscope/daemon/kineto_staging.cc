#include "rankscope/daemon/kineto_staging.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "rankscope/daemon/kineto_config.h"

namespace rankscope::daemon {
namespace {

Status CheckOwn(const DirHandle& dir) {
  RANKSCOPE_ASSIGN_OR_RETURN(struct stat st, dir.Stat());
  if (st.st_uid != ::geteuid()) return FailedPrecondition("{} belongs to uid {}", dir.path(), st.st_uid);
  if (st.st_mode & (S_IWGRP | S_IWOTH)) return FailedPrecondition("{} is writable by other users", dir.path());
  return OkStatus();
}

// Opens `path` if it is the daemon's own directory; never follows a symlink at its last step.
StatusOr<DirHandle> OpenChecked(const std::string& path) {
  if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) {
    return IoError("cannot create the Kineto staging directory {}: {}", path, std::strerror(errno));
  }
  const size_t slash = path.find_last_of('/');
  const std::string parent = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  RANKSCOPE_ASSIGN_OR_RETURN(DirHandle up, DirHandle::OpenPath(parent));
  RANKSCOPE_ASSIGN_OR_RETURN(DirHandle dir, up.Child(name));
  RANKSCOPE_RETURN_IF_ERROR(CheckOwn(dir));
  return dir;
}

}  // namespace

StatusOr<std::unique_ptr<KinetoStaging>> KinetoStaging::Open(const std::string& path) {
  auto dir = OpenChecked(path);
  if (!dir.ok()) {
    // Someone else's directory at that name: stage in a fresh one of our own instead.
    std::string templ = path + ".XXXXXX";
    if (::mkdtemp(templ.data()) == nullptr) {
      return IoError("{}; and cannot create {}: {}", dir.status().message(), templ, std::strerror(errno));
    }
    fmt::print(stderr, "rankscoped: Kineto staging: {}; using {} instead\n", dir.status().message(), templ);
    ::chmod(templ.c_str(), 0755);  // fresh from mkdtemp (0700, ours): nothing can be swapped in
    dir = OpenChecked(templ);
    if (!dir.ok()) return dir.status();
  }
  RANKSCOPE_ASSIGN_OR_RETURN(DirHandle tmp, DirHandle::OpenPath("/tmp"));
  return std::unique_ptr<KinetoStaging>(new KinetoStaging(std::move(*dir), std::move(tmp)));
}

std::string KinetoStaging::DirName(const Target& t) { return fmt::format("{}.{}", t.capture_id, t.pid); }

StatusOr<std::string> KinetoStaging::Prepare(const Target& t) const {
  if (::geteuid() != 0 && t.uid != ::geteuid()) {
    return FailedPrecondition("the daemon runs as uid {} and cannot give uid {} a staging directory; run rankscoped as "
                              "root (deploy/rankscoped.service)", ::geteuid(), t.uid);
  }
  RANKSCOPE_ASSIGN_OR_RETURN(DirHandle dir, root_.MakeChild(DirName(t), 0700, /*exclusive=*/true));
  if (::geteuid() == 0 && t.uid != 0) RANKSCOPE_RETURN_IF_ERROR(dir.SetOwner(t.uid, t.gid));
  RANKSCOPE_RETURN_IF_ERROR(dir.SetMode(0700));
  return fmt::format("{}/{}/{}.json", root_.path(), DirName(t), t.base_name);
}

std::string KinetoStaging::ExpectedPath(const Target& t) const {
  return KinetoOutputPath(fmt::format("{}/{}/{}.json", root_.path(), DirName(t), t.base_name), t.pid);
}

StatusOr<std::optional<KinetoStaging::Found>> KinetoStaging::Find(const Target& t, int64_t since_unix_ms) const {
  RANKSCOPE_ASSIGN_OR_RETURN(DirHandle dir, root_.Child(DirName(t)));
  const std::string expected = fmt::format("{}_{}.json", t.base_name, t.pid);
  Found f;
  auto fd = dir.OpenOwnedFile(expected, t.uid);
  if (fd.ok()) {
    f.path = dir.path() + "/" + expected;
  } else if (fd.status().code() != StatusCode::kNotFound) {
    return fd.status();
  } else {
    const std::string fallback = fmt::format("libkineto_activities_{}.json", t.pid);
    fd = tmp_.OpenOwnedFile(fallback, t.uid);
    if (!fd.ok()) {
      // Kineto writes <name>.tmp and renames it: until then, nothing is there. A file of
      // another owner at the fallback name is someone else's: not ours to take or report.
      return std::optional<Found>();
    }
    struct stat st {};
    ::fstat(fd->get(), &st);
    const int64_t mtime_ms = int64_t{st.st_mtim.tv_sec} * 1000 + st.st_mtim.tv_nsec / 1'000'000;
    if (mtime_ms < since_unix_ms) return std::optional<Found>();  // an older run's
    f.path = "/tmp/" + fallback;
    f.fallback = true;
  }
  f.fd = std::move(*fd);
  struct stat st {};
  ::fstat(f.fd.get(), &st);
  f.dev = st.st_dev;
  f.ino = st.st_ino;
  return std::optional<Found>(std::move(f));
}

void KinetoStaging::Discard(const Target& t, const Found* found) const {
  (void)root_.RemoveTree(DirName(t));
  if (found && found->fallback) {
    // Remove the name only if it is still the file that was read (not something swapped in).
    const std::string name = found->path.substr(5);
    auto st = tmp_.StatEntry(name);
    if (st.ok() && st->st_dev == found->dev && st->st_ino == found->ino) (void)tmp_.RemoveFile(name);
  }
}

}  // namespace rankscope::daemon

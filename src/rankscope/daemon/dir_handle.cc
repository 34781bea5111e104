#include "rankscope/daemon/dir_handle.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <random>

namespace rankscope::daemon {
namespace {

constexpr int kMaxRemoveDepth = 32;

std::string Join(const std::string& dir, std::string_view name) { return dir + "/" + std::string(name); }

Status CheckName(std::string_view name) {
  if (!IsPlainName(name)) return InvalidArgument("'{}' is not a single file name", name);
  return OkStatus();
}

Status WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return IoError("write: {}", std::strerror(errno));
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return OkStatus();
}

// A name nobody can have planted in advance: the daemon's pid, a counter and 64 random bits.
std::string TemporaryName(std::string_view name) {
  static std::atomic<uint64_t> counter{0};
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  return fmt::format(".{}.{}-{}-{:016x}.tmp", name.substr(0, 100), ::getpid(), counter.fetch_add(1), rng());
}

// The entries of an open directory, without "." and "..". Reads through a duplicate so that
// closedir() leaves `fd` open.
std::vector<std::string> ReadNames(int fd) {
  std::vector<std::string> names;
  const int dup = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (dup < 0) return names;
  DIR* d = ::fdopendir(dup);
  if (!d) {
    ::close(dup);
    return names;
  }
  ::rewinddir(d);
  while (const dirent* e = ::readdir(d)) {
    const std::string_view n = e->d_name;
    if (n != "." && n != "..") names.emplace_back(n);
  }
  ::closedir(d);
  return names;
}

Status RemoveTreeAt(int parent, std::string_view name, dev_t device, int depth, const std::string& where) {
  const std::string n(name);
  struct stat st {};
  if (::fstatat(parent, n.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return OkStatus();
    return IoError("{}: {}", Join(where, name), std::strerror(errno));
  }
  if (!S_ISDIR(st.st_mode)) {
    // A file, a symlink (removed itself, never its target), a FIFO, ...
    if (::unlinkat(parent, n.c_str(), 0) != 0 && errno != ENOENT) {
      return IoError("remove {}: {}", Join(where, name), std::strerror(errno));
    }
    return OkStatus();
  }
  if (st.st_dev != device) return FailedPrecondition("{} is on another file system: not removed", Join(where, name));
  if (depth >= kMaxRemoveDepth) return FailedPrecondition("{} is nested too deeply: not removed", Join(where, name));
  UniqueFd fd(::openat(parent, n.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) return IoError("open {}: {}", Join(where, name), std::strerror(errno));
  for (const std::string& child : ReadNames(fd.get())) {
    RANKSCOPE_RETURN_IF_ERROR(RemoveTreeAt(fd.get(), child, device, depth + 1, Join(where, name)));
  }
  if (::unlinkat(parent, n.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) {
    return IoError("remove {}: {}", Join(where, name), std::strerror(errno));
  }
  return OkStatus();
}

void WalkAt(int fd, const std::string& prefix, dev_t device, int depth, int max_depth,
            const std::function<bool(const WalkEntry&)>& visit) {
  for (const std::string& name : ReadNames(fd)) {
    WalkEntry e;
    if (::fstatat(fd, name.c_str(), &e.st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    e.relative = prefix.empty() ? name : prefix + "/" + name;
    const bool descend = visit(e);
    if (!descend || !S_ISDIR(e.st.st_mode) || e.st.st_dev != device || depth + 1 >= max_depth) continue;
    UniqueFd child(::openat(fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (child.valid()) WalkAt(child.get(), e.relative, device, depth + 1, max_depth, visit);
  }
}

}  // namespace

bool IsPlainName(std::string_view name) {
  return !name.empty() && name.size() <= 255 && name != "." && name != ".." &&
         name.find('/') == std::string_view::npos && name.find('\0') == std::string_view::npos;
}

StatusOr<DirHandle> DirHandle::OpenPath(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) return IoError("cannot open the directory {}: {}", path, std::strerror(errno));
  return DirHandle(std::move(fd), path);
}

StatusOr<DirHandle> DirHandle::Child(std::string_view name) const {
  RANKSCOPE_RETURN_IF_ERROR(CheckName(name));
  const std::string n(name);
  UniqueFd fd(::openat(fd_.get(), n.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) {
    const int err = errno;
    if (err == ENOENT) return NotFound("{} does not exist", Join(path_, name));
    if (err == ELOOP || err == ENOTDIR) return FailedPrecondition("{} is not a directory (a symlink?): refused", Join(path_, name));
    return IoError("open {}: {}", Join(path_, name), std::strerror(err));
  }
  return DirHandle(std::move(fd), Join(path_, name));
}

StatusOr<DirHandle> DirHandle::MakeChild(std::string_view name, mode_t mode, bool exclusive) const {
  RANKSCOPE_RETURN_IF_ERROR(CheckName(name));
  const std::string n(name);
  if (::mkdirat(fd_.get(), n.c_str(), mode) != 0) {
    const int err = errno;
    if (err != EEXIST) return IoError("mkdir {}: {}", Join(path_, name), std::strerror(err));
    if (exclusive) return FailedPrecondition("{} already exists", Join(path_, name));
  }
  return Child(name);
}

StatusOr<struct stat> DirHandle::Stat() const {
  struct stat st {};
  if (::fstat(fd_.get(), &st) != 0) return IoError("stat {}: {}", path_, std::strerror(errno));
  return st;
}

StatusOr<struct stat> DirHandle::StatEntry(std::string_view name) const {
  RANKSCOPE_RETURN_IF_ERROR(CheckName(name));
  struct stat st {};
  if (::fstatat(fd_.get(), std::string(name).c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return NotFound("{} does not exist", Join(path_, name));
    return IoError("stat {}: {}", Join(path_, name), std::strerror(errno));
  }
  return st;
}

Status DirHandle::SetOwner(uid_t uid, gid_t gid) const {
  if (::fchown(fd_.get(), uid, gid) != 0) return IoError("chown {} to {}:{}: {}", path_, uid, gid, std::strerror(errno));
  return OkStatus();
}

Status DirHandle::SetMode(mode_t mode) const {
  if (::fchmod(fd_.get(), mode) != 0) return IoError("chmod {}: {}", path_, std::strerror(errno));
  return OkStatus();
}

Status DirHandle::WriteFile(std::string_view name, const std::function<Status(int fd)>& write,
                            const FileOwner& owner) const {
  RANKSCOPE_RETURN_IF_ERROR(CheckName(name));
  const std::string tmp = TemporaryName(name);
  UniqueFd fd(::openat(fd_.get(), tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd.valid()) return IoError("cannot create {}: {}", Join(path_, tmp), std::strerror(errno));
  Status s = write(fd.get());
  // Owner and mode are set on the descriptor: nothing can be swapped in between.
  if (s.ok() && ::geteuid() == 0 && (owner.uid != 0 || owner.gid != 0) && ::fchown(fd.get(), owner.uid, owner.gid) != 0) {
    s = IoError("chown {}: {}", Join(path_, tmp), std::strerror(errno));
  }
  if (s.ok() && ::fchmod(fd.get(), owner.mode) != 0) s = IoError("chmod {}: {}", Join(path_, tmp), std::strerror(errno));
  fd.Reset();
  if (s.ok() && ::renameat(fd_.get(), tmp.c_str(), fd_.get(), std::string(name).c_str()) != 0) {
    s = IoError("rename {} -> {}: {}", tmp, Join(path_, name), std::strerror(errno));
  }
  if (!s.ok()) ::unlinkat(fd_.get(), tmp.c_str(), 0);
  return s;
}

Status DirHandle::WriteFile(std::string_view name, std::string_view content, const FileOwner& owner) const {
  return WriteFile(name, [&](int fd) { return WriteAll(fd, content); }, owner);
}

StatusOr<UniqueFd> DirHandle::OpenOwnedFile(std::string_view name, uid_t owner) const {
  RANKSCOPE_RETURN_IF_ERROR(CheckName(name));
  // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below anyway.
  UniqueFd fd(::openat(fd_.get(), std::string(name).c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd.valid()) {
    const int err = errno;
    if (err == ENOENT) return NotFound("{} does not exist", Join(path_, name));
    if (err == ELOOP) return FailedPrecondition("{} is a symlink: refused", Join(path_, name));
    return IoError("open {}: {}", Join(path_, name), std::strerror(err));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return IoError("stat {}: {}", Join(path_, name), std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return FailedPrecondition("{} is not a regular file: refused", Join(path_, name));
  if (st.st_uid != owner) {
    return FailedPrecondition("{} belongs to uid {}, not to the process's uid {}: refused", Join(path_, name), st.st_uid, owner);
  }
  if (st.st_nlink != 1) return FailedPrecondition("{} has {} hard links: refused", Join(path_, name), st.st_nlink);
  ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) & ~O_NONBLOCK);
  return fd;
}

Status DirHandle::RemoveFile(std::string_view name) const {
  RANKSCOPE_RETURN_IF_ERROR(CheckName(name));
  if (::unlinkat(fd_.get(), std::string(name).c_str(), 0) != 0 && errno != ENOENT) {
    return IoError("remove {}: {}", Join(path_, name), std::strerror(errno));
  }
  return OkStatus();
}

Status DirHandle::RemoveTree(std::string_view name) const {
  RANKSCOPE_RETURN_IF_ERROR(CheckName(name));
  RANKSCOPE_ASSIGN_OR_RETURN(struct stat self, Stat());
  return RemoveTreeAt(fd_.get(), name, self.st_dev, 0, path_);
}

void DirHandle::Walk(const std::function<bool(const WalkEntry&)>& visit, int max_depth) const {
  auto self = Stat();
  if (!self.ok()) return;
  WalkAt(fd_.get(), "", self->st_dev, 0, max_depth, visit);
}

std::string DirHandle::RealPath() const {
  char buf[4096];
  const std::string link = fmt::format("/proc/self/fd/{}", fd_.get());
  const ssize_t n = ::readlink(link.c_str(), buf, sizeof(buf));
  if (n <= 0 || static_cast<size_t>(n) >= sizeof(buf)) return "";
  return std::string(buf, static_cast<size_t>(n));
}

}  // namespace rankscope::daemon

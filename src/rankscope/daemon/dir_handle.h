// A directory opened once, and every file operation below it made relative to its descriptor
// (openat, mkdirat, renameat, unlinkat), never following a symbolic link and never crossing a
// mount point. The daemon runs as root and writes into directories that training processes of
// other users can also write to: a path string resolved again later could lead anywhere by then
// (a planted symlink, a renamed directory); a descriptor cannot.
//
// Names passed to these functions are single path components: no '/', not "." or "..".
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <functional>
#include <string>
#include <string_view>

#include "rankscope/base/status.h"
#include "rankscope/daemon/unique_fd.h"

namespace rankscope::daemon {

// True for a single, non-empty path component other than "." and "..".
bool IsPlainName(std::string_view name);

// Who a file the daemon creates belongs to, and its mode.
struct FileOwner {
  uid_t uid = 0;
  gid_t gid = 0;
  mode_t mode = 0644;
};

// One entry met by DirHandle::Walk: its path relative to the walked directory and its lstat.
struct WalkEntry {
  std::string relative;
  struct stat st {};
};

class DirHandle {
 public:
  DirHandle() = default;

  // Opens a directory the operator named (trusted: symlinks in it are followed, once).
  static StatusOr<DirHandle> OpenPath(const std::string& path);

  // The child directory `name`, refusing a symlink (ELOOP) or anything but a directory.
  StatusOr<DirHandle> Child(std::string_view name) const;
  // Creates the child directory (mode & ~umask) and opens it. With `exclusive`, an existing
  // entry of that name is an error; otherwise an existing directory is opened.
  StatusOr<DirHandle> MakeChild(std::string_view name, mode_t mode, bool exclusive) const;

  StatusOr<struct stat> Stat() const;
  // lstat of an entry: a symlink is reported as one, never followed.
  StatusOr<struct stat> StatEntry(std::string_view name) const;
  Status SetOwner(uid_t uid, gid_t gid) const;
  Status SetMode(mode_t mode) const;

  // Writes `name` atomically: a new temporary file (O_CREAT | O_EXCL | O_NOFOLLOW, so a planted
  // file or symlink of that name is never opened), then renameat over `name` (which replaces
  // a symlink there rather than following it). `write` fills the open descriptor.
  Status WriteFile(std::string_view name, const std::function<Status(int fd)>& write, const FileOwner& owner) const;
  Status WriteFile(std::string_view name, std::string_view content, const FileOwner& owner) const;

  // Opens `name` for reading only if it is a regular file (not a symlink, FIFO, device or
  // directory) owned by `owner` with a single link (not a hard link to someone else's file).
  StatusOr<UniqueFd> OpenOwnedFile(std::string_view name, uid_t owner) const;

  Status RemoveFile(std::string_view name) const;
  // Removes the directory `name` and everything in it, descending only through descriptors
  // opened with O_NOFOLLOW on the same file system, never deeper than 32 levels.
  Status RemoveTree(std::string_view name) const;

  // Every entry below this directory (lstat, symlinks not followed, same file system), depth
  // first; `visit` returns false to skip descending into a directory.
  void Walk(const std::function<bool(const WalkEntry&)>& visit, int max_depth = 16) const;

  int fd() const { return fd_.get(); }
  bool valid() const { return fd_.valid(); }
  // The path this handle was reached by (for messages).
  const std::string& path() const { return path_; }
  // Where the directory is now, as the kernel sees it (/proc/self/fd), or "" if unknown.
  std::string RealPath() const;

 private:
  DirHandle(UniqueFd fd, std::string path) : fd_(std::move(fd)), path_(std::move(path)) {}

  UniqueFd fd_;
  std::string path_;
};

}  // namespace rankscope::daemon

// Where Kineto clients write their traces before the daemon compresses them into the output
// directory. Recent Kineto accepts on-demand trace paths only under /tmp, so this is a directory
// there, created and owned by the daemon and writable by nobody else, with one subdirectory per
// target process that the daemon creates for that process's user (the kernel's uid, mode 0700):
// the process can write its trace there, and no other user can see, replace or plant anything.
// The finished trace is read through a descriptor that refuses symlinks, FIFOs, hard links and
// files of any other owner, so the daemon never reads a file on someone's behalf that they
// could not read themselves.
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>

#include "rankscope/base/status.h"
#include "rankscope/daemon/dir_handle.h"

namespace rankscope::daemon {

class KinetoStaging {
 public:
  // Opens (creating) the staging root. When `path` exists but is not the daemon's own (another
  // user created it first, or it is writable by others), a fresh <path>.XXXXXX is made instead.
  static StatusOr<std::unique_ptr<KinetoStaging>> Open(const std::string& path);
  const std::string& path() const { return root_.path(); }

  struct Target {
    std::string capture_id;
    int32_t pid = 0;
    uid_t uid = 0;
    gid_t gid = 0;
    std::string base_name;  // rank<R> or pid<P>
  };
  // Creates the target's directory; returns the ACTIVITIES_LOG_FILE to hand to Kineto.
  StatusOr<std::string> Prepare(const Target& t) const;
  // The file Kineto will write for that log file (it inserts "_<pid>").
  std::string ExpectedPath(const Target& t) const;

  // The target's finished trace, if Kineto has written it: at the requested path, or at
  // Kineto's own fallback /tmp/libkineto_activities_<pid>.json (written since `since_unix_ms`).
  struct Found {
    UniqueFd fd;
    std::string path;
    bool fallback = false;
    dev_t dev = 0;
    ino_t ino = 0;
  };
  // nullopt: not there yet. An error: something is there that must not be read (and why).
  StatusOr<std::optional<Found>> Find(const Target& t, int64_t since_unix_ms) const;
  // Removes what was staged for `t`: its directory, and the fallback file it was read from.
  void Discard(const Target& t, const Found* found) const;

 private:
  KinetoStaging(DirHandle root, DirHandle tmp) : root_(std::move(root)), tmp_(std::move(tmp)) {}
  static std::string DirName(const Target& t);

  DirHandle root_;
  DirHandle tmp_;  // /tmp, for Kineto's fallback file
};

}  // namespace rankscope::daemon

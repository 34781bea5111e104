// The one directory the daemon writes to (and lets training processes write to):
//   <root>/<job>/<capture-id>/rank<R>.pt.trace.json.gz | rank<R>.stacks.txt | capture.manifest
//
// Ownership: the root and every <job> directory belong to the daemon and are writable by nobody
// else; a <capture-id> directory belongs to the user the kernel reported for the capture's
// processes (never to a uid a client claims), so that their collectors can write their files
// there. Every operation goes through descriptors (DirHandle): a symlink or a renamed directory
// planted by that user is refused, never followed. Request fields only ever become single,
// validated path components (IsSafeName).
//
// A disk budget evicts whole capture directories, the least recently changed first, never one
// that is still being written or was just written.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rankscope/base/status.h"
#include "rankscope/daemon/dir_handle.h"

namespace rankscope::daemon {

struct ProducedFile {
  std::string relative;   // to the root
  uint64_t bytes = 0;
  int64_t mtime_unix_ms = 0;
};

struct FileListing {
  std::vector<ProducedFile> files;  // regular files only (lstat), oldest first
  size_t total = 0;                 // regular files under the root; `files` holds the newest
  uint64_t bytes = 0;               // their total size
};

// What one budget pass did.
struct Eviction {
  std::vector<std::string> removed;  // "<job>/<capture-id>", least recently changed first
  std::vector<std::string> errors;   // directories that could not be removed, and why
  uint64_t used_before = 0, used_after = 0;
  bool over_budget = false;          // still above it: what is left is kept on purpose
};

class OutputDir {
 public:
  // The root is made absolute and created if missing (mode 0755). It must belong to the
  // daemon's user and be writable by nobody else.
  static StatusOr<std::unique_ptr<OutputDir>> Open(const std::string& root, uint64_t budget_bytes);

  const std::filesystem::path& root() const { return root_; }
  uint64_t budget_bytes() const { return budget_; }

  // Creates <root>/<job> (the daemon's) and a new <root>/<job>/<id> owned by `owner` (mode
  // 0755). Both names must be safe; an existing capture directory is an error.
  StatusOr<std::filesystem::path> MakeCaptureDir(const std::string& job, const std::string& id, const FileOwner& owner);
  // Opens an existing capture directory, refusing a symlink at either level.
  StatusOr<DirHandle> OpenCaptureDir(const std::string& job, const std::string& id) const;
  // Is `path` (absolute, normalized) inside the root, lexically?
  bool Contains(const std::filesystem::path& path) const;

  // Regular files under the root (symlinks are neither followed nor listed); the newest
  // `limit` of them, oldest first. Also refreshes UsedBytes().
  FileListing List(size_t limit = SIZE_MAX) const;
  // Bytes of regular files under the root as of the last scan (List, EnforceBudget, Rescan):
  // cheap, so that /v1/status stays fast with 100k files.
  uint64_t UsedBytes() const { return used_bytes_.load(); }
  int64_t used_scanned_unix_ms() const { return used_scanned_unix_ms_.load(); }
  void Rescan() const { (void)List(0); }

  // Deletes the least recently changed capture directories until usage <= budget; never one
  // named in `keep` ("<job>/<id>"). Removal goes through descriptors and is checked to stay
  // under the root.
  Eviction EnforceBudget(const std::set<std::string>& keep);

 private:
  OutputDir(std::filesystem::path root, DirHandle handle, uint64_t budget)
      : root_(std::move(root)), handle_(std::move(handle)), budget_(budget) {}
  Status RemoveCapture(const std::string& job, const std::string& id) const;

  std::filesystem::path root_;
  DirHandle handle_;
  uint64_t budget_ = 0;
  std::mutex evict_mu_;
  mutable std::atomic<uint64_t> used_bytes_{0};
  mutable std::atomic<int64_t> used_scanned_unix_ms_{0};
};

nlohmann::json ToJson(const ProducedFile& f);
nlohmann::json ToJson(const Eviction& e);

}  // namespace rankscope::daemon

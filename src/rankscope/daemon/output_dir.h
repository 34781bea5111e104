// The one directory the daemon writes to (and lets training processes write to):
//   <root>/<job>/<capture-id>/rank<R>.pt.trace.json.gz | rank<R>.stacks.txt | capture.manifest
// Request fields only ever become single, validated path components (IsSafeName), so nothing
// from a request can reach outside the root. A disk budget evicts whole capture directories,
// oldest first.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rankscope/base/status.h"

namespace rankscope::daemon {

struct ProducedFile {
  std::string relative;   // to the root
  uint64_t bytes = 0;
  int64_t mtime_unix_ms = 0;
};

class OutputDir {
 public:
  // The root is made absolute and created if missing.
  static StatusOr<OutputDir> Open(const std::string& root, uint64_t budget_bytes);

  const std::filesystem::path& root() const { return root_; }
  uint64_t budget_bytes() const { return budget_; }

  // <root>/<job>/<id>, created (mode 0777 & ~umask, then chowned to `owner` when running as
  // root so that the training process can write there). Both names must be safe.
  StatusOr<std::filesystem::path> MakeCaptureDir(const std::string& job, const std::string& id, uid_t owner);
  // Is `path` (absolute, normalized) inside the root?
  bool Contains(const std::filesystem::path& path) const;

  // Every regular file under the root, oldest first; skips the staging area.
  std::vector<ProducedFile> List() const;
  uint64_t UsedBytes() const;
  // Deletes the oldest capture directories until usage <= budget; never one in `keep`.
  // Returns the relative paths of the removed directories.
  std::vector<std::string> EnforceBudget(const std::set<std::filesystem::path>& keep);

 private:
  OutputDir(std::filesystem::path root, uint64_t budget) : root_(std::move(root)), budget_(budget) {}
  std::filesystem::path root_;
  uint64_t budget_ = 0;
};

nlohmann::json ToJson(const ProducedFile& f);

}  // namespace rankscope::daemon

#include "rankscope/daemon/output_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include <algorithm>
#include <chrono>
#include <map>

#include "rankscope/daemon/capture_spec.h"

namespace fs = std::filesystem;

namespace rankscope::daemon {
namespace {

int64_t MtimeMs(const fs::directory_entry& e) {
  // std::chrono::clock_cast is missing from GCC 12's library: ask stat() directly.
  struct stat st {};
  if (::stat(e.path().c_str(), &st) != 0) return 0;
  return int64_t{st.st_mtim.tv_sec} * 1000 + st.st_mtim.tv_nsec / 1'000'000;
}

Status MakeDir(const fs::path& dir, uid_t owner) {
  std::error_code ec;
  if (fs::is_directory(dir, ec)) return OkStatus();
  if (!fs::create_directory(dir, ec) && ec) return IoError("mkdir {}: {}", dir.string(), ec.message());
  if (::geteuid() == 0 && owner != 0) {
    // The daemon runs as root under systemd; the training job usually does not.
    if (::chown(dir.c_str(), owner, static_cast<gid_t>(-1)) != 0) {
      return IoError("chown {} to uid {}: {}", dir.string(), owner, std::strerror(errno));
    }
  }
  return OkStatus();
}

}  // namespace

StatusOr<OutputDir> OutputDir::Open(const std::string& root, uint64_t budget_bytes) {
  std::error_code ec;
  fs::path abs = fs::absolute(root, ec).lexically_normal();
  if (ec) return InvalidArgument("output directory {}: {}", root, ec.message());
  fs::create_directories(abs, ec);
  if (ec) return IoError("cannot create the output directory {}: {}", abs.string(), ec.message());
  // Canonical form so that Contains() compares like with like (symlinked /tmp etc.).
  abs = fs::canonical(abs, ec);
  if (ec) return IoError("output directory {}: {}", root, ec.message());
  return OutputDir(abs, budget_bytes);
}

StatusOr<fs::path> OutputDir::MakeCaptureDir(const std::string& job, const std::string& id, uid_t owner) {
  if (!IsSafeName(job)) return InvalidArgument("job '{}' is not a safe directory name", job);
  if (!IsSafeName(id)) return InvalidArgument("capture id '{}' is not a safe directory name", id);
  RANKSCOPE_RETURN_IF_ERROR(MakeDir(root_ / job, owner));
  const fs::path dir = root_ / job / id;
  RANKSCOPE_RETURN_IF_ERROR(MakeDir(dir, owner));
  return dir;
}

bool OutputDir::Contains(const fs::path& path) const {
  const fs::path norm = path.lexically_normal();
  auto rel = norm.lexically_relative(root_);
  return !rel.empty() && *rel.begin() != ".." && norm.is_absolute();
}

std::vector<ProducedFile> OutputDir::List() const {
  std::vector<ProducedFile> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root_, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    ProducedFile f;
    f.relative = fs::relative(it->path(), root_, ec).string();
    f.bytes = it->file_size(ec);
    f.mtime_unix_ms = MtimeMs(*it);
    files.push_back(std::move(f));
  }
  std::sort(files.begin(), files.end(), [](const ProducedFile& a, const ProducedFile& b) {
    return a.mtime_unix_ms != b.mtime_unix_ms ? a.mtime_unix_ms < b.mtime_unix_ms : a.relative < b.relative;
  });
  return files;
}

uint64_t OutputDir::UsedBytes() const {
  uint64_t total = 0;
  for (const auto& f : List()) total += f.bytes;
  return total;
}

std::vector<std::string> OutputDir::EnforceBudget(const std::set<fs::path>& keep) {
  std::vector<std::string> removed;
  if (budget_ == 0) return removed;
  // Group files by capture directory (<job>/<id>): a capture is evicted whole, never half.
  struct Group { uint64_t bytes = 0; int64_t newest = 0; };
  std::map<fs::path, Group> groups;
  uint64_t used = 0;
  for (const auto& f : List()) {
    fs::path rel(f.relative);
    auto it = rel.begin();
    fs::path key = *it;
    if (++it != rel.end() && std::next(it) != rel.end()) key /= *it;
    Group& g = groups[key];
    g.bytes += f.bytes;
    g.newest = std::max(g.newest, f.mtime_unix_ms);
    used += f.bytes;
  }
  std::vector<std::pair<int64_t, fs::path>> order;
  for (const auto& [key, g] : groups) order.emplace_back(g.newest, key);
  std::sort(order.begin(), order.end());
  for (const auto& [mtime, key] : order) {
    if (used <= budget_) break;
    if (keep.count(root_ / key)) continue;
    std::error_code ec;
    fs::remove_all(root_ / key, ec);
    if (!ec) {
      used -= groups[key].bytes;
      removed.push_back(key.string());
    }
  }
  return removed;
}

nlohmann::json ToJson(const ProducedFile& f) {
  return {{"path", f.relative}, {"bytes", f.bytes}, {"mtime_unix_ms", f.mtime_unix_ms}};
}

}  // namespace rankscope::daemon

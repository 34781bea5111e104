#include "rankscope/web/job_catalog.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <mutex>
#include <set>

#include "rankscope/base/hash.h"

namespace rankscope::web {
namespace fs = std::filesystem;
namespace {

bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool IsTraceName(const std::string& name) { return EndsWith(name, ".json") || EndsWith(name, ".json.gz"); }

// The files of a stack snapshot (docs/hang.md): rank<R>.stacks.txt, rank<R>.flightrecorder.
bool IsSnapshotName(const std::string& name) {
  return name.rfind("rank", 0) == 0 && (EndsWith(name, ".stacks.txt") || EndsWith(name, ".flightrecorder"));
}

std::string IdOf(const fs::path& p) { return fmt::format("{:016x}", HashBytes(p.string())); }

int64_t ModifiedUnixS(const fs::path& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_mtime) : 0;
}

// `p` lies in `root` (both canonical, no symlinks between them by construction).
bool Inside(const fs::path& p, const fs::path& root) {
  const fs::path rel = p.lexically_relative(root);
  return !rel.empty() && *rel.begin() != "..";
}

std::string NameUnder(const fs::path& p, const fs::path& root) {
  if (p == root) return root.filename().string().empty() ? root.string() : root.filename().string();
  return (root.filename() / p.lexically_relative(root)).string();
}

// The daemon's comparison of an automatic capture with its job's baseline (baseline_keeper.h).
constexpr std::string_view kBaselineComparison = "baseline-comparison";

struct Walk {
  std::set<fs::path> capture_dirs;
  std::map<fs::path, fs::path> comparisons;  // capture directory -> its baseline-comparison
  std::map<fs::path, std::vector<fs::path>> snapshot_files;  // stacks and Flight Recorder dumps
  std::map<fs::path, std::vector<fs::path>> traces_by_dir;
  std::vector<std::pair<fs::path, JobKind>> reports;  // report and comparison JSON files
};

void WalkRoot(const fs::path& root, Walk* w, std::vector<std::string>* warnings) {
  std::error_code ec;
  fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec), end;
  if (ec) {
    if (warnings) warnings->push_back(fmt::format("cannot list {}: {}", root.string(), ec.message()));
    return;
  }
  size_t entries = 0;
  for (; it != end; it.increment(ec)) {
    if (ec) {
      if (warnings) warnings->push_back(fmt::format("cannot list below {}: {}", root.string(), ec.message()));
      break;
    }
    if (++entries > JobCatalog::kMaxEntries) {
      if (warnings) warnings->push_back(fmt::format("{}: more than {} entries; the rest is not listed", root.string(), JobCatalog::kMaxEntries));
      break;
    }
    const fs::directory_entry& e = *it;
    if (e.is_symlink(ec)) {  // never followed: it could lead out of the root
      if (e.is_directory(ec)) it.disable_recursion_pending();
      continue;
    }
    if (e.is_directory(ec)) {
      if (it.depth() >= JobCatalog::kMaxDepth) it.disable_recursion_pending();
      continue;
    }
    if (!e.is_regular_file(ec) || !Inside(e.path(), root)) continue;
    const std::string name = e.path().filename().string();
    if (IsSnapshotName(name)) {
      w->snapshot_files[e.path().parent_path()].push_back(e.path());
    } else if (name == "capture.manifest") {
      w->capture_dirs.insert(e.path().parent_path());
    } else if (name == kBaselineComparison) {
      w->comparisons[e.path().parent_path()] = e.path();
    } else if (const JsonDocKind doc = EndsWith(name, ".json") ? JsonDocKindOf(e.path()) : JsonDocKind::kNone;
               doc != JsonDocKind::kNone) {
      w->reports.emplace_back(e.path(), doc == JsonDocKind::kReport ? JobKind::kReport : JobKind::kComparison);
    } else if (IsTraceName(name)) {
      w->traces_by_dir[e.path().parent_path()].push_back(e.path());
    }
  }
}

}  // namespace

std::string_view JobKindName(JobKind k) {
  switch (k) {
    case JobKind::kCapture: return "capture";
    case JobKind::kTraces: return "traces";
    case JobKind::kReport: return "report";
    case JobKind::kSnapshot: return "snapshot";
    case JobKind::kComparison: return "comparison";
  }
  return "traces";
}

JsonDocKind JsonDocKindOf(const fs::path& file) {
  // Classified once per (path, size, time): the catalog is rescanned on every request.
  struct Seen {
    uintmax_t size;
    int64_t modified;
    JsonDocKind kind;
  };
  static std::mutex mu;
  static std::map<std::string, Seen> seen;
  std::error_code ec;
  const uintmax_t size = fs::file_size(file, ec);
  if (ec) return JsonDocKind::kNone;
  const int64_t modified = ModifiedUnixS(file);
  {
    std::lock_guard lock(mu);
    if (auto it = seen.find(file.string()); it != seen.end() && it->second.size == size && it->second.modified == modified) {
      return it->second.kind;
    }
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) return JsonDocKind::kNone;
  auto read = [&](std::streamoff at, size_t n) {
    std::string buf(n, '\0');
    in.clear();
    in.seekg(at);
    in.read(buf.data(), static_cast<std::streamsize>(n));
    buf.resize(static_cast<size_t>(in.gcount()));
    return buf;
  };
  constexpr size_t kHead = 64 << 10, kTail = 1 << 20;
  auto kind_in = [](const std::string& text) {
    if (text.find("\"rankscope.report/") != std::string::npos) return JsonDocKind::kReport;
    if (text.find("\"rankscope.compare/") != std::string::npos) return JsonDocKind::kComparison;
    return JsonDocKind::kNone;
  };
  // A Kineto trace names its events near the start; the report and compare writers put
  // "schema" after "ranks", near the end (only "telemetry" and "warnings" follow it).
  const std::string head = read(0, kHead);
  JsonDocKind kind = kind_in(head);
  if (kind == JsonDocKind::kNone && head.find("\"traceEvents\"") == std::string::npos && size > kHead) {
    const uintmax_t from = size > kTail ? size - kTail : 0;
    kind = kind_in(read(static_cast<std::streamoff>(from), kTail));
  }
  std::lock_guard lock(mu);
  if (seen.size() >= JobCatalog::kMaxEntries) seen.clear();
  seen[file.string()] = {size, modified, kind};
  return kind;
}

StatusOr<JobCatalog> JobCatalog::Open(const std::vector<std::string>& paths) {
  JobCatalog c;
  for (const std::string& p : paths) {
    std::error_code ec;
    fs::path canonical = fs::canonical(p, ec);
    if (ec) return NotFound("{}: {}", p, ec.message());
    if (!fs::is_directory(canonical) && !fs::is_regular_file(canonical)) {
      return InvalidArgument("{} is neither a directory nor a file", p);
    }
    c.given_.push_back(p);
    c.roots_.push_back(std::move(canonical));
  }
  if (c.roots_.empty()) return InvalidArgument("no path to serve");
  return c;
}

std::vector<JobEntry> JobCatalog::Scan(std::vector<std::string>* warnings) const {
  std::vector<JobEntry> jobs;
  std::set<std::string> seen;
  auto add = [&](JobEntry e) {
    if (jobs.size() >= kMaxJobs || !seen.insert(e.id).second) return;
    jobs.push_back(std::move(e));
  };
  for (size_t i = 0; i < roots_.size(); ++i) {
    const fs::path& root = roots_[i];
    if (fs::is_regular_file(root)) {
      const JsonDocKind doc = JsonDocKindOf(root);
      const JobKind kind = doc == JsonDocKind::kReport       ? JobKind::kReport
                           : doc == JsonDocKind::kComparison ? JobKind::kComparison
                                                             : JobKind::kTraces;
      add({IdOf(root), kind, root.filename().string(), given_[i], root.string(), {root.string()}, ModifiedUnixS(root), ""});
      continue;
    }
    Walk w;
    WalkRoot(root, &w, warnings);
    for (const auto& [r, kind] : w.reports) {
      add({IdOf(r), kind, NameUnder(r, root), given_[i], r.string(), {r.string()}, ModifiedUnixS(r), ""});
    }
    // Trace files belong to the innermost capture directory above them, else to their directory.
    std::map<fs::path, std::vector<fs::path>> jobs_files;
    for (auto& [dir, files] : w.traces_by_dir) {
      fs::path owner = dir;
      for (fs::path d = dir; Inside(d, root) || d == root; d = d.parent_path()) {
        if (w.capture_dirs.count(d)) {
          owner = d;
          break;
        }
        if (d == root) break;
      }
      auto& v = jobs_files[owner];
      v.insert(v.end(), files.begin(), files.end());
    }
    // A snapshot directory (it has a capture.manifest too) holds stacks, not traces.
    for (auto& [dir, files] : w.snapshot_files) {
      if (jobs_files.count(dir)) continue;
      std::sort(files.begin(), files.end());
      JobEntry e{IdOf(dir), JobKind::kSnapshot, NameUnder(dir, root), given_[i], dir.string(), {}, ModifiedUnixS(dir), ""};
      for (const fs::path& f : files) {
        e.files.push_back(f.string());
        e.modified_unix_s = std::max(e.modified_unix_s, ModifiedUnixS(f));
      }
      add(std::move(e));
    }
    for (const fs::path& d : w.capture_dirs) {
      if (!w.snapshot_files.count(d)) jobs_files.try_emplace(d);  // a capture without traces yet
    }
    for (auto& [dir, files] : jobs_files) {
      std::sort(files.begin(), files.end());
      JobEntry e{IdOf(dir), w.capture_dirs.count(dir) ? JobKind::kCapture : JobKind::kTraces, NameUnder(dir, root),
                 given_[i], dir.string(), {}, ModifiedUnixS(dir), ""};
      for (const fs::path& f : files) {
        e.files.push_back(f.string());
        e.modified_unix_s = std::max(e.modified_unix_s, ModifiedUnixS(f));
      }
      if (auto c = w.comparisons.find(dir); c != w.comparisons.end() && e.kind == JobKind::kCapture) {
        e.comparison = c->second.string();
      }
      add(std::move(e));
    }
  }
  std::sort(jobs.begin(), jobs.end(), [](const JobEntry& a, const JobEntry& b) {
    return a.root != b.root ? a.root < b.root : a.name < b.name;
  });
  return jobs;
}

std::optional<JobEntry> JobCatalog::Find(const std::string& id) const {
  for (JobEntry& e : Scan()) {
    if (e.id == id) return std::move(e);
  }
  return std::nullopt;
}

}  // namespace rankscope::web

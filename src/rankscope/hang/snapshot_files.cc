#include "rankscope/hang/snapshot_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <set>

#include <nlohmann/json.hpp>

#include "rankscope/base/utf8.h"
#include "rankscope/hang/pickle_reader.h"
#include "rankscope/hang/rank_ranges.h"

namespace rankscope::hang {
namespace {

constexpr size_t kMaxManifestBytes = 16u << 20;
constexpr size_t kMaxFilesPerDir = 100000;
constexpr size_t kMaxTargets = 1 << 20;

using FileKind = SnapshotFileKind;

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool AllDigits(std::string_view s) {
  return !s.empty() && s.size() <= 9 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Reads a regular file through `dirfd` (AT_FDCWD for a path), never following a symbolic link;
// with `owner`, only a file of that user with a single link.
StatusOr<std::string> ReadFileAt(int dirfd, const std::string& name, const std::string& shown, size_t max_bytes,
                                 std::optional<uint32_t> owner) {
  const int fd = ::openat(dirfd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ELOOP) return IoError("{}: a symbolic link; not followed", shown);
    return IoError("{}: {}", shown, std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return IoError("{}: not a regular file", shown);
  }
  if (owner && (st.st_uid != *owner || st.st_nlink != 1)) {
    ::close(fd);
    return FailedPrecondition("{}: not read: it belongs to uid {} with {} links, not to the snapshot's user (uid {}) "
                              "with one", shown, st.st_uid, st.st_nlink, *owner);
  }
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    ::close(fd);
    return OutOfRange("{}: {} bytes, more than the {} MiB such a file can be", shown, st.st_size, max_bytes >> 20);
  }
  std::string data(static_cast<size_t>(st.st_size), '\0');
  size_t got = 0;
  while (got < data.size()) {
    const ssize_t n = ::read(fd, data.data() + got, data.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  data.resize(got);
  return data;
}

struct Reader {
  std::optional<uint32_t> owner;
  SnapshotFiles out;
  std::vector<RankStacks> stacks, workers;
  std::vector<FrDump> dumps;

  // `open_name`: relative to `dirfd` (or a path with AT_FDCWD); `name`: the file's own name.
  // A file named on the command line (`named`) whose name says nothing is read if it is a
  // pickle: PyTorch's dumps can have any prefix (TORCH_FR_DUMP_TEMP_FILE).
  void ReadOne(int dirfd, const std::string& open_name, const std::string& name, const std::string& shown,
               bool named = false) {
    FileKind kind = ClassifySnapshotFile(name);
    if (kind == FileKind::kOther && !named) return;
    const size_t limit = kind == FileKind::kStacks || kind == FileKind::kWorkerStacks ? kMaxStacksFileBytes
                         : kind == FileKind::kManifest ? kMaxManifestBytes
                                                       : kMaxFlightRecorderBytes;
    auto text = ReadFileAt(dirfd, open_name, shown, limit, owner);
    if (!text.ok()) {
      out.problems.push_back({shown, text.status().message()});
      return;
    }
    if (kind == FileKind::kOther) {
      if (!LooksLikePickle(*text)) {
        return out.problems.push_back({shown, "not a stack snapshot (*.stacks.txt), flight-recorder dump "
                                              "(*.flightrecorder, nccl_trace_rank_<R>, a pickle) or capture.manifest"});
      }
      kind = FileKind::kTorchDump;
    }
    switch (kind) {
      case FileKind::kStacks: {
        auto s = ParseStacks(*text, shown);
        if (!s.ok()) return out.problems.push_back({shown, s.status().message()});
        if (s->rank < 0) s->rank = RankFromFileName(name);
        stacks.push_back(std::move(*s));
        break;
      }
      case FileKind::kWorkerStacks: {
        auto s = ParseStacks(*text, shown);
        if (!s.ok()) return out.problems.push_back({shown, s.status().message()});
        s->rank = RankFromFileName(name);  // the rank whose worker it is
        workers.push_back(std::move(*s));
        break;
      }
      case FileKind::kFlightRecorder:
      case FileKind::kTorchDump: {
        auto d = ParseFlightRecorder(*text, shown, RankFromFileName(name));
        if (!d.ok()) return out.problems.push_back({shown, d.status().message()});
        dumps.push_back(std::move(*d));
        break;
      }
      case FileKind::kManifest:
        ReadManifest(*text, shown);
        break;
      case FileKind::kOther:
        break;
    }
  }

  // Every host's manifest adds its ranks' notes (a snapshot gathered from several daemons).
  void ReadManifest(const std::string& text, const std::string& shown) {
    auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return out.problems.push_back({shown, "not a JSON capture manifest"});
    if (out.capture.empty() && j.contains("id") && j["id"].is_string()) out.capture = PrintableUtf8(j["id"].get<std::string>());
    auto targets = j.find("targets");
    if (targets == j.end() || !targets->is_array()) return;
    for (const auto& t : *targets) {
      if (!t.is_object() || !t.contains("rank") || !t["rank"].is_number_integer()) continue;
      TargetNote n;
      if (t.contains("state") && t["state"].is_string()) n.state = PrintableUtf8(t["state"].get<std::string>());
      if (t.contains("detail") && t["detail"].is_string()) n.detail = PrintableUtf8(t["detail"].get<std::string>());
      const int64_t rank = t["rank"].get<int64_t>();
      if (rank >= 0 && out.targets.size() < kMaxTargets) out.targets[rank] = std::move(n);
    }
  }

  void ReadDirectory(const std::string& path) {
    const int dirfd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirfd < 0) return out.problems.push_back({path, std::strerror(errno)});
    ReadOpenDirectory(dirfd, path);
  }

  // Takes `dirfd` over.
  void ReadOpenDirectory(int dirfd, const std::string& path) {
    DIR* dir = ::fdopendir(dirfd);
    if (!dir) {
      ::close(dirfd);
      return out.problems.push_back({path, std::strerror(errno)});
    }
    ::rewinddir(dir);  // a duplicated descriptor shares the position of one read before
    std::vector<std::string> names;
    while (dirent* e = ::readdir(dir)) {
      const std::string name = e->d_name;
      if (name == "." || name == ".." || name.front() == '.') continue;  // .tmp files being written
      if (names.size() >= kMaxFilesPerDir) break;
      names.push_back(name);
    }
    std::sort(names.begin(), names.end());
    // A name is the user's too: shown only printable.
    for (const std::string& name : names) ReadOne(::dirfd(dir), name, name, PrintableUtf8(path + "/" + name));
    ::closedir(dir);
  }

  void Read(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return out.problems.push_back({path, std::strerror(errno)});
    if (S_ISDIR(st.st_mode)) return ReadDirectory(path);
    const size_t slash = path.rfind('/');
    const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
    ReadOne(AT_FDCWD, path, name, PrintableUtf8(path), /*named=*/true);
  }
};

std::string JobOf(const RankStacks& s) { return s.job; }
std::string JobOf(const FrDump& d) { return d.job; }
std::string PathOf(const RankStacks& s) { return s.path; }
std::string PathOf(const FrDump& d) { return d.path; }

template <typename T>
void KeepJob(std::vector<T>* items, const std::string& job) {
  items->erase(std::remove_if(items->begin(), items->end(),
                              [&](const T& t) { return !JobOf(t).empty() && JobOf(t) != job; }),
               items->end());
}

template <typename T>
Status CheckUnique(std::vector<T>* items, std::string_view what) {
  std::sort(items->begin(), items->end(), [](const T& a, const T& b) { return a.rank < b.rank; });
  for (size_t i = 1; i < items->size(); ++i) {
    if ((*items)[i].rank == (*items)[i - 1].rank) {
      return FailedPrecondition("two {} claim rank {}: {} and {} (two snapshots of one job? analyse one snapshot "
                                "directory at a time)", what, (*items)[i].rank, PathOf((*items)[i - 1]),
                                PathOf((*items)[i]));
    }
  }
  return OkStatus();
}

}  // namespace

SnapshotFileKind ClassifySnapshotFile(std::string_view name) {
  if (EndsWith(name, ".stacks.txt")) {
    // rank<R>.worker<K>.stacks.txt
    const std::string_view stem = name.substr(0, name.size() - std::string_view(".stacks.txt").size());
    const size_t dot = stem.find(".worker");
    if (stem.rfind("rank", 0) == 0 && dot != std::string_view::npos && AllDigits(stem.substr(4, dot - 4)) &&
        AllDigits(stem.substr(dot + 7))) {
      return FileKind::kWorkerStacks;
    }
    return FileKind::kStacks;
  }
  if (EndsWith(name, ".flightrecorder")) return FileKind::kFlightRecorder;
  if (name == "capture.manifest" || (name.rfind("capture.", 0) == 0 && EndsWith(name, ".manifest"))) {
    return FileKind::kManifest;
  }
  if (name.rfind("nccl_trace_rank_", 0) == 0 || name.find("fr_trace") != std::string_view::npos) return FileKind::kTorchDump;
  return FileKind::kOther;
}

std::string WorkerStacksFileName(int64_t rank, int64_t k) { return fmt::format("rank{}.worker{}.stacks.txt", rank, k); }

int64_t RankFromFileName(const std::string& name) {
  auto digits_at = [&](size_t pos) -> int64_t {
    size_t end = pos;
    while (end < name.size() && std::isdigit(static_cast<unsigned char>(name[end])) && end - pos < 9) ++end;
    return end == pos ? -1 : std::stoll(name.substr(pos, end - pos));
  };
  if (name.rfind("rank", 0) == 0) return digits_at(4);
  if (name.rfind("pid", 0) == 0) return -1;
  // PyTorch's dumps: <prefix><rank>, e.g. nccl_trace_rank_3
  size_t end = name.size();
  size_t start = end;
  while (start > 0 && std::isdigit(static_cast<unsigned char>(name[start - 1])) && end - start < 9) --start;
  return start == end ? -1 : std::stoll(name.substr(start));
}

namespace {

StatusOr<SnapshotFiles> Finish(Reader& r, const std::string& job, const std::string& what);

}  // namespace

StatusOr<SnapshotFiles> ReadSnapshotFiles(const std::vector<std::string>& paths, const std::string& job) {
  Reader r;
  for (const std::string& p : paths) r.Read(p);
  return Finish(r, job, paths.size() == 1 ? paths[0] : fmt::format("{} paths", paths.size()));
}

StatusOr<SnapshotFiles> ReadSnapshotDirectory(int dirfd, const std::string& shown, const SnapshotReadOptions& options) {
  Reader r;
  r.owner = options.owner;
  const int fd = ::fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
  if (fd < 0) return IoError("{}: {}", shown, std::strerror(errno));
  r.ReadOpenDirectory(fd, shown);
  return Finish(r, options.job, shown);
}

namespace {

// One job, unique ranks, who is missing.
StatusOr<SnapshotFiles> Finish(Reader& r, const std::string& job, const std::string& what) {
  SnapshotFiles& out = r.out;

  // One job at a time: dumps from different jobs cannot be matched.
  std::map<std::string, std::vector<int64_t>> ranks_by_job;
  for (const auto& s : r.stacks) ranks_by_job[s.job].push_back(s.rank);
  for (const auto& d : r.dumps) {
    if (d.from_rankscope) ranks_by_job[d.job].push_back(d.rank);
  }
  ranks_by_job.erase("");
  if (!job.empty()) {
    if (!ranks_by_job.count(job)) {
      std::string jobs;
      for (const auto& [j, ranks] : ranks_by_job) jobs += (jobs.empty() ? "" : ", ") + j;
      return NotFound("no stack snapshot or flight-recorder dump of job '{}' here{}", job,
                      jobs.empty() ? "" : " (jobs found: " + jobs + ")");
    }
    KeepJob(&r.stacks, job);
    KeepJob(&r.dumps, job);
    out.job = job;
  } else if (ranks_by_job.size() > 1) {
    std::string jobs;
    for (const auto& [j, ranks] : ranks_by_job) {
      jobs += fmt::format("{}{} (ranks {})", jobs.empty() ? "" : ", ", j, FormatRankRanges(ranks));
    }
    return FailedPrecondition("these files come from {} different jobs: {}; their collectives cannot be matched. "
                              "Analyse one job at a time (--job JOB)", ranks_by_job.size(), jobs);
  } else if (ranks_by_job.size() == 1) {
    out.job = ranks_by_job.begin()->first;
  }

  // A lone process without a rank (pid<P>.stacks.txt) is rank 0.
  if (r.stacks.size() == 1 && r.stacks[0].rank < 0) r.stacks[0].rank = 0;
  if (r.dumps.size() == 1 && r.dumps[0].rank < 0) r.dumps[0].rank = 0;
  for (const auto& s : r.stacks) {
    if (s.rank < 0) return FailedPrecondition("{}: names no rank, beside other ranks' files", s.path);
  }
  for (const auto& d : r.dumps) {
    if (d.rank < 0) {
      return FailedPrecondition("{}: a flight-recorder dump that names no rank (name it <prefix><rank>, e.g. "
                                "nccl_trace_rank_3)", d.path);
    }
  }
  RANKSCOPE_RETURN_IF_ERROR(CheckUnique(&r.stacks, "stack snapshots"));
  RANKSCOPE_RETURN_IF_ERROR(CheckUnique(&r.dumps, "flight-recorder dumps"));
  if (r.stacks.empty() && r.dumps.empty()) {
    std::string why;
    for (const auto& p : out.problems) why += fmt::format("\n  {}: {}", p.path, p.message);
    return NotFound("no readable stack snapshot (rank<R>.stacks.txt) or flight-recorder dump in {}{}", what, why);
  }

  // The job's size, and who is missing.
  auto world_size = [&](int64_t claimed, const std::string& path) {
    if (claimed <= kMaxWorldSize) return out.world_size = std::max(out.world_size, claimed);
    out.warnings.push_back(fmt::format("{}: a world size of {} is more than {} ranks; ignored", path, claimed,
                                       kMaxWorldSize));
    return out.world_size;
  };
  for (const auto& s : r.stacks) {
    world_size(s.world_size, s.path);
    for (const auto& w : s.warnings) out.warnings.push_back(w);
    if (out.capture.empty()) out.capture = s.capture;
  }
  for (const auto& d : r.dumps) {
    world_size(d.world_size, d.path);
    if (d.skipped_entries) {
      out.warnings.push_back(fmt::format("{}: {} entries without a process group skipped", d.path, d.skipped_entries));
    }
  }
  std::set<int64_t> with_stacks, with_dump;
  for (const auto& s : r.stacks) with_stacks.insert(s.rank);
  for (const auto& d : r.dumps) with_dump.insert(d.rank);
  if (out.world_size > 0) {
    std::vector<int64_t> no_stacks, no_dump;
    for (int64_t rank = 0; rank < out.world_size; ++rank) {
      if (!with_stacks.count(rank)) no_stacks.push_back(rank);
      if (!with_dump.count(rank) && !r.dumps.empty()) no_dump.push_back(rank);
    }
    if (!no_stacks.empty()) {
      out.warnings.push_back(fmt::format("no stack snapshot of rank{} {} (the job has {} ranks)",
                                         no_stacks.size() > 1 ? "s" : "", FormatRankRanges(no_stacks), out.world_size));
    }
    if (!no_dump.empty()) {
      out.warnings.push_back(fmt::format("no flight-recorder dump of rank{} {}: their collectives are unknown",
                                         no_dump.size() > 1 ? "s" : "", FormatRankRanges(no_dump)));
    }
  }
  out.stacks = std::move(r.stacks);
  out.dumps = std::move(r.dumps);
  if (!job.empty()) KeepJob(&r.workers, job);
  std::sort(r.workers.begin(), r.workers.end(), [](const RankStacks& a, const RankStacks& b) {
    return a.rank != b.rank ? a.rank < b.rank : a.path < b.path;
  });
  out.worker_stacks = std::move(r.workers);
  return std::move(out);
}

}  // namespace

}  // namespace rankscope::hang

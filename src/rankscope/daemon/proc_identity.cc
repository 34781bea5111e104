#include "rankscope/daemon/proc_identity.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <optional>
#include <sstream>

#include "rankscope/base/utf8.h"
#include "rankscope/daemon/capture_spec.h"

namespace rankscope::daemon {
namespace {

// At most 1 MiB: a process chooses its own environment and command line, and nothing we need
// from them is longer.
StatusOr<std::string> ReadWhole(const std::string& path, size_t limit = 1 << 20) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot read {}", path);
  std::string out(limit, '\0');
  in.read(out.data(), static_cast<std::streamsize>(limit));
  out.resize(static_cast<size_t>(in.gcount()));
  return out;
}

int32_t ToInt(const std::map<std::string, std::string>& env, const char* key) {
  auto it = env.find(key);
  if (it == env.end()) return -1;
  int32_t v = -1;
  auto [p, ec] = std::from_chars(it->second.data(), it->second.data() + it->second.size(), v);
  return ec == std::errc() ? v : -1;
}

// Field `index` (1-based, as in proc(5)) of /proc/<pid>/stat, from field 3 on: the command name
// (field 2) may contain spaces and parentheses, so fields are counted after the last ')'.
std::string StatField(const std::string& stat, int index) {
  const size_t close = stat.rfind(')');
  if (close == std::string::npos || index < 3) return "";
  std::istringstream s(stat.substr(close + 1));
  std::string field;
  for (int i = 3; i <= index && (s >> field); ++i) {
    if (i == index) return field;
  }
  return "";
}

int32_t ParentPidOf(const std::string& stat) {
  const std::string f = StatField(stat, 4);
  int32_t ppid = -1;
  std::from_chars(f.data(), f.data() + f.size(), ppid);
  return ppid;
}

uint64_t StartTicks(const std::string& stat) {
  const std::string f = StatField(stat, 22);
  uint64_t ticks = 0;
  std::from_chars(f.data(), f.data() + f.size(), ticks);
  return ticks;
}

}  // namespace

StatusOr<std::map<std::string, std::string>> ReadEnvironment(int32_t pid, const std::string& proc_root) {
  RANKSCOPE_ASSIGN_OR_RETURN(std::string raw, ReadWhole(fmt::format("{}/{}/environ", proc_root, pid)));
  std::map<std::string, std::string> env;
  size_t start = 0;
  while (start < raw.size()) {
    size_t end = raw.find('\0', start);
    if (end == std::string::npos) end = raw.size();
    std::string_view kv(raw.data() + start, end - start);
    if (size_t eq = kv.find('='); eq != std::string_view::npos) {
      env.emplace(std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1)));
    }
    start = end + 1;
  }
  return env;
}

std::string JobFromEnvironment(const std::map<std::string, std::string>& env, int32_t pid, int32_t ppid) {
  for (const char* key : {"RANKSCOPE_JOB", "SLURM_JOB_ID", "TORCHELASTIC_RUN_ID"}) {
    auto it = env.find(key);
    if (it != env.end() && !it->second.empty() && it->second != "none") return SanitizeName(it->second);
  }
  if (env.count("RANK") && ppid > 0) return fmt::format("ppid{}", ppid);
  return fmt::format("pid{}", pid);
}

StatusOr<ProcIdentity> ReadProcIdentity(int32_t pid, const std::string& proc_root) {
  RANKSCOPE_ASSIGN_OR_RETURN(auto env, ReadEnvironment(pid, proc_root));
  ProcIdentity id;
  id.rank = ToInt(env, "RANK");
  id.local_rank = ToInt(env, "LOCAL_RANK");
  id.world_size = ToInt(env, "WORLD_SIZE");
  int32_t ppid = -1;
  if (auto stat = ReadWhole(fmt::format("{}/{}/stat", proc_root, pid)); stat.ok()) {
    ppid = ParentPidOf(*stat);
    id.start_ticks = StartTicks(*stat);
  }
  id.job = JobFromEnvironment(env, pid, ppid);
  struct stat st {};
  if (::stat(fmt::format("{}/{}", proc_root, pid).c_str(), &st) == 0) {
    id.uid = st.st_uid;
    id.gid = st.st_gid;
  }
  if (auto cmd = ReadWhole(fmt::format("{}/{}/cmdline", proc_root, pid)); cmd.ok()) {
    std::string command = cmd->substr(0, 200);
    for (char& c : command) c = c == '\0' ? ' ' : c;
    id.command = ClipUtf8(command, 200);  // any bytes: it is written out as JSON
    while (!id.command.empty() && id.command.back() == ' ') id.command.pop_back();
  }
  return id;
}

uint64_t ProcessStartTicks(int32_t pid, const std::string& proc_root) {
  if (pid <= 0) return 0;
  auto stat = ReadWhole(fmt::format("{}/{}/stat", proc_root, pid));
  return stat.ok() ? StartTicks(*stat) : 0;
}

bool ProcessAlive(int32_t pid, uint64_t start_ticks, const std::string& proc_root) {
  const uint64_t now = ProcessStartTicks(pid, proc_root);
  return now != 0 && (start_ticks == 0 || now == start_ticks);
}

}  // namespace rankscope::daemon

namespace rankscope::daemon {

bool ProcessRunsAs(int32_t pid, uint64_t start_ticks, uid_t uid, const std::string& proc_root) {
  if (pid <= 0 || !ProcessAlive(pid, start_ticks, proc_root)) return false;
  auto status = ReadWhole(fmt::format("{}/{}/status", proc_root, pid), 64 << 10);
  if (!status.ok()) return false;
  // The four ids of a "Uid:" or "Gid:" line, all equal to `want` (any one value when nullopt).
  auto all_one = [&](std::string_view key, std::optional<uint64_t> want) {
    const size_t at = status->find(fmt::format("\n{}:", key));
    if (at == std::string::npos) return false;
    const size_t from = at + key.size() + 2;
    std::istringstream line(status->substr(from, status->find('\n', from) - from));
    int fields = 0;
    for (uint64_t id = 0; line >> id; ++fields) {
      if (want && id != *want) return false;
      want = id;
    }
    return fields == 4;
  };
  if (!all_one("Uid", uint64_t{uid}) || !all_one("Gid", std::nullopt)) return false;
  struct stat st {};
  // Not dumpable: the kernel gives the files of /proc/<pid>/ to root (the directory keeps its owner).
  if (::stat(fmt::format("{}/{}/status", proc_root, pid).c_str(), &st) != 0 || st.st_uid != uid) return false;
  // The ids must not have changed while we read: the same process still (pid reuse).
  return ProcessAlive(pid, start_ticks, proc_root);
}

int32_t ParentPid(int32_t pid, const std::string& proc_root) {
  auto stat = ReadWhole(fmt::format("{}/{}/stat", proc_root, pid), 4096);
  return stat.ok() ? std::max(ParentPidOf(*stat), 0) : 0;
}

std::vector<int32_t> ChildProcesses(int32_t pid, size_t max, const std::string& proc_root, size_t max_scanned) {
  std::vector<int32_t> out;
  DIR* dir = ::opendir(proc_root.c_str());
  if (!dir) return out;
  size_t scanned = 0;
  while (dirent* e = ::readdir(dir)) {
    if (++scanned > max_scanned) break;
    int32_t child = 0;
    const std::string_view name = e->d_name;
    if (std::from_chars(name.data(), name.data() + name.size(), child).ec != std::errc() || child <= 0) continue;
    if (ParentPid(child, proc_root) == pid) out.push_back(child);
  }
  ::closedir(dir);
  std::sort(out.begin(), out.end());
  if (out.size() > max) out.resize(max);
  return out;
}

}  // namespace rankscope::daemon

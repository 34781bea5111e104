#include "rankscope/daemon/proc_identity.h"

#include <sys/stat.h>

#include <charconv>
#include <fstream>
#include <sstream>

#include "rankscope/daemon/capture_spec.h"

namespace rankscope::daemon {
namespace {

StatusOr<std::string> ReadWhole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot read {}", path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

int32_t ToInt(const std::map<std::string, std::string>& env, const char* key) {
  auto it = env.find(key);
  if (it == env.end()) return -1;
  int32_t v = -1;
  auto [p, ec] = std::from_chars(it->second.data(), it->second.data() + it->second.size(), v);
  return ec == std::errc() ? v : -1;
}

int32_t ParentPid(const std::string& stat) {
  // "pid (comm) S ppid ...": comm may contain spaces and parentheses, so parse after the last ')'.
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream s(stat.substr(close + 1));
  std::string state;
  int32_t ppid = -1;
  s >> state >> ppid;
  return ppid;
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
  if (auto it = env.find("KINETO_ONDEMAND_TRACE_DIR"); it != env.end()) id.ondemand_trace_dir = it->second;
  int32_t ppid = -1;
  if (auto stat = ReadWhole(fmt::format("{}/{}/stat", proc_root, pid)); stat.ok()) ppid = ParentPid(*stat);
  id.job = JobFromEnvironment(env, pid, ppid);
  struct stat st {};
  if (::stat(fmt::format("{}/{}", proc_root, pid).c_str(), &st) == 0) id.uid = st.st_uid;
  if (auto cmd = ReadWhole(fmt::format("{}/{}/cmdline", proc_root, pid)); cmd.ok()) {
    id.command = cmd->substr(0, 200);
    for (char& c : id.command) c = c == '\0' ? ' ' : c;
    while (!id.command.empty() && id.command.back() == ' ') id.command.pop_back();
  }
  return id;
}

int64_t ProcessStartTicks(int32_t pid, const std::string& proc_root) {
  std::ifstream in(fmt::format("{}/{}/stat", proc_root, pid));
  std::string text;
  if (!std::getline(in, text)) return 0;
  const size_t paren = text.rfind(')');  // the command may contain spaces and parentheses
  if (paren == std::string::npos) return 0;
  std::istringstream fields(text.substr(paren + 2));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i) {
    if (i == 22) return std::atoll(field.c_str());
  }
  return 0;
}

}  // namespace rankscope::daemon

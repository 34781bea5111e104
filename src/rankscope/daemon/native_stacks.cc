#include "rankscope/daemon/native_stacks.h"

#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>

#include "rankscope/daemon/proc_identity.h"

extern char** environ;

namespace rankscope::daemon {
namespace {

// "Thread.run" -> "run", "outer.<locals>.inner" -> "inner": what traceback calls the function.
std::string ShortName(const std::string& qualified) {
  const size_t dot = qualified.rfind('.');
  return dot == std::string::npos || dot + 1 == qualified.size() ? qualified : qualified.substr(dot + 1);
}

std::string OneLine(std::string s) {
  for (char& c : s) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return s;
}

Status NotTheProcess(int32_t pid) {
  return FailedPrecondition("pid {} is no longer the registered process running as its user (it exited, or it exec'd "
                            "a setuid or setgid program, or is not dumpable): its stack is not taken", pid);
}

// In the child between fork and exec (async-signal-safe calls only): become `as` keeping only
// CAP_SYS_PTRACE, as an ambient capability so that it survives the exec. False on any failure:
// the child then exits without running py-spy at all.
bool DropToUserWithPtrace(const RunAs& as) {
  if (::prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) != 0) return false;
  if (::setgroups(0, nullptr) != 0 || ::setresgid(as.gid, as.gid, as.gid) != 0) return false;
  if (::setresuid(as.uid, as.uid, as.uid) != 0) return false;
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  data[0].permitted = data[0].effective = data[0].inheritable = 1u << CAP_SYS_PTRACE;
  if (::syscall(SYS_capset, &header, data) != 0) return false;
  return ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_SYS_PTRACE, 0, 0) == 0;
}

// A binary (ELF), not a script: only a binary can be exec'd through its descriptor by a user who
// cannot reach its path.
bool IsBinary(int fd) {
  char magic[4] = {};
  return ::pread(fd, magic, sizeof(magic), 0) == 4 && std::memcmp(magic, "\x7f" "ELF", 4) == 0;
}

}  // namespace

StatusOr<std::string> PySpyJsonToStacks(const nlohmann::json& threads, const NativeStackHeader& h, int64_t time_unix_ms) {
  if (!threads.is_array()) return DataLoss("py-spy's output is not a list of threads");
  std::string out = "rankscope-stacks 1\n";
  if (h.parent_pid > 0) out += fmt::format("parent_pid: {}\n", h.parent_pid);
  out += fmt::format("pid: {}\nrank: {}\nworld_size: {}\njob: {}\nhost: {}\ncapture: {}\nsteps_completed: {}\n"
                     "step_ms: {:.3f}\ntaken: py-spy dump --native\ntaken_because: {}\ntime_unix_ms: {}\n",
                     h.pid, h.rank, h.world_size, OneLine(h.job), OneLine(h.host), OneLine(h.capture),
                     h.steps_completed, h.step_ms, OneLine(h.because), time_unix_ms);
  if (!h.taken_as.empty()) out += fmt::format("taken_as: {}\n", OneLine(h.taken_as));
  out += fmt::format("threads: {}\norder: most recent call last\n", threads.size());
  // The main thread first, as the collector writes it.
  std::vector<const nlohmann::json*> order;
  for (const auto& t : threads) {
    if (!t.is_object() || !t.contains("frames") || !t["frames"].is_array()) {
      return DataLoss("py-spy's output has a thread without frames");
    }
    const bool main = t.value("os_thread_id", int64_t{-1}) == h.pid;
    order.insert(main ? order.begin() : order.end(), &t);
  }
  for (const nlohmann::json* tp : order) {
    const nlohmann::json& t = *tp;
    const bool main = t.value("os_thread_id", int64_t{-1}) == h.pid;
    const std::string name = t.contains("thread_name") && t["thread_name"].is_string() ? t["thread_name"].get<std::string>() : "?";
    out += fmt::format("\nthread {} \"{}\" {}{}\n", t.value("thread_id", uint64_t{0}), OneLine(name),
                       main ? "main" : "thread", t.value("owns_gil", false) ? " gil" : "");
    const auto& frames = t["frames"];
    for (auto it = frames.rbegin(); it != frames.rend(); ++it) {  // py-spy: innermost first
      const auto& f = *it;
      if (!f.is_object()) continue;
      const std::string fname = f.contains("name") && f["name"].is_string() ? f["name"].get<std::string>() : "?";
      const std::string file = f.contains("filename") && f["filename"].is_string() ? f["filename"].get<std::string>() : "?";
      const bool native = f.contains("module") && f["module"].is_string();
      if (native) {
        const std::string lib = f.contains("short_filename") && f["short_filename"].is_string()
                                    ? f["short_filename"].get<std::string>() : file;
        out += fmt::format("  Native \"{}\", in {}\n", OneLine(lib), OneLine(fname));
      } else {
        out += fmt::format("  File \"{}\", line {}, in {}\n", OneLine(file), f.value("line", int64_t{0}),
                           OneLine(ShortName(fname)));
      }
    }
  }
  return out;
}

std::string FindExecutable(const std::string& spec) {
  if (spec.empty()) return "";
  auto executable = [](const std::string& p) { return ::access(p.c_str(), X_OK) == 0; };
  if (spec.find('/') != std::string::npos) return executable(spec) ? spec : "";
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t pos = 0;
  while (pos <= dirs.size()) {
    const size_t colon = std::min(dirs.find(':', pos), dirs.size());
    const std::string dir = dirs.substr(pos, colon - pos);
    if (!dir.empty() && dir.front() == '/' && executable(dir + "/" + spec)) return dir + "/" + spec;
    pos = colon + 1;
  }
  return "";
}

namespace {

// Starts `py_spy dump --native --json --pid P` with its stdout on `out`, as `as` when the daemon
// is root and py_spy a binary (else as the daemon: said once); `*as_user` says which.
StatusOr<pid_t> StartPySpy(const std::string& py_spy, int32_t target, const RunAs& as, int out, bool* as_user) {
  const int bin = ::open(py_spy.c_str(), O_RDONLY | O_CLOEXEC);
  if (bin < 0) return IoError("cannot open {}: {}", py_spy, std::strerror(errno));
  const bool drop = ::geteuid() == 0 && as.uid != 0;
  *as_user = drop && IsBinary(bin);
  if (drop && !*as_user) {
    static std::once_flag warned;
    std::call_once(warned, [&] {
      fmt::print(stderr, "rankscoped: {} is a script, not py-spy's binary: it runs as root, not as the job's user "
                         "(give --py-spy the binary)\n", py_spy);
    });
  }
  const int devnull = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  const std::string pid = std::to_string(target);
  const char* argv[] = {py_spy.c_str(), "dump", "--native", "--json", "--pid", pid.c_str(), nullptr};
  char* const* args = const_cast<char* const*>(argv);
  const bool user = *as_user;
  const pid_t child = ::fork();
  if (child == 0) {  // only async-signal-safe calls until the exec
    if (::dup2(out, STDOUT_FILENO) < 0 || devnull < 0 || ::dup2(devnull, STDERR_FILENO) < 0) ::_exit(126);
    if (user) {
      if (!DropToUserWithPtrace(as)) ::_exit(126);
      ::syscall(SYS_execveat, bin, "", args, environ, AT_EMPTY_PATH);
    } else {
      ::execve(py_spy.c_str(), args, environ);
    }
    ::_exit(127);
  }
  const int fork_errno = errno;
  ::close(bin);
  if (devnull >= 0) ::close(devnull);
  if (child < 0) return IoError("cannot run {}: {}", py_spy, std::strerror(fork_errno));
  return child;
}

}  // namespace

StatusOr<std::string> TakeNativeStacks(const std::string& py_spy, const NativeStackHeader& header,
                                       std::chrono::seconds timeout, const RunAs& as, size_t max_output) {
  int out_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) return IoError("pipe: {}", std::strerror(errno));
  bool as_user = false;
  const StatusOr<pid_t> started = StartPySpy(py_spy, header.pid, as, out_pipe[1], &as_user);
  ::close(out_pipe[1]);
  if (!started.ok()) {
    ::close(out_pipe[0]);
    return started.status();
  }
  const pid_t child = *started;
  std::string output;
  bool too_big = false, timed_out = false;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  char buf[65536];
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{out_pipe[0], POLLIN, 0};
    const int n = ::poll(&p, 1, static_cast<int>(left.count()));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) continue;
    const ssize_t got = ::read(out_pipe[0], buf, sizeof(buf));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    if (output.size() + got > max_output) {
      too_big = true;
      break;
    }
    output.append(buf, static_cast<size_t>(got));
  }
  ::close(out_pipe[0]);
  if (timed_out || too_big) ::kill(child, SIGKILL);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {}
  if (timed_out) return IoError("py-spy did not finish within {} s", timeout.count());
  if (too_big) return OutOfRange("py-spy printed more than {} MiB", max_output >> 20);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 126) {
    return IoError("py-spy could not be started as uid {} with CAP_SYS_PTRACE (the daemon must run as root)", as.uid);
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return IoError("py-spy failed (exit {}): not allowed to ptrace the process (the daemon must run as root), or the "
                   "process is gone", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  }
  auto threads = nlohmann::json::parse(output, nullptr, false);
  if (threads.is_discarded()) return DataLoss("py-spy's output is not JSON");
  const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch()).count();
  NativeStackHeader h = header;
  h.taken_as = as_user ? fmt::format("uid {} with CAP_SYS_PTRACE", as.uid) : "root";
  return PySpyJsonToStacks(threads, h, now_ms);
}

StatusOr<std::string> TakeStacksOf(const std::string& py_spy, const NativeStackHeader& header, uint64_t start_ticks,
                                   const RunAs& as, std::chrono::seconds timeout) {
  if (!ProcessRunsAs(header.pid, start_ticks, as.uid)) return NotTheProcess(header.pid);
  auto text = TakeNativeStacks(py_spy, header, timeout, as);
  if (!text.ok()) {  // once more: py-spy can miss a process that is busy starting a thread
    if (!ProcessRunsAs(header.pid, start_ticks, as.uid)) return NotTheProcess(header.pid);
    text = TakeNativeStacks(py_spy, header, timeout, as);
  }
  if (text.ok() && !ProcessRunsAs(header.pid, start_ticks, as.uid)) return NotTheProcess(header.pid);
  return text;
}

}  // namespace rankscope::daemon

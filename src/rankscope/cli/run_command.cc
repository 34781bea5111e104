// `rankscope run [options] -- <command ...>`: runs a training command with the zero-code
// collector injected. The work is done by the Python module rankscope.run, run by the Python
// rankscope was installed into (see JobPython); this execs it.
#include <unistd.h>

#include <fmt/format.h>

#include <cstring>
#include <filesystem>

#include "rankscope/cli/commands.h"

namespace rankscope::cli {
namespace {

struct RunOptions {
  std::string socket, out_dir, job;
  bool no_auto_trigger = false;
  std::vector<std::string> command;
};

std::filesystem::path SelfDir() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path() : exe.parent_path();
}

// The rankscope Python package beside a build tree (<repo>/python), for running from a
// checkout; an installed package needs nothing.
std::string PackageDirNearBinary() {
  std::error_code ec;
  for (auto dir = SelfDir(); dir.has_relative_path(); dir = dir.parent_path()) {
    if (std::filesystem::exists(dir / "python/rankscope/run.py", ec)) return (dir / "python").string();
  }
  return "";
}

// The Python rankscope was installed into: pip puts the `rankscope` executable into the scripts
// directory of its environment (a virtual environment's bin/), beside that environment's
// python3. Called by that path, the interpreter finds the environment and the package; the
// system's python3 would not ("No module named 'rankscope'"). RANKSCOPE_PYTHON overrides;
// without either, python3 from PATH.
std::string JobPython() {
  if (const char* env = std::getenv("RANKSCOPE_PYTHON"); env && *env) return env;
  const std::filesystem::path dir = SelfDir();
  for (const char* name : {"python3", "python"}) {
    const std::filesystem::path candidate = dir / name;
    if (!dir.empty() && ::access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return "python3";
}

int RunRun(const RunOptions& opt) {
  if (opt.command.empty()) {
    fmt::print(stderr, "rankscope run: give the command after --, e.g. rankscope run -- torchrun --nproc_per_node=4 train.py\n");
    return 2;
  }
  const std::string python = JobPython();
  if (std::string pkg = PackageDirNearBinary(); !pkg.empty()) {
    const char* old = std::getenv("PYTHONPATH");
    setenv("PYTHONPATH", (old && *old ? pkg + ":" + old : pkg).c_str(), 1);
  }
  std::vector<std::string> args = {python, "-m", "rankscope.run"};
  if (!opt.socket.empty()) args.insert(args.end(), {"--socket", opt.socket});
  if (!opt.out_dir.empty()) args.insert(args.end(), {"--out-dir", opt.out_dir});
  if (!opt.job.empty()) args.insert(args.end(), {"--job", opt.job});
  if (opt.no_auto_trigger) args.push_back("--no-auto-trigger");
  args.push_back("--");
  args.insert(args.end(), opt.command.begin(), opt.command.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  execvp(argv[0], argv.data());
  fmt::print(stderr, "rankscope run: cannot run {}: {} (set RANKSCOPE_PYTHON to the job's Python)\n", python,
             std::strerror(errno));
  return 127;
}

}  // namespace

void RegisterRunCommand(CLI::App& app, int* exit_code) {
  auto opt = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand("run", "Run a training command with the collector injected (no code change)");
  cmd->add_option("--socket", opt->socket, "The daemon's collector socket (@name or path)");
  cmd->add_option("--out-dir", opt->out_dir, "Where traces go when no daemon is reachable");
  cmd->add_option("--job", opt->job, "Job name");
  cmd->add_flag("--no-auto-trigger", opt->no_auto_trigger, "Never trace automatically");
  cmd->add_option("command", opt->command, "The command, after --")->expected(-1);
  cmd->callback([opt, exit_code] { *exit_code = RunRun(*opt); });
}

}  // namespace rankscope::cli

// `rankscope top [--host H ...]`: a live view of the nodes' key metrics, refreshed every
// --interval-s from each daemon's /v1/telemetry (all hosts in parallel). q or Ctrl-C quits;
// --once / --iterations N print that many frames and exit (scripts, tests), --json prints the
// daemons' replies.
#include <poll.h>
#include <signal.h>
#include <termios.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <ctime>
#include <iostream>

#include "rankscope/cli/commands.h"
#include "rankscope/cli/daemon_client.h"
#include "rankscope/telemetry/node_figures.h"

namespace rankscope::cli {
namespace {

struct TopOptions {
  HostOptions hosts;
  bool once = false, json = false;
  int iterations = 0;  // 0: until q
  double interval_s = 1.0;
};

std::atomic<bool> g_stop{false};
void OnSignal(int) { g_stop = true; }

// Puts the terminal in non-canonical, no-echo mode (one key at a time) and restores it.
class RawTerminal {
 public:
  RawTerminal() {
    if (!::isatty(STDIN_FILENO) || ::tcgetattr(STDIN_FILENO, &saved_) != 0) return;
    termios raw = saved_;
    raw.c_lflag &= ~(ICANON | ECHO);
    raw.c_cc[VMIN] = 0;
    raw.c_cc[VTIME] = 0;
    active_ = ::tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
  }
  ~RawTerminal() {
    if (active_) ::tcsetattr(STDIN_FILENO, TCSANOW, &saved_);
  }
  bool active() const { return active_; }

 private:
  termios saved_{};
  bool active_ = false;
};

// Waits up to `seconds` for q (or a signal). True when the user asked to quit.
bool WaitForQuit(double seconds, bool keys) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!g_stop) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{STDIN_FILENO, POLLIN, 0};
    const int n = ::poll(keys ? &p : nullptr, keys ? 1 : 0, static_cast<int>(left.count()));
    if (n > 0 && (p.revents & POLLIN)) {
      char c = 0;
      if (::read(STDIN_FILENO, &c, 1) == 1 && (c == 'q' || c == 'Q' || c == 3)) return true;
    }
  }
  return true;
}

std::string Pct(const telemetry::Figure& f) { return f ? fmt::format("{:5.1f}", *f * 100) : "    -"; }
std::string GiB(const telemetry::Figure& f) { return f ? fmt::format("{:.1f}", *f / double(1ull << 30)) : "-"; }
std::string MBs(const telemetry::Figure& f) { return f ? fmt::format("{:.1f}", *f / 1e6) : "-"; }

void RenderHost(const HostReply& r) {
  if (!r.status.ok()) {
    fmt::print("{:<22} {}\n", r.host.Label(), r.status.message());
    return;
  }
  const telemetry::NodeFigures f = telemetry::NodeFiguresFromJson(r.body);
  fmt::print("{:<22} {} {} {} {} {}  {:>13}  {:>11}  {:>11}  {}\n", r.body.value("host", r.host.Label()).substr(0, 22),
             Pct(f.cpu_busy), Pct(f.cpu_user), Pct(f.cpu_system), Pct(f.cpu_iowait), Pct(f.cpu_steal),
             GiB(f.mem_used) + "/" + GiB(f.mem_total), MBs(f.net_rx) + "/" + MBs(f.net_tx),
             MBs(f.disk_read) + "/" + MBs(f.disk_write), f.gpus.empty() ? "no GPU" : fmt::format("{} GPUs", f.gpus.size()));
  for (const auto& g : f.gpus) {
    fmt::print("  gpu {:<3} {:<20} util {}%  mem {}/{} GiB  {:.0f} W  {:.0f} MHz  {:.0f} C  PCIe {}/{} MB/s  NVLink {}/{} MB/s\n",
               g.device, g.name.substr(0, 20), Pct(g.util), GiB(g.mem_used), GiB(g.mem_total), g.power_w.value_or(0),
               g.sm_hz.value_or(0) / 1e6, g.temp_c.value_or(0), MBs(g.pcie_rx), MBs(g.pcie_tx), MBs(g.nvlink_rx), MBs(g.nvlink_tx));
  }
  for (const auto& p : f.processes) {
    std::string gpu;
    for (const auto& [dev, bytes] : p.gpu_memory) gpu += fmt::format(" gpu{} {:.1f} GiB", dev, bytes / double(1ull << 30));
    fmt::print("  rank {:<4} pid {:<8} cpu {:>5} cores  loader {:>5} cores ({:.0f} procs)  rss {:>6} GiB  threads {:>4}{}  {}\n",
               p.rank, p.pid, p.cpu_cores ? fmt::format("{:.2f}", *p.cpu_cores) : "-",
               p.children_cpu_cores ? fmt::format("{:.2f}", *p.children_cpu_cores) : "-", p.children.value_or(0),
               GiB(p.rss), p.threads ? fmt::format("{:.0f}", *p.threads) : "-", gpu, p.job.substr(0, 24));
  }
}

void Render(const std::vector<HostReply>& replies, bool clear, bool keys) {
  if (clear) fmt::print("\x1b[H\x1b[2J");
  const std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%H:%M:%S", std::localtime(&now));
  fmt::print("rankscope top  {}  {} host{}{}\n", stamp, replies.size(), replies.size() == 1 ? "" : "s",
             keys ? "  (q to quit)" : "");
  fmt::print("{:<22} {:>5} {:>5} {:>5} {:>5} {:>5}  {:>13}  {:>11}  {:>11}  {}\n", "HOST", "CPU%", "USR", "SYS", "IOW", "STL",
             "MEM GiB", "NET MB/s", "DISK MB/s", "GPUs");
  for (const auto& r : replies) RenderHost(r);
  std::fflush(stdout);
}

int RunTop(const TopOptions& opt) {
  auto client = DaemonClient::FromOptions(opt.hosts);
  if (!client.ok()) {
    fmt::print(stderr, "rankscope top: {}\n", client.status().message());
    return 2;
  }
  const int frames = opt.once ? 1 : opt.iterations;
  struct sigaction sa {};
  sa.sa_handler = OnSignal;  // no SA_RESTART: a signal interrupts poll()
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  RawTerminal terminal;
  const bool clear = frames == 0 && ::isatty(STDOUT_FILENO);
  int failures = 0;
  for (int i = 0; (frames == 0 || i < frames) && !g_stop; ++i) {
    const auto replies = client->Call("/v1/telemetry");
    failures = 0;
    for (const auto& r : replies) failures += !r.status.ok();
    if (opt.json) {
      nlohmann::json all = nlohmann::json::array();
      for (const auto& r : replies) all.push_back(r.status.ok() ? r.body : nlohmann::json{{"host", r.host.Label()}, {"error", r.status.message()}});
      std::cout << all.dump() << std::endl;
    } else {
      Render(replies, clear, terminal.active());
    }
    if (frames != 0 && i + 1 >= frames) break;
    if (WaitForQuit(opt.interval_s, terminal.active())) break;
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace

void RegisterTopCommand(CLI::App& app, int* exit_code) {
  auto opt = std::make_shared<TopOptions>();
  CLI::App* cmd = app.add_subcommand("top", "Live view of the nodes' CPU, memory, network, disk, GPUs and ranks");
  opt->hosts.AddTo(cmd);
  cmd->add_flag("--once", opt->once, "Print one frame and exit");
  cmd->add_option("--iterations", opt->iterations, "Print this many frames and exit (0: until q)")->check(CLI::NonNegativeNumber);
  cmd->add_option("--interval-s", opt->interval_s, "Refresh interval")->capture_default_str()->check(CLI::Range(0.05, 3600.0));
  cmd->add_flag("--json", opt->json, "Print each frame as one line of JSON (the daemons' /v1/telemetry)");
  cmd->callback([opt, exit_code] { *exit_code = RunTop(*opt); });
}

}  // namespace rankscope::cli

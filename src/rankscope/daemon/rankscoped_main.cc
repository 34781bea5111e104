// rankscoped: the rankscope node daemon. One per host; see docs/capture.md and docs/security.md.
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>

#include "rankscope/daemon/baseline_keeper.h"
#include "rankscope/daemon/collector_endpoint.h"
#include "rankscope/daemon/hang_watch.h"
#include "rankscope/daemon/http_api.h"
#include "rankscope/daemon/summary_worker.h"
#include "rankscope/daemon/kineto_endpoint.h"
#include "rankscope/daemon/native_stacks.h"
#include "rankscope/daemon/peers.h"
#include "rankscope/daemon/token_file.h"
#include "rankscope/telemetry/telemetry_service.h"

namespace rd = rankscope::daemon;
namespace rt = rankscope::telemetry;
using rankscope::Status;
using rankscope::StatusOr;

namespace {

struct Flags {
  std::string out_dir = "/var/lib/rankscope";
  uint64_t disk_budget_mb = 10240;
  std::string bind = "127.0.0.1";
  int port = 8383;
  std::string token_file;
  unsigned summary_threads = 1;
  std::string socket = "@rankscoped";
  std::string kineto_socket_dir;
  bool no_kineto = false;
  std::string kineto_staging = "/tmp/rankscoped-staging";
  int expire_s = 60;
  int kineto_roundup = 20;
  int auto_cooldown_s = 600;
  std::string ready_file;
  size_t max_processes_per_uid = 256;
  size_t http_connections_per_user = 8;
  // Telemetry (docs/telemetry.md)
  bool no_telemetry = false;
  int telemetry_interval_ms = 1000;
  int gpu_interval_ms = 1000;
  int telemetry_retention_s = 600;
  int telemetry_ring_mb = 64;
  int telemetry_margin_s = 5;
  std::string nvml_library = "libnvidia-ml.so.1";
  // Hangs (docs/hang.md)
  bool no_hang_watch = false;
  double hang_min_stall_s = 300;
  double hang_step_factor = 20;
  double hang_fr_pending_s = 300;
  int hang_cooldown_s = 1800;
  int hang_interval_ms = 1000;
  int hang_snapshot_timeout_s = 30;
  std::string py_spy = "py-spy";
  int native_after_s = 5;
  // Baselines (docs/compare.md)
  bool baseline_first_healthy = false;
  std::string compare_bin;  // default: `rankscope` beside this binary
  bool no_auto_compare = false;
  std::string peers_file;
  int hang_peer_grace_s = 30;
};

// Everything the daemon runs, in the order it is started.
struct Daemon {
  std::string host;
  std::unique_ptr<rd::ProcessRegistry> registry;
  std::unique_ptr<rd::OutputDir> out;
  std::unique_ptr<rd::KinetoStaging> staging;
  std::unique_ptr<rd::CollectorEndpoint> collectors;
  std::unique_ptr<rt::TelemetryService> telemetry;
  std::unique_ptr<rd::BaselineKeeper> baselines;
  std::unique_ptr<rd::SummaryWorker> summaries;  // before captures: its threads write into them
  std::unique_ptr<rd::CaptureManager> captures;
  std::unique_ptr<rd::KinetoEndpoint> kineto;
  std::unique_ptr<rd::HangWatch> hang_watch;
  std::unique_ptr<rd::HttpApi> api;

  // Stops in the reverse order, so that nothing is called once it is gone.
  ~Daemon() {
    api.reset();
    hang_watch.reset();
    kineto.reset();
    if (collectors) collectors->Attach(nullptr);
    summaries.reset();
    captures.reset();
    baselines.reset();
    if (telemetry) telemetry->Stop();
  }
};

// `rankscope` installed beside `rankscoped` (the build tree and pip install put them together).
std::string RankscopeBesideUs() {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  for (const auto& candidate : {self.parent_path() / "rankscope", self.parent_path().parent_path() / "cli/rankscope"}) {
    if (std::filesystem::exists(candidate, ec)) return candidate.string();
  }
  return "";
}

// Jobs' baselines, and the comparison of automatic captures with them (baseline_keeper.h).
void StartBaselines(const Flags& f, Daemon& d, rd::CaptureManager::Options* opts) {
  rd::BaselineKeeper::Options b;
  b.root = d.out->root();
  b.first_healthy = f.baseline_first_healthy;
  b.compare_bin = f.no_auto_compare ? "" : (f.compare_bin.empty() ? RankscopeBesideUs() : f.compare_bin);
  d.baselines = std::make_unique<rd::BaselineKeeper>(b);
  rd::BaselineKeeper* keeper = d.baselines.get();
  rd::SummaryWorker* summaries = d.summaries.get();
  opts->on_saved = [keeper, summaries](const rd::Capture& c) {
    if (summaries) summaries->OnSaved(c);  // the ranks' summaries first: a comparison may read them
    keeper->OnSaved(c);
  };
  opts->protected_captures = [keeper] { return keeper->Protected(); };
}

std::string Hostname() {
  char buf[256] = {};
  ::gethostname(buf, sizeof(buf) - 1);
  return buf;
}

// The API is the daemon's only socket that waits on clients; many connections may be open
// while it refuses the excess, and every capture opens a few descriptors.
void RaiseFileLimit() {
  rlimit r{};
  if (::getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
    r.rlim_cur = std::min<rlim_t>(r.rlim_max, 65536);
    ::setrlimit(RLIMIT_NOFILE, &r);
  }
}

// Tells a supervisor (or a test) where the API listens once everything is bound.
void WriteReadyFile(const std::string& path, int port, const std::string& out_dir) {
  if (path.empty()) return;
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    out << nlohmann::json{{"port", port}, {"pid", ::getpid()}, {"out_dir", out_dir}}.dump() << "\n";
  }
  std::rename(tmp.c_str(), path.c_str());
}

// What the telemetry samplers need of the registry: who the training processes are.
std::vector<rt::Worker> Workers(rd::ProcessRegistry* registry) {
  std::vector<rt::Worker> out;
  for (const auto& p : registry->List()) out.push_back({p.pid, p.identity.rank, p.identity.local_rank, p.identity.job});
  return out;
}

Status OpenOutput(const Flags& f, Daemon& d) {
  d.registry = std::make_unique<rd::ProcessRegistry>(
      std::chrono::seconds(f.expire_s), rd::RegistryLimits{.max_per_uid = f.max_processes_per_uid});
  RANKSCOPE_ASSIGN_OR_RETURN(d.out, rd::OutputDir::Open(f.out_dir, f.disk_budget_mb * 1024 * 1024));
  if (!f.no_kineto) {
    RANKSCOPE_ASSIGN_OR_RETURN(d.staging, rd::KinetoStaging::Open(f.kineto_staging));
  }
  return rankscope::OkStatus();
}

Status StartCollectorEndpoint(const Flags& f, Daemon& d) {
  RANKSCOPE_ASSIGN_OR_RETURN(rd::UnixAddress address, rd::UnixAddress::Parse(f.socket));
  auto ep = rd::CollectorEndpoint::Start(address, d.out->root().string(), d.registry.get());
  if (!ep.ok()) return ep.status().WithContext("collector endpoint");
  d.collectors = std::move(*ep);
  return rankscope::OkStatus();
}

void StartTelemetry(const Flags& f, Daemon& d) {
  if (f.no_telemetry) return;
  rt::TelemetryService::Options t;
  t.host = d.host;
  t.interval = std::chrono::milliseconds(f.telemetry_interval_ms);
  t.gpu_interval = std::chrono::milliseconds(f.gpu_interval_ms);
  t.nvml_library = f.nvml_library;
  t.ring.retention_ns = int64_t{f.telemetry_retention_s} * 1'000'000'000;
  t.ring.max_bytes = size_t(f.telemetry_ring_mb) << 20;
  t.workers = [registry = d.registry.get()] { return Workers(registry); };
  d.telemetry = std::make_unique<rt::TelemetryService>(std::move(t));
  fmt::print(stderr, "rankscoped: telemetry every {} ms, GPU {}\n", f.telemetry_interval_ms, d.telemetry->gpu_status());
  d.telemetry->Start();
}

// Saved before the manifest: once a capture reads "saved", its telemetry is on disk.
std::function<Status(const rd::Capture&, const rd::CaptureManager::FileWriter&)> SaveTelemetry(const Flags& f, Daemon& d) {
  if (!d.telemetry) return nullptr;
  return [t = d.telemetry.get(), margin_ms = int64_t{f.telemetry_margin_s} * 1000, host = d.host](
             const rd::Capture& c, const rd::CaptureManager::FileWriter& write) {
    const int64_t end_ns = rt::UnixNowNs();
    const int64_t start_ns = (c.created_unix_ms - margin_ms) * 1'000'000;
    Status s = write(rt::SidecarFileName(host), t->WindowText(c.id, c.job, start_ns, end_ns));
    return s.ok() ? s : s.WithContext("telemetry not saved");
  };
}

void StartCaptures(const Flags& f, Daemon& d) {
  rd::CaptureManager::Options opts;
  opts.host = d.host;
  opts.on_finished = SaveTelemetry(f, d);
  opts.default_kineto_roundup = f.kineto_roundup;
  opts.auto_cooldown = std::chrono::seconds(f.auto_cooldown_s);
  opts.kineto_staging = d.staging.get();
  opts.py_spy = rd::FindExecutable(f.py_spy);
  opts.native_after = std::chrono::seconds(f.native_after_s);
  if (opts.py_spy.empty() && !f.py_spy.empty()) {
    fmt::print(stderr, "rankscoped: no py-spy ({}): a rank whose collector does not answer a snapshot gets no stack "
               "(pip install py-spy, or --py-spy PATH)\n", f.py_spy);
  }
  if (f.summary_threads > 0) {  // the map on the node (summary_worker.h)
    Daemon* dp = &d;
    d.summaries = std::make_unique<rd::SummaryWorker>(
        f.summary_threads, [dp](const std::string& id, const std::string& name, std::string_view content) {
          return dp->captures->WriteCaptureFile(id, name, content, /*replace=*/true);
        });
  }
  StartBaselines(f, d, &opts);
  rd::CollectorEndpoint* ce = d.collectors.get();
  d.captures = std::make_unique<rd::CaptureManager>(
      opts, d.registry.get(), d.out.get(),
      [ce](const rd::UnixAddress& to, const nlohmann::json& msg) { return ce->Send(to, msg); });
  ce->Attach(d.captures.get());
}

Status StartKineto(const Flags& f, Daemon& d) {
  if (f.no_kineto) return rankscope::OkStatus();
  const char* env_dir = std::getenv("KINETO_IPC_SOCKET_DIR");
  const std::string dir = !f.kineto_socket_dir.empty() ? f.kineto_socket_dir : (env_dir ? env_dir : "");
  auto k = rd::KinetoEndpoint::Start(dir, d.registry.get(), d.captures.get());
  if (!k.ok()) return k.status().WithContext("Kineto endpoint (use --no-kineto if dynolog runs here)");
  d.kineto = std::move(*k);
  return rankscope::OkStatus();
}

void StartHangWatch(const Flags& f, const std::string& token, std::vector<rd::Peer> peers, Daemon& d) {
  if (f.no_hang_watch) return;
  rd::HangWatch::Options h;
  h.peers = std::move(peers);
  h.token = token;
  h.peer_grace = std::chrono::seconds(f.hang_peer_grace_s);
  h.thresholds = {f.hang_min_stall_s, f.hang_step_factor, f.hang_fr_pending_s};
  h.interval = std::chrono::milliseconds(f.hang_interval_ms);
  h.cooldown = std::chrono::seconds(f.hang_cooldown_s);
  h.snapshot_timeout_s = f.hang_snapshot_timeout_s;
  d.hang_watch = std::make_unique<rd::HangWatch>(h, d.registry.get(), d.captures.get());
  d.hang_watch->Start();
}

Status StartApi(const Flags& f, const std::string& token, Daemon& d) {
  rd::DaemonInfo info;
  info.host = d.host;
  info.started_unix_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch()).count();
  rd::CollectorEndpoint* ce = d.collectors.get();
  info.collector_address = ce->address();
  info.collector_counts = [ce] {
    return nlohmann::json{{"received", ce->messages()}, {"malformed", ce->malformed()}, {"refused", ce->refused()}};
  };
  if (rd::KinetoEndpoint* k = d.kineto.get()) {
    info.kineto_address = k->address();
    info.kineto_counts = [k] {
      return nlohmann::json{{"received", k->polls()}, {"malformed", k->malformed()}, {"refused", k->refused()}};
    };
  }
  info.telemetry = d.telemetry.get();
  if (rd::SummaryWorker* w = d.summaries.get()) {
    info.summary_progress = [w](const std::string& id) { return w->Progress(id); };
  }
  if (rd::HangWatch* w = d.hang_watch.get()) {
    info.hangs = [w] { return w->Json(); };
    info.hangs_brief = [w] { return w->Brief(); };
    info.hang_metrics = [w] { return w->Metrics(); };
    info.on_peer_hang = [w](const std::string& job, const std::string& id, const std::string& dir, const std::string& reason) {
      w->OnPeerSnapshot(job, id, dir, reason);
    };
  }
  rd::HttpLimits limits;
  limits.max_per_peer = f.http_connections_per_user;
  d.api = std::make_unique<rd::HttpApi>(info, d.registry.get(), d.captures.get(), d.out.get(), token, limits);
  return d.api->Start(f.bind, f.port);
}

StatusOr<std::unique_ptr<Daemon>> StartDaemon(const Flags& f) {
  auto d = std::make_unique<Daemon>();
  d->host = Hostname();
  std::string token;
  if (!f.token_file.empty()) {
    RANKSCOPE_ASSIGN_OR_RETURN(token, rd::ReadTokenFile(f.token_file));
  }
  std::vector<rd::Peer> peers;
  if (!f.peers_file.empty()) {
    RANKSCOPE_ASSIGN_OR_RETURN(peers, rd::ReadPeersFile(f.peers_file));
    for (const rd::Peer& p : peers) {
      if (!rd::IsLoopback(p.host) && token.empty()) {
        return rankscope::FailedPrecondition(
            "peer {} is on another host: its daemon accepts requests from here only with the token (give every "
            "daemon the same --token-file)", p.Label());
      }
    }
    if (f.no_hang_watch) fmt::print(stderr, "rankscoped: --peers is used by the hang watch, which is off\n");
  }
  RANKSCOPE_RETURN_IF_ERROR(OpenOutput(f, *d));
  RANKSCOPE_RETURN_IF_ERROR(StartCollectorEndpoint(f, *d));
  StartTelemetry(f, *d);
  StartCaptures(f, *d);
  RANKSCOPE_RETURN_IF_ERROR(StartKineto(f, *d));
  StartHangWatch(f, token, std::move(peers), *d);
  RANKSCOPE_RETURN_IF_ERROR(StartApi(f, token, *d));
  return d;
}

int Run(const Flags& f) {
  // Every thread inherits this mask; the main thread then waits for the signals synchronously.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);
  RaiseFileLimit();

  auto daemon = StartDaemon(f);
  if (!daemon.ok()) {
    fmt::print(stderr, "rankscoped: error: {}\n", daemon.status().message());
    return 1;
  }
  const Daemon& d = **daemon;
  fmt::print(stderr, "rankscoped: serving http://{}:{} (out {}, collector {}, kineto {}, staging {})\n", f.bind,
             d.api->port(), d.out->root().string(), d.collectors->address(), d.kineto ? d.kineto->address() : "off",
             d.staging ? d.staging->path() : "off");
  WriteReadyFile(f.ready_file, d.api->port(), d.out->root().string());

  int sig = 0;
  sigwait(&stop_signals, &sig);
  fmt::print(stderr, "rankscoped: stopping on signal {}\n", sig);
  return 0;
}

void AddFlags(CLI::App& app, Flags& f) {
  app.add_option("--out-dir", f.out_dir, "The only directory traces and snapshots are written to")->capture_default_str();
  app.add_option("--disk-budget-mb", f.disk_budget_mb, "Evict the oldest captures above this (0: no limit)")->capture_default_str();
  app.add_option("--bind", f.bind, "HTTP API address; other than loopback requires --token-file")->capture_default_str();
  app.add_option("--port", f.port, "HTTP API port (0: any free port, see --ready-file)")->capture_default_str();
  app.add_option("--token-file", f.token_file, "File whose first line is the API token (>= 16 characters, mode 600)");
  app.add_option("--socket", f.socket, "Collector socket: @name (abstract) or a path; env RANKSCOPE_SOCKET")->capture_default_str();
  app.add_option("--kineto-socket-dir", f.kineto_socket_dir, "Serve Kineto at DIR/dynolog (default: env KINETO_IPC_SOCKET_DIR, else abstract 'dynolog')");
  app.add_flag("--no-kineto", f.no_kineto, "Do not serve the Kineto endpoint (e.g. dynolog already runs here)");
  app.add_option("--kineto-staging", f.kineto_staging, "Where Kineto clients write before compression (under /tmp)")->capture_default_str();
  app.add_option("--expire-s", f.expire_s, "Forget processes silent for this long")->capture_default_str()->check(CLI::Range(1, 86400));
  app.add_option("--kineto-roundup", f.kineto_roundup, "Default iteration round-up for Kineto clients")->capture_default_str()->check(CLI::Range(1, 100000));
  app.add_option("--auto-cooldown-s", f.auto_cooldown_s, "At most one auto-triggered trace per job in this time")->capture_default_str();
  app.add_option("--ready-file", f.ready_file, "Write {port, pid, out_dir} here once serving");
  app.add_option("--max-processes-per-uid", f.max_processes_per_uid, "Registered processes per user at most")
      ->capture_default_str()->check(CLI::Range(1, 4096));
  app.add_option("--http-connections-per-user", f.http_connections_per_user, "Open API connections per local user (or remote address)")
      ->capture_default_str()->check(CLI::Range(1, 64));
  app.add_option("--summary-threads", f.summary_threads, "Threads (at nice 19) that analyse each saved trace to its "
                 "rank summary beside it (<trace>.rsum); 0: none")->capture_default_str()->check(CLI::Range(0u, 64u));
  app.add_flag("--no-telemetry", f.no_telemetry, "Do not sample node telemetry (no /metrics, no telemetry beside traces)");
  app.add_option("--telemetry-interval-ms", f.telemetry_interval_ms, "Sampling interval of the /proc and /sys sources")
      ->capture_default_str()->check(CLI::Range(10, 60000));
  app.add_option("--gpu-interval-ms", f.gpu_interval_ms, "Sampling interval of the GPUs (NVML)")
      ->capture_default_str()->check(CLI::Range(100, 60000));
  app.add_option("--telemetry-retention-s", f.telemetry_retention_s, "Keep this much telemetry history in memory")
      ->capture_default_str()->check(CLI::Range(1, 86400));
  app.add_option("--telemetry-ring-mb", f.telemetry_ring_mb, "Memory cap of that history (oldest samples go first)")
      ->capture_default_str()->check(CLI::Range(1, 4096));
  app.add_option("--telemetry-margin-s", f.telemetry_margin_s, "Telemetry saved with a capture starts this long before it")
      ->capture_default_str()->check(CLI::Range(0, 600));
  app.add_option("--nvml-library", f.nvml_library, "NVML to load (env RANKSCOPE_NVML_LIBRARY)")->capture_default_str();
  app.add_flag("--no-hang-watch", f.no_hang_watch, "Do not detect hangs (no automatic hang snapshots)");
  app.add_option("--hang-min-stall-s", f.hang_min_stall_s, "A job is hung after no step for this long at least")
      ->capture_default_str()->check(CLI::Range(0.1, 1e7));
  app.add_option("--hang-step-factor", f.hang_step_factor, "... and for this many median step times")
      ->capture_default_str()->check(CLI::Range(0.0, 1e6));
  app.add_option("--hang-fr-pending-s", f.hang_fr_pending_s, "... or when a rank has had a collective open this long")
      ->capture_default_str()->check(CLI::Range(0.1, 1e7));
  app.add_option("--hang-cooldown-s", f.hang_cooldown_s, "At most one automatic hang snapshot per job in this time")
      ->capture_default_str()->check(CLI::Range(0, 10000000));
  app.add_option("--hang-interval-ms", f.hang_interval_ms, "How often the jobs are checked")
      ->capture_default_str()->check(CLI::Range(50, 600000));
  app.add_option("--hang-snapshot-timeout-s", f.hang_snapshot_timeout_s, "How long an automatic snapshot waits for a rank")
      ->capture_default_str()->check(CLI::Range(2, 3600));
  app.add_option("--py-spy", f.py_spy, "py-spy, for stacks of ranks whose collector does not answer ('' = never)")
      ->capture_default_str();
  app.add_option("--peers", f.peers_file, "File of the other hosts' daemons (host:port lines): a detected hang is "
                 "snapshotted on every host and analysed here (docs/hang.md)");
  app.add_option("--hang-peer-grace-s", f.hang_peer_grace_s, "With --peers, a daemon without rank 0 waits this much "
                 "longer for rank 0's daemon to gather")->capture_default_str()->check(CLI::Range(0, 86400));
  app.add_option("--native-stacks-after-s", f.native_after_s, "Take a stack with py-spy when a collector has not answered a snapshot after this long")
      ->capture_default_str()->check(CLI::Range(1, 3600));
  app.add_flag("--baseline-first-healthy", f.baseline_first_healthy,
               "Keep each job's first complete trace capture as its baseline (docs/compare.md)");
  app.add_option("--compare-bin", f.compare_bin, "rankscope, to compare automatic captures with the job's baseline "
                                                 "(default: the one beside rankscoped)");
  app.add_flag("--no-auto-compare", f.no_auto_compare, "Do not compare automatic captures with the job's baseline");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"rankscoped: the rankscope node daemon (registry, Kineto endpoint, HTTP API)", "rankscoped"};
  Flags f;
  if (const char* env = std::getenv("RANKSCOPE_OUT_DIR")) f.out_dir = env;
  if (const char* env = std::getenv("RANKSCOPE_SOCKET")) f.socket = env;
  if (const char* env = std::getenv("RANKSCOPE_NVML_LIBRARY")) f.nvml_library = env;
  app.set_version_flag("--version", "rankscoped 0.1.0");
  AddFlags(app, f);
  CLI11_PARSE(app, argc, argv);
  return Run(f);
}

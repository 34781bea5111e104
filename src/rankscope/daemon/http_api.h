// The daemon's HTTP API (JSON), served with cpp-httplib:
//   GET  /v1/status              the daemon, its endpoints, disk use
//   GET  /v1/processes           registered training processes
//   POST /v1/trace               start a trace (body: TraceSpec as JSON) -> the capture
//   POST /v1/snapshot            start a stack snapshot (body: SnapshotSpec) -> the capture
//   GET  /v1/captures[/<id>]     captures and, per process, what was produced or why not
//   GET  /v1/files               files in the output directory, oldest first
//   GET  /v1/telemetry           the node's key figures from the latest samples (rankscope top)
//   GET  /metrics                every telemetry series and the hang gauge, Prometheus text format
//   GET  /v1/hangs               hangs detected on this node, each with its analysis (docs/hang.md)
// Loopback by default; bound elsewhere it requires "Authorization: Bearer <token>".
#pragma once

#include <memory>
#include <string>
#include <thread>

#include "rankscope/daemon/capture_manager.h"
#include "rankscope/daemon/output_dir.h"
#include "rankscope/telemetry/telemetry_service.h"

namespace httplib { class Server; }

namespace rankscope::daemon {

struct DaemonInfo {
  std::string host;
  std::string version = "0.1.0";
  int64_t started_unix_ms = 0;
  std::string kineto_address;
  std::string collector_address;
  std::function<uint64_t()> kineto_polls, collector_messages;
  telemetry::TelemetryService* telemetry = nullptr;  // null with --no-telemetry
  // Automatic hang detection (hang_watch.h); unset with --no-hang-watch.
  std::function<nlohmann::json()> hangs, hangs_brief;
  std::function<std::string()> hang_metrics;
};

// True for 127.0.0.0/8, ::1 and "localhost": the only binds allowed without a token.
bool IsLoopback(const std::string& host);

class HttpApi {
 public:
  HttpApi(DaemonInfo info, ProcessRegistry* registry, CaptureManager* captures, OutputDir* out, std::string token);
  ~HttpApi();
  // Binds and serves on a background thread; port 0 picks a free port (see port()).
  Status Start(const std::string& host, int port);
  void Stop();
  int port() const { return port_; }

 private:
  void Routes();

  DaemonInfo info_;
  ProcessRegistry* registry_;
  CaptureManager* captures_;
  OutputDir* out_;
  std::string token_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
};

}  // namespace rankscope::daemon

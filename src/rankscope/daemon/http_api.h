// The daemon's HTTP API (JSON), served with cpp-httplib behind GuardedHttpServer's limits:
//   GET  /v1/status              the daemon, its endpoints, disk use
//   GET  /v1/processes           registered training processes
//   POST /v1/trace               start a trace (body: TraceSpec as JSON) -> the capture
//   POST /v1/snapshot            start a stack snapshot (body: SnapshotSpec) -> the capture
//   GET  /v1/captures[/<id>]     captures and, per process, what was produced or why not
//   GET  /v1/captures/<id>/files/<name>  a file a snapshot produced (its stacks, Flight Recorder
//                                dumps, manifest), for the daemons and the CLI that gather a
//                                multi-host snapshot; its user, root or a token holder only
//   GET  /v1/files               files in the output directory, oldest first (the newest 5000)
//   GET  /v1/telemetry           the node's key figures from the latest samples (rankscope top)
//   GET  /metrics                every telemetry series and the hang gauge, Prometheus text format
//   GET  /v1/hangs               hangs detected on this node, each with its analysis (docs/hang.md)
// Any other method on these paths is answered 405 with the allowed one. Loopback by default;
// with a token (required for any other bind) every request needs "Authorization: Bearer".
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "rankscope/daemon/capture_manager.h"
#include "rankscope/daemon/http_limits.h"
#include "rankscope/daemon/output_dir.h"
#include "rankscope/telemetry/telemetry_service.h"

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace rankscope::daemon {

class GuardedHttpServer;

struct DaemonInfo {
  std::string host;
  std::string version = "0.1.0";
  int64_t started_unix_ms = 0;
  std::string kineto_address;
  std::string collector_address;
  // Datagram counters of an endpoint: received, malformed, refused.
  std::function<nlohmann::json()> kineto_counts, collector_counts;
  telemetry::TelemetryService* telemetry = nullptr;  // null with --no-telemetry
  // Automatic hang detection (hang_watch.h); unset with --no-hang-watch.
  std::function<nlohmann::json()> hangs, hangs_brief;
  std::function<std::string()> hang_metrics;
  // The node-side summaries of a capture still to be made, and those that failed
  // (summary_worker.h); unset with --summary-threads 0.
  std::function<nlohmann::json(const std::string& capture_id)> summary_progress;
  // A peer's daemon detected a hang of `job` and had its ranks here snapshotted as `capture`.
  std::function<void(const std::string& job, const std::string& capture, const std::string& dir,
                     const std::string& reason)> on_peer_hang;
};

// True for 127.0.0.0/8, ::1 and "localhost": the only binds allowed without a token.
bool IsLoopback(const std::string& host);

class HttpApi {
 public:
  HttpApi(DaemonInfo info, ProcessRegistry* registry, CaptureManager* captures, OutputDir* out, std::string token,
          const HttpLimits& limits);
  ~HttpApi();
  // Binds and serves on a background thread; port 0 picks a free port (see port()).
  Status Start(const std::string& host, int port);
  void Stop();
  int port() const { return port_; }

 private:
  using Handler = void (HttpApi::*)(const httplib::Request&, httplib::Response&);
  struct Route {
    const char* method;
    const char* pattern;
    Handler handler;
  };
  void Register(const std::vector<Route>& routes);
  bool Authorized(const httplib::Request& req) const;

  // One handler per route.
  void GetStatus(const httplib::Request& req, httplib::Response& res);
  void GetProcesses(const httplib::Request& req, httplib::Response& res);
  void PostTrace(const httplib::Request& req, httplib::Response& res);
  void PostSnapshot(const httplib::Request& req, httplib::Response& res);
  void GetCaptures(const httplib::Request& req, httplib::Response& res);
  void GetCapture(const httplib::Request& req, httplib::Response& res);
  void GetCaptureSummaries(const httplib::Request& req, httplib::Response& res);
  void GetCaptureFile(const httplib::Request& req, httplib::Response& res);
  void GetFiles(const httplib::Request& req, httplib::Response& res);
  void GetTelemetry(const httplib::Request& req, httplib::Response& res);
  void GetMetrics(const httplib::Request& req, httplib::Response& res);
  void GetHangs(const httplib::Request& req, httplib::Response& res);

  DaemonInfo info_;
  ProcessRegistry* registry_;
  CaptureManager* captures_;
  OutputDir* out_;
  std::string token_;
  std::unique_ptr<GuardedHttpServer> server_;
  std::thread thread_;
  int port_ = 0;
};

}  // namespace rankscope::daemon

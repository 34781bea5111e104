// `rankscope serve`: the web UI's HTTP server (cpp-httplib).
//
//   GET /                              the page (embedded in the binary; no data in it)
//   GET /api/jobs                      the jobs under the served paths (job_catalog.h)
//   GET /api/jobs/<id>/overview        the report without per-rank tables (view_data.h)
//   GET /api/jobs/<id>/report          the whole JSON report, as `rankscope analyze --json`
//   GET /api/jobs/<id>/ranks/<rank>    one rank of the report
//   GET /api/jobs/<id>/timeline[?step=N]   GET /api/jobs/<id>/matrix
//   GET /api/jobs/<id>/functions           GET /api/jobs/<id>/telemetry
//   GET /api/jobs/<id>/hang            a stack snapshot's hang analysis (rankscope.hang/1)
//
// Loopback by default; any other address requires a token (--token-file), sent by the page as
// "Authorization: Bearer <token>" on every /api request (the page takes it from the URL's
// #token=... once). Requests carry no body (bounded at 1 KiB), paths are matched against fixed
// patterns, and a job is named by its id only, so no request can name a file.
#pragma once

#include <memory>
#include <string>
#include <thread>

#include "rankscope/base/status.h"
#include "rankscope/web/job_catalog.h"
#include "rankscope/web/job_store.h"

namespace httplib { class Server; }

namespace rankscope::web {

struct ServeOptions {
  std::string bind = "127.0.0.1";
  int port = 8484;          // 0: any free port
  std::string token;        // required unless bind is loopback
  unsigned threads = 0;     // for the analysis; 0: every core
  size_t max_cached_jobs = 4;
};

class WebServer {
 public:
  WebServer(JobCatalog catalog, ServeOptions options);
  ~WebServer();

  // Binds; fails on a non-loopback address without a token, or a port in use.
  Status Bind();
  // Serves until Stop() (from another thread or a signal handler's thread).
  void Serve();
  void Stop();
  int port() const { return port_; }

 private:
  void Routes();

  JobCatalog catalog_;
  ServeOptions options_;
  JobStore store_;
  std::unique_ptr<httplib::Server> server_;
  int port_ = 0;
};

}  // namespace rankscope::web

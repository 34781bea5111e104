#include "rankscope/web/web_server.h"

#include <httplib.h>

#include <charconv>

#include "rankscope/daemon/http_api.h"
#include "rankscope/report/ui_page.h"

namespace rankscope::web {
namespace {

constexpr size_t kMaxRequestBody = 1024;

// Sent as they are: this cpp-httplib compresses a body set with set_content() with brotli at
// its highest quality when the browser accepts it, which took 12 s for the 650 KB page on a
// loaded machine. A fixed-length content provider is sent uncompressed.
void Send(httplib::Response& res, int status, std::string body, const char* type) {
  res.status = status;
  auto shared = std::make_shared<std::string>(std::move(body));
  res.set_content_provider(shared->size(), type, [shared](size_t offset, size_t length, httplib::DataSink& sink) {
    return sink.write(shared->data() + offset, length);
  });
}

void ReplyJson(httplib::Response& res, int status, const nlohmann::json& body) {
  Send(res, status, body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), "application/json");
}

void ReplyError(httplib::Response& res, const Status& s) {
  int status = 500;
  switch (s.code()) {
    case StatusCode::kNotFound: status = 404; break;
    case StatusCode::kInvalidArgument:
    case StatusCode::kOutOfRange: status = 400; break;
    case StatusCode::kFailedPrecondition:
    case StatusCode::kDataLoss:
    case StatusCode::kNotATrace: status = 422; break;
    default: break;
  }
  ReplyJson(res, status, {{"error", s.message()}});
}

// Compares in time independent of where the strings differ.
bool SameToken(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

std::optional<int64_t> ParseInt(const std::string& s) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

nlohmann::json JobJson(const JobEntry& e) {
  return {{"id", e.id}, {"kind", JobKindName(e.kind)}, {"name", e.name}, {"root", e.root},
          {"path", e.path}, {"files", e.files.size()}, {"modified_unix_s", e.modified_unix_s}};
}

// The page runs inline scripts and styles only, and talks to this server only.
constexpr const char* kPagePolicy =
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data: blob:; "
    "font-src data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

}  // namespace

WebServer::WebServer(JobCatalog catalog, ServeOptions options)
    : catalog_(std::move(catalog)), options_(std::move(options)), store_(&catalog_, options_.threads, options_.max_cached_jobs),
      server_(std::make_unique<httplib::Server>()) {
  Routes();
}

WebServer::~WebServer() { Stop(); }

Status WebServer::Bind() {
  if (!daemon::IsLoopback(options_.bind) && options_.token.empty()) {
    return FailedPrecondition("refusing to serve on {} without a token: anyone who reaches it could read the traces' "
                              "analysis (use --token-file, or bind to 127.0.0.1)", options_.bind);
  }
  if (UiPage().empty()) {
    return FailedPrecondition("this rankscope was built without the web UI (npm was not found when it was built): "
                              "rebuild with Node.js and npm installed");
  }
  if (options_.port == 0) {
    port_ = server_->bind_to_any_port(options_.bind);
    if (port_ < 0) return IoError("cannot bind to {}", options_.bind);
  } else {
    if (!server_->bind_to_port(options_.bind, options_.port)) {
      return IoError("cannot bind to {}:{} (in use? --port picks another)", options_.bind, options_.port);
    }
    port_ = options_.port;
  }
  return OkStatus();
}

void WebServer::Serve() { server_->listen_after_bind(); }

void WebServer::Stop() { server_->stop(); }

void WebServer::Routes() {
  server_->set_payload_max_length(kMaxRequestBody);
  server_->set_read_timeout(10, 0);
  server_->set_write_timeout(60, 0);
  server_->set_keep_alive_max_count(100);

  server_->set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    res.set_header("X-Content-Type-Options", "nosniff");
    res.set_header("Referrer-Policy", "no-referrer");
    res.set_header("Cache-Control", "no-store");
    if (req.method != "GET" && req.method != "HEAD") {
      ReplyJson(res, 405, {{"error", "only GET is served"}});
      return httplib::Server::HandlerResponse::Handled;
    }
    if (options_.token.empty() || req.path.rfind("/api/", 0) != 0) return httplib::Server::HandlerResponse::Unhandled;
    const std::string auth = req.get_header_value("Authorization");
    if (auth.rfind("Bearer ", 0) == 0 && SameToken(auth.substr(7), options_.token)) {
      return httplib::Server::HandlerResponse::Unhandled;
    }
    ReplyJson(res, 401, {{"error", "missing or wrong token: open the page as http://HOST:PORT/#token=<token>"}});
    return httplib::Server::HandlerResponse::Handled;
  });

  server_->Get("/", [](const httplib::Request&, httplib::Response& res) {
    const std::string_view page = UiPage();
    res.set_header("Content-Security-Policy", kPagePolicy);
    Send(res, 200, std::string(page), "text/html; charset=utf-8");
  });

  server_->Get("/api/jobs", [this](const httplib::Request&, httplib::Response& res) {
    std::vector<std::string> warnings;
    nlohmann::json jobs = nlohmann::json::array();
    for (const JobEntry& e : catalog_.Scan(&warnings)) jobs.push_back(JobJson(e));
    ReplyJson(res, 200, {{"roots", catalog_.roots()}, {"jobs", jobs}, {"warnings", warnings}});
  });

  // Every document of a job: /api/jobs/<id>/<view>[/<arg>]
  server_->Get(R"(/api/jobs/([0-9a-f]{16})/(overview|report|timeline|matrix|functions|telemetry|hang|compare|ranks/(-?[0-9]{1,10})))",
               [this](const httplib::Request& req, httplib::Response& res) {
    const std::string id = req.matches[1];
    std::string view = req.matches[2];
    std::optional<int64_t> arg;
    if (view.rfind("ranks/", 0) == 0) {
      arg = ParseInt(req.matches[3]);
      view = "rank";
    } else if (view == "timeline" && req.has_param("step")) {
      arg = ParseInt(req.get_param_value("step"));
      if (!arg) return ReplyJson(res, 400, {{"error", "step must be a step number"}});
    }
    auto job = store_.Get(id);
    if (!job.ok()) return ReplyError(res, job.status());
    auto doc = store_.Document(**job, view, arg);
    if (!doc.ok()) return ReplyError(res, doc.status());
    Send(res, 200, std::move(*doc), "application/json");
  });

  server_->set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (res.body.empty() && !res.content_provider_) ReplyJson(res, res.status, {{"error", "not found"}});
  });
}

}  // namespace rankscope::web

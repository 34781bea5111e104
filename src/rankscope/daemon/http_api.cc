#include "rankscope/daemon/http_api.h"

#include <arpa/inet.h>
#include <unistd.h>

#include <httplib.h>

#include "rankscope/telemetry/prometheus_text.h"

namespace rankscope::daemon {
namespace {

void Reply(httplib::Response& res, int status, const nlohmann::json& body) {
  res.status = status;
  res.set_content(body.dump(2) + "\n", "application/json");
}

int HttpStatus(const Status& s) {
  switch (s.code()) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kOutOfRange: return 400;
    case StatusCode::kNotFound: return 404;
    case StatusCode::kFailedPrecondition: return 409;
    default: return 500;
  }
}

// Compares in time independent of where the strings differ.
bool SameToken(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

int64_t UnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

bool IsLoopback(const std::string& host) {
  if (host == "localhost" || host == "::1") return true;
  in_addr a{};
  return inet_pton(AF_INET, host.c_str(), &a) == 1 && (ntohl(a.s_addr) >> 24) == 127;
}

HttpApi::HttpApi(DaemonInfo info, ProcessRegistry* registry, CaptureManager* captures, OutputDir* out, std::string token)
    : info_(std::move(info)), registry_(registry), captures_(captures), out_(out), token_(std::move(token)),
      server_(std::make_unique<httplib::Server>()) {
  Routes();
}

HttpApi::~HttpApi() { Stop(); }

Status HttpApi::Start(const std::string& host, int port) {
  if (!IsLoopback(host) && token_.empty()) {
    return FailedPrecondition("refusing to serve on {} without a token: anyone who reaches it could start traces "
                              "(use --token-file, or bind to 127.0.0.1)", host);
  }
  if (port == 0) {
    port_ = server_->bind_to_any_port(host);
    if (port_ < 0) return IoError("cannot bind the HTTP API to {}", host);
  } else {
    if (!server_->bind_to_port(host, port)) return IoError("cannot bind the HTTP API to {}:{} (in use?)", host, port);
    port_ = port;
  }
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  return OkStatus();
}

void HttpApi::Stop() {
  if (thread_.joinable()) {
    server_->stop();
    thread_.join();
  }
}

void HttpApi::Routes() {
  server_->set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (token_.empty()) return httplib::Server::HandlerResponse::Unhandled;
    const std::string auth = req.get_header_value("Authorization");
    if (auth.rfind("Bearer ", 0) == 0 && SameToken(auth.substr(7), token_)) {
      return httplib::Server::HandlerResponse::Unhandled;
    }
    Reply(res, 401, {{"error", "missing or wrong token (Authorization: Bearer <token>)"}});
    return httplib::Server::HandlerResponse::Handled;
  });

  server_->Get("/v1/status", [this](const httplib::Request&, httplib::Response& res) {
    const auto procs = registry_->List();
    int kineto = 0, collectors = 0;
    for (const auto& p : procs) {
      kineto += (p.kinds & kKinetoClient) != 0;
      collectors += (p.kinds & kTrackerClient) != 0;
    }
    Reply(res, 200, {{"daemon", "rankscoped"}, {"version", info_.version}, {"host", info_.host},
                     {"pid", ::getpid()}, {"uptime_s", (UnixMs() - info_.started_unix_ms) / 1000},
                     {"out_dir", out_->root().string()}, {"disk_used_bytes", out_->UsedBytes()},
                     {"disk_budget_bytes", out_->budget_bytes()},
                     {"kineto_endpoint", {{"address", info_.kineto_address}, {"datagrams", info_.kineto_polls ? info_.kineto_polls() : 0}}},
                     {"collector_endpoint", {{"address", info_.collector_address}, {"datagrams", info_.collector_messages ? info_.collector_messages() : 0}}},
                     {"processes", {{"total", procs.size()}, {"kineto", kineto}, {"collector", collectors},
                                    {"expired", registry_->expired_total()}}},
                     {"active_captures", captures_->active()},
                     {"hangs", info_.hangs_brief ? info_.hangs_brief() : nlohmann::json::array()}});
  });

  server_->Get("/v1/hangs", [this](const httplib::Request&, httplib::Response& res) {
    if (!info_.hangs) return Reply(res, 404, {{"error", "hang detection is off on this daemon (--no-hang-watch)"}});
    nlohmann::json j = info_.hangs();
    j["host"] = info_.host;
    Reply(res, 200, j);
  });

  server_->Get("/v1/processes", [this](const httplib::Request&, httplib::Response& res) {
    nlohmann::json list = nlohmann::json::array();
    const auto now = Clock::now();
    for (const auto& p : registry_->List()) list.push_back(ToJson(p, now));
    Reply(res, 200, {{"host", info_.host}, {"processes", list}});
  });

  server_->Post("/v1/trace", [this](const httplib::Request& req, httplib::Response& res) {
    auto body = nlohmann::json::parse(req.body, nullptr, /*allow_exceptions=*/false);
    if (body.is_discarded()) return Reply(res, 400, {{"error", "the body is not JSON"}});
    auto spec = TraceSpecFromJson(body);
    if (!spec.ok()) return Reply(res, HttpStatus(spec.status()), {{"error", spec.status().message()}, {"host", info_.host}});
    auto capture = captures_->StartTrace(*spec);
    if (!capture.ok()) return Reply(res, HttpStatus(capture.status()), {{"error", capture.status().message()}, {"host", info_.host}});
    Reply(res, 200, *capture);
  });

  server_->Post("/v1/snapshot", [this](const httplib::Request& req, httplib::Response& res) {
    auto body = nlohmann::json::parse(req.body, nullptr, false);
    if (body.is_discarded()) return Reply(res, 400, {{"error", "the body is not JSON"}});
    auto spec = SnapshotSpecFromJson(body);
    if (!spec.ok()) return Reply(res, HttpStatus(spec.status()), {{"error", spec.status().message()}, {"host", info_.host}});
    auto capture = captures_->StartSnapshot(*spec);
    if (!capture.ok()) return Reply(res, HttpStatus(capture.status()), {{"error", capture.status().message()}, {"host", info_.host}});
    Reply(res, 200, *capture);
  });

  server_->Get("/v1/captures", [this](const httplib::Request&, httplib::Response& res) {
    Reply(res, 200, {{"host", info_.host}, {"captures", captures_->List()}});
  });

  server_->Get(R"(/v1/captures/([A-Za-z0-9._-]+))", [this](const httplib::Request& req, httplib::Response& res) {
    auto c = captures_->Describe(req.matches[1]);
    if (!c) return Reply(res, 404, {{"error", fmt::format("no capture {} on this host", std::string(req.matches[1]))}});
    Reply(res, 200, *c);
  });

  server_->Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    if (!info_.telemetry && !info_.hang_metrics) {
      return Reply(res, 404, {{"error", "telemetry is off on this daemon (--no-telemetry)"}});
    }
    std::string text = info_.telemetry ? info_.telemetry->Metrics() : "";
    if (info_.hang_metrics) text += info_.hang_metrics();
    res.set_content(text, telemetry::kPrometheusContentType);
  });

  server_->Get("/v1/telemetry", [this](const httplib::Request&, httplib::Response& res) {
    if (!info_.telemetry) return Reply(res, 404, {{"error", "telemetry is off on this daemon (--no-telemetry)"}});
    Reply(res, 200, info_.telemetry->LatestJson());
  });

  server_->Get("/v1/files", [this](const httplib::Request&, httplib::Response& res) {
    nlohmann::json files = nlohmann::json::array();
    for (const auto& f : out_->List()) files.push_back(ToJson(f));
    Reply(res, 200, {{"host", info_.host}, {"out_dir", out_->root().string()}, {"files", files}});
  });
}

}  // namespace rankscope::daemon

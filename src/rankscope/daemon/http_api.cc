#include "rankscope/daemon/http_api.h"

#include <arpa/inet.h>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <map>
#include <mutex>

#include "rankscope/base/json_text.h"
#include "rankscope/daemon/http_server.h"
#include "rankscope/summary/summary_file.h"
#include "rankscope/telemetry/prometheus_text.h"
#include "rankscope/telemetry/sidecar.h"

namespace rankscope::daemon {
namespace {

// /v1/files lists at most this many files (the newest), so that its reply stays small.
constexpr size_t kMaxListedFiles = 5000;
// A snapshot's largest file: a Flight Recorder dump (hang/flight_recorder.h).
constexpr uint64_t kMaxServedFileBytes = 256u << 20;

void Reply(httplib::Response& res, int status, const nlohmann::json& body) {
  res.status = status;
  res.set_content(DumpJson(body), "application/json");
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

void ReplyWith(httplib::Response& res, const StatusOr<nlohmann::json>& result, const std::string& host) {
  if (!result.ok()) return Reply(res, HttpStatus(result.status()), {{"error", result.status().message()}, {"host", host}});
  Reply(res, 200, *result);
}

StatusOr<nlohmann::json> ParseBody(const httplib::Request& req) {
  auto body = nlohmann::json::parse(req.body, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded()) return InvalidArgument("the body is not JSON");
  return body;
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

// Who is asking, from the header GuardedHttpServer sets: a local user (loopback, the kernel's
// uid) may capture only their own processes. A remote peer passed the token (required off
// loopback). A loopback peer the kernel could not name is not restricted (and said so once).
Requester RequesterOf(const httplib::Request& req) {
  const std::string peer = req.get_header_value(kPeerHeader);
  uid_t uid = 0;
  if (peer.rfind("uid:", 0) == 0 && std::from_chars(peer.data() + 4, peer.data() + peer.size(), uid).ec == std::errc()) {
    return Requester{uid};
  }
  static std::once_flag warned;
  if (peer == "ip:127.0.0.1" || peer == "ip:::1") {
    std::call_once(warned, [] {
      fmt::print(stderr, "rankscoped: cannot tell local users apart (NETLINK_SOCK_DIAG unavailable): "
                         "requests from loopback are not restricted to their own processes\n");
    });
  }
  return Requester{};
}

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
  return out;
}

}  // namespace

bool IsLoopback(const std::string& host) {
  if (host == "localhost" || host == "::1") return true;
  in_addr a{};
  return inet_pton(AF_INET, host.c_str(), &a) == 1 && (ntohl(a.s_addr) >> 24) == 127;
}

HttpApi::HttpApi(DaemonInfo info, ProcessRegistry* registry, CaptureManager* captures, OutputDir* out, std::string token,
                 const HttpLimits& limits)
    : info_(std::move(info)), registry_(registry), captures_(captures), out_(out), token_(std::move(token)),
      server_(std::make_unique<GuardedHttpServer>(limits)) {
  server_->set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (Authorized(req)) return httplib::Server::HandlerResponse::Unhandled;
    Reply(res, 401, {{"error", "missing or wrong token (Authorization: Bearer <token>)"}});
    return httplib::Server::HandlerResponse::Handled;
  });
  server_->set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (res.body.empty()) Reply(res, res.status, {{"error", fmt::format("{} {}: no such resource", req.method, req.path)}});
  });
  Register({
      {"GET", "/v1/status", &HttpApi::GetStatus},
      {"GET", "/v1/processes", &HttpApi::GetProcesses},
      {"POST", "/v1/trace", &HttpApi::PostTrace},
      {"POST", "/v1/snapshot", &HttpApi::PostSnapshot},
      {"GET", "/v1/captures", &HttpApi::GetCaptures},
      {"GET", R"(/v1/captures/([A-Za-z0-9._-]+))", &HttpApi::GetCapture},
      {"GET", R"(/v1/captures/([A-Za-z0-9._-]+)/files/([A-Za-z0-9._-]+))", &HttpApi::GetCaptureFile},
      {"GET", R"(/v1/captures/([A-Za-z0-9._-]+)/summaries)", &HttpApi::GetCaptureSummaries},
      {"GET", "/v1/files", &HttpApi::GetFiles},
      {"GET", "/v1/telemetry", &HttpApi::GetTelemetry},
      {"GET", "/metrics", &HttpApi::GetMetrics},
      {"GET", "/v1/hangs", &HttpApi::GetHangs},
  });
}

HttpApi::~HttpApi() { Stop(); }

bool HttpApi::Authorized(const httplib::Request& req) const {
  if (token_.empty()) return true;
  const std::string auth = req.get_header_value("Authorization");
  return auth.rfind("Bearer ", 0) == 0 && SameToken(auth.substr(7), token_);
}

void HttpApi::Register(const std::vector<Route>& routes) {
  std::map<std::string, std::vector<std::string>> allowed;  // by pattern
  for (const Route& r : routes) {
    const Handler h = r.handler;
    auto call = [this, h](const httplib::Request& req, httplib::Response& res) { (this->*h)(req, res); };
    if (std::string_view(r.method) == "GET") server_->Get(r.pattern, call);
    else server_->Post(r.pattern, call);
    allowed[r.pattern].push_back(r.method);
  }
  // Every other method on a known path: 405 and the allowed one, not a misleading 404.
  for (const auto& entry : allowed) {
    const std::string& pattern = entry.first;
    const std::vector<std::string>& methods = entry.second;
    auto refuse = [allow = Join(methods)](const httplib::Request& req, httplib::Response& res) {
      res.set_header("Allow", allow);
      Reply(res, 405, {{"error", fmt::format("{} is not allowed on {}; use {}", req.method, req.path, allow)}});
    };
    auto has = [&](const char* m) { return std::find(methods.begin(), methods.end(), m) != methods.end(); };
    if (!has("GET")) server_->Get(pattern, refuse);
    if (!has("POST")) server_->Post(pattern, refuse);
    server_->Put(pattern, refuse);
    server_->Patch(pattern, refuse);
    server_->Delete(pattern, refuse);
    server_->Options(pattern, refuse);
  }
}

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

void HttpApi::GetStatus(const httplib::Request&, httplib::Response& res) {
  const auto procs = registry_->List();
  int kineto = 0, collectors = 0;
  for (const auto& p : procs) {
    kineto += (p.kinds & kKinetoClient) != 0;
    collectors += (p.kinds & kTrackerClient) != 0;
  }
  Reply(res, 200, {{"daemon", "rankscoped"}, {"version", info_.version}, {"host", info_.host}, {"pid", ::getpid()},
                   {"uptime_s", (UnixMs() - info_.started_unix_ms) / 1000}, {"out_dir", out_->root().string()},
                   {"disk_used_bytes", out_->UsedBytes()}, {"disk_used_scanned_unix_ms", out_->used_scanned_unix_ms()},
                   {"disk_budget_bytes", out_->budget_bytes()},
                   {"kineto_endpoint", {{"address", info_.kineto_address},
                                        {"datagrams", info_.kineto_counts ? info_.kineto_counts() : nlohmann::json()}}},
                   {"collector_endpoint", {{"address", info_.collector_address},
                                           {"datagrams", info_.collector_counts ? info_.collector_counts() : nlohmann::json()}}},
                   {"processes", {{"total", procs.size()}, {"kineto", kineto}, {"collector", collectors},
                                  {"expired", registry_->expired_total()}, {"exited", registry_->exited_total()},
                                  {"refused", registry_->refused_total()}}},
                   {"http", server_->Stats()}, {"active_captures", captures_->active()},
                   {"hangs", info_.hangs_brief ? info_.hangs_brief() : nlohmann::json::array()}});
}

void HttpApi::GetProcesses(const httplib::Request&, httplib::Response& res) {
  nlohmann::json list = nlohmann::json::array();
  const auto now = Clock::now();
  for (const auto& p : registry_->List()) list.push_back(ToJson(p, now));
  Reply(res, 200, {{"host", info_.host}, {"processes", list}});
}

void HttpApi::PostTrace(const httplib::Request& req, httplib::Response& res) {
  ReplyWith(res, [&]() -> StatusOr<nlohmann::json> {
    RANKSCOPE_ASSIGN_OR_RETURN(nlohmann::json body, ParseBody(req));
    RANKSCOPE_ASSIGN_OR_RETURN(TraceSpec spec, TraceSpecFromJson(body));
    return captures_->StartTrace(std::move(spec), RequesterOf(req));
  }(), info_.host);
}

void HttpApi::PostSnapshot(const httplib::Request& req, httplib::Response& res) {
  Requester who = RequesterOf(req);
  bool from_user = false;  // a hang_reason from a local user: not a peer's daemon
  ReplyWith(res, [&]() -> StatusOr<nlohmann::json> {
    RANKSCOPE_ASSIGN_OR_RETURN(nlohmann::json body, ParseBody(req));
    RANKSCOPE_ASSIGN_OR_RETURN(SnapshotSpec spec, SnapshotSpecFromJson(body));
    // A hang_reason makes this daemon record a hang result and hold back its own snapshot of the
    // job (HangWatch::OnPeerSnapshot): only a peer's daemon may say so — root on this host, or a
    // token holder from another — never a local user (who could push other users' hang results
    // out of the bounded list, or silence the detection of their own job). as_uid likewise; it
    // narrows the snapshot to that user's processes, as if that user asked.
    if ((!spec.hang_reason.empty() || spec.as_uid >= 0) && who.local_uid && *who.local_uid != 0) {
      from_user = true;
      return InvalidArgument("hang_reason and as_uid are for the daemons of a job's other hosts (root, or a token holder)");
    }
    if (spec.as_uid >= 0) who = Requester{static_cast<uid_t>(spec.as_uid)};
    const std::string reason = spec.hang_reason.empty() ? "request" : "hang detected by a peer: " + spec.hang_reason;
    RANKSCOPE_ASSIGN_OR_RETURN(nlohmann::json started, captures_->StartSnapshot(spec, who, reason));
    if (!spec.hang_reason.empty() && info_.on_peer_hang) {
      info_.on_peer_hang(started.value("job", ""), spec.snapshot_id, started.value("dir", ""), spec.hang_reason);
    }
    return started;
  }(), info_.host);
  if (from_user) res.status = 403;
}

void HttpApi::GetCaptures(const httplib::Request&, httplib::Response& res) {
  Reply(res, 200, {{"host", info_.host}, {"captures", captures_->List()}});
}

void HttpApi::GetCapture(const httplib::Request& req, httplib::Response& res) {
  const std::string id = req.matches[1];
  auto c = captures_->Describe(id);
  if (!c) return Reply(res, 404, {{"error", fmt::format("no capture {} on this host", id)}});
  Reply(res, 200, *c);
}

// A file of a snapshot, streamed from its descriptor: only a name the capture produced, only a
// regular file of the capture's user with one link, and only to that user (or root, or a token
// holder from elsewhere): stacks show a job's code.
namespace {

// A trace capture serves the rank summaries beside its traces, and the small files the analysis
// reads beside them (the manifest: hosts; the telemetry sidecar), never the traces themselves:
// they stay on the node unless someone fetches them there.
bool ServedOfTrace(const std::vector<std::string>& files, const std::string& name, const std::string& host) {
  if (name == "capture.manifest" || name == telemetry::SidecarFileName(host)) return true;
  if (!summary::IsSummaryPath(name)) return false;
  return std::find(files.begin(), files.end(), summary::TracePathOf(name)) != files.end();
}

}  // namespace

void HttpApi::GetCaptureSummaries(const httplib::Request& req, httplib::Response& res) {
  const std::string id = req.matches[1];
  auto c = captures_->OpenCapture(id);
  if (!c.ok()) return Reply(res, 404, {{"error", c.status().message()}});
  if (c->kind != Capture::Kind::kTrace) return Reply(res, 404, {{"error", "only a trace capture has summaries"}});
  if (!RequesterOf(req).may_capture(c->owner.uid)) {
    return Reply(res, 403, {{"error", fmt::format("capture {} belongs to another user", id)}});
  }
  nlohmann::json summaries = nlohmann::json::array();
  for (const std::string& name : c->files) {
    if (name.ends_with(".rsum") || name.find(".pt.trace.json") == std::string::npos) continue;
    const std::string rsum = name + std::string(summary::kSummarySuffix);
    auto fd = c->dir.OpenOwnedFile(rsum, c->owner.uid);
    struct stat st {};
    if (!fd.ok() || ::fstat(fd->get(), &st) != 0) continue;
    summaries.push_back({{"trace", name}, {"summary", rsum}, {"bytes", st.st_size}});
  }
  nlohmann::json beside = nlohmann::json::array();
  for (const std::string& name : {std::string("capture.manifest"), telemetry::SidecarFileName(info_.host)}) {
    if (c->dir.OpenOwnedFile(name, c->owner.uid).ok()) beside.push_back(name);
  }
  nlohmann::json out = {{"capture", id}, {"host", info_.host}, {"saved", c->saved}, {"summaries", summaries},
                        {"beside", beside}};
  out["progress"] = info_.summary_progress ? info_.summary_progress(id) : nlohmann::json(nullptr);
  Reply(res, 200, out);
}

void HttpApi::GetCaptureFile(const httplib::Request& req, httplib::Response& res) {
  const std::string id = req.matches[1], name = req.matches[2];
  auto c = captures_->OpenCapture(id);
  if (!c.ok()) return Reply(res, 404, {{"error", c.status().message()}});
  const bool summary_file = c->kind == Capture::Kind::kTrace && ServedOfTrace(c->files, name, info_.host);
  if (c->kind != Capture::Kind::kSnapshot && !summary_file) {
    return Reply(res, 404, {{"error", "only a snapshot's files and a trace capture's summaries are served"}});
  }
  if (!RequesterOf(req).may_capture(c->owner.uid)) {
    return Reply(res, 403, {{"error", fmt::format("capture {} belongs to another user", id)}});
  }
  if (!summary_file && std::find(c->files.begin(), c->files.end(), name) == c->files.end()) {
    return Reply(res, 404, {{"error", fmt::format("snapshot {} has no file {}", id, name)}});
  }
  auto fd = c->dir.OpenOwnedFile(name, c->owner.uid);
  if (!fd.ok()) return Reply(res, 409, {{"error", fd.status().message()}});
  struct stat st {};
  if (::fstat(fd->get(), &st) != 0 || static_cast<uint64_t>(st.st_size) > kMaxServedFileBytes) {
    return Reply(res, 413, {{"error", fmt::format("{} is larger than {} MiB", name, kMaxServedFileBytes >> 20)}});
  }
  auto file = std::make_shared<UniqueFd>(std::move(*fd));
  res.set_content_provider(static_cast<size_t>(st.st_size), "application/octet-stream",
                           [file](size_t offset, size_t length, httplib::DataSink& sink) {
                             char buf[65536];
                             const ssize_t n = ::pread(file->get(), buf, std::min(length, sizeof(buf)),
                                                       static_cast<off_t>(offset));
                             return n > 0 && sink.write(buf, static_cast<size_t>(n));
                           });
}

void HttpApi::GetFiles(const httplib::Request&, httplib::Response& res) {
  const FileListing listing = out_->List(kMaxListedFiles);
  nlohmann::json files = nlohmann::json::array();
  for (const auto& f : listing.files) files.push_back(ToJson(f));
  Reply(res, 200, {{"host", info_.host}, {"out_dir", out_->root().string()}, {"files", files},
                   {"total_files", listing.total}, {"total_bytes", listing.bytes},
                   {"truncated", listing.files.size() < listing.total}});
}

void HttpApi::GetTelemetry(const httplib::Request&, httplib::Response& res) {
  if (!info_.telemetry) return Reply(res, 404, {{"error", "telemetry is off on this daemon (--no-telemetry)"}});
  Reply(res, 200, info_.telemetry->LatestJson());
}

void HttpApi::GetMetrics(const httplib::Request&, httplib::Response& res) {
  if (!info_.telemetry && !info_.hang_metrics) {
    return Reply(res, 404, {{"error", "telemetry is off on this daemon (--no-telemetry)"}});
  }
  std::string text = info_.telemetry ? info_.telemetry->Metrics() : "";
  if (info_.hang_metrics) text += info_.hang_metrics();
  res.set_content(text, telemetry::kPrometheusContentType);
}

void HttpApi::GetHangs(const httplib::Request&, httplib::Response& res) {
  if (!info_.hangs) return Reply(res, 404, {{"error", "hang detection is off on this daemon (--no-hang-watch)"}});
  nlohmann::json j = info_.hangs();
  j["host"] = info_.host;
  Reply(res, 200, j);
}

}  // namespace rankscope::daemon

#include "rankscope/cli/daemon_client.h"

#include <httplib.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <fstream>

#include "rankscope/base/parallel_for.h"
#include "rankscope/base/parse_int.h"

namespace rankscope::cli {

std::string DaemonHost::Label() const { return port == 8383 ? host : fmt::format("{}:{}", host, port); }

void HostOptions::AddTo(CLI::App* cmd) {
  cmd->add_option("--host", hosts, "Daemon host[:port] (repeatable; default localhost)");
  cmd->add_option("--hostfile", hostfile, "File with one host[:port] per line");
  cmd->add_option("--port", port, "Default daemon port")->capture_default_str();
  cmd->add_option("--token-file", token_file, "API token file (default: $RANKSCOPE_TOKEN)");
  cmd->add_option("--http-timeout-s", timeout_s, "Per-request timeout")->capture_default_str();
}

StatusOr<DaemonHost> ParseHost(const std::string& text, int default_port) {
  DaemonHost h;
  h.port = default_port;
  std::string s = text;
  if (size_t colon = s.rfind(':'); colon != std::string::npos && s.find(':') == colon) {
    const std::optional<int64_t> port = ParseInt(std::string_view(s).substr(colon + 1));
    if (!port || *port <= 0 || *port > 65535) return InvalidArgument("bad port in '{}'", text);
    h.port = static_cast<int>(*port);
    s = s.substr(0, colon);
  }
  if (s.empty()) return InvalidArgument("empty host in '{}'", text);
  h.host = s;
  return h;
}

StatusOr<DaemonClient> DaemonClient::FromOptions(const HostOptions& opt) {
  DaemonClient c;
  c.timeout_s_ = opt.timeout_s;
  std::vector<std::string> names = opt.hosts;
  if (!opt.hostfile.empty()) {
    std::ifstream in(opt.hostfile);
    if (!in) return NotFound("cannot read the host file {}", opt.hostfile);
    std::string line;
    while (std::getline(in, line)) {
      if (size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
      line.erase(0, line.find_first_not_of(" \t\r"));
      line.erase(line.find_last_not_of(" \t\r") + 1);
      if (!line.empty()) names.push_back(line);
    }
    if (names.empty()) return InvalidArgument("the host file {} lists no host", opt.hostfile);
  }
  if (names.empty()) names.push_back("127.0.0.1");
  for (const auto& n : names) {
    RANKSCOPE_ASSIGN_OR_RETURN(DaemonHost h, ParseHost(n, opt.port));
    c.hosts_.push_back(h);
  }
  std::string token_file = opt.token_file;
  if (!token_file.empty()) {
    std::ifstream in(token_file);
    if (!in) return NotFound("cannot read the token file {}", token_file);
    std::getline(in, c.token_);
    while (!c.token_.empty() && (c.token_.back() == '\r' || c.token_.back() == ' ')) c.token_.pop_back();
  } else if (const char* env = std::getenv("RANKSCOPE_TOKEN")) {
    c.token_ = env;
  }
  return c;
}

HostReply DaemonClient::One(const DaemonHost& h, const std::string& path, const nlohmann::json& body) const {
  HostReply r;
  r.host = h;
  httplib::Client http(h.host, h.port);
  http.set_connection_timeout(std::min(timeout_s_, 5), 0);
  http.set_read_timeout(timeout_s_, 0);
  if (!token_.empty()) http.set_bearer_token_auth(token_.c_str());
  auto res = body.is_null() ? http.Get(path.c_str())
                            : http.Post(path.c_str(), body.dump(), "application/json");
  if (!res) {
    r.status = IoError("no answer from rankscoped at {}:{} ({}): is the daemon running there?", h.host, h.port,
                       httplib::to_string(res.error()));
    return r;
  }
  auto parsed = nlohmann::json::parse(res->body, nullptr, false);
  if (res->status != 200) {
    const std::string msg = !parsed.is_discarded() && parsed.contains("error") ? parsed["error"].get<std::string>()
                                                                               : res->body.substr(0, 200);
    r.status = Status(res->status == 404 ? StatusCode::kNotFound : StatusCode::kFailedPrecondition, msg);
    return r;
  }
  if (parsed.is_discarded()) {
    r.status = DataLoss("{}: the daemon's reply is not JSON", h.Label());
    return r;
  }
  r.body = std::move(parsed);
  return r;
}

std::vector<HostReply> DaemonClient::Call(const std::string& path, const nlohmann::json& body) const {
  return CallEach([&](size_t) { return path; }, [&](size_t) { return body; });
}

std::vector<HostReply> DaemonClient::CallEach(const std::function<std::string(size_t)>& path,
                                              const std::function<nlohmann::json(size_t)>& body) const {
  std::vector<HostReply> out(hosts_.size());
  // One thread per host up to 64: a slow or dead host costs its timeout, not everyone's.
  ParallelFor(hosts_.size(), std::min<unsigned>(64, static_cast<unsigned>(hosts_.size())), [&](size_t i) {
    out[i] = One(hosts_[i], path(i), body ? body(i) : nlohmann::json(nullptr));
  });
  return out;
}

}  // namespace rankscope::cli

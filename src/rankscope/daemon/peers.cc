#include "rankscope/daemon/peers.h"

#include <httplib.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "rankscope/base/parse_int.h"

namespace rankscope::daemon {
namespace {

constexpr size_t kMaxPeersFileBytes = 1 << 20;
constexpr size_t kMaxJsonReply = 16u << 20;
constexpr size_t kMaxErrorText = 4096;

bool HostChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_';
}

std::unique_ptr<httplib::Client> Connect(const Peer& p, const std::string& token, std::chrono::seconds timeout) {
  auto c = std::make_unique<httplib::Client>(p.host, p.port);
  c->set_connection_timeout(std::min<time_t>(timeout.count(), 5), 0);
  c->set_read_timeout(timeout.count(), 0);
  c->set_write_timeout(timeout.count(), 0);
  if (!token.empty()) c->set_bearer_token_auth(token.c_str());
  return c;
}

// A reply read into memory up to `max` bytes, and its status.
struct Reply {
  int status = 0;
  std::string body;
  bool too_big = false;
};

Status Transport(const Peer& p, httplib::Error e) {
  return IoError("no answer from rankscoped at {} ({})", p.Label(), httplib::to_string(e));
}

Status PeerError(const Peer& p, const Reply& r) {
  auto j = nlohmann::json::parse(r.body, nullptr, false);
  const std::string msg = j.is_object() && j.contains("error") && j["error"].is_string() ? j["error"].get<std::string>()
                                                                                         : r.body.substr(0, 200);
  const StatusCode code = r.status == 404 ? StatusCode::kNotFound : StatusCode::kFailedPrecondition;
  return Status(code, fmt::format("{} answered {}: {}", p.Label(), r.status, msg));
}

}  // namespace

std::string Peer::Label() const { return fmt::format("{}:{}", host, port); }

StatusOr<std::vector<Peer>> ParsePeers(std::string_view text) {
  std::vector<Peer> peers;
  std::istringstream in{std::string(text)};
  std::string line;
  for (size_t n = 1; std::getline(in, line); ++n) {
    if (size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    line.erase(0, line.find_first_not_of(" \t\r"));
    line.erase(line.find_last_not_of(" \t\r") + 1);
    if (line.empty()) continue;
    const size_t colon = line.rfind(':');
    if (colon == std::string::npos || colon == 0) return InvalidArgument("peers line {}: '{}' is not host:port", n, line.substr(0, 80));
    const std::string host = line.substr(0, colon);
    const std::optional<int64_t> port = ParseInt(std::string_view(line).substr(colon + 1));
    if (!port || *port <= 0 || *port > 65535) return InvalidArgument("peers line {}: bad port in '{}'", n, line.substr(0, 80));
    if (host.size() > 253 || !std::all_of(host.begin(), host.end(), HostChar)) {
      return InvalidArgument("peers line {}: '{}' is not a host name or IPv4 address", n, host.substr(0, 80));
    }
    if (peers.size() >= kMaxPeers) return OutOfRange("more than {} peers", kMaxPeers);
    peers.push_back({host, static_cast<int>(*port)});
  }
  return peers;
}

StatusOr<std::vector<Peer>> ReadPeersFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot read the peers file {}", path);
  std::string text(kMaxPeersFileBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > kMaxPeersFileBytes) return OutOfRange("the peers file {} is larger than 1 MiB", path);
  auto peers = ParsePeers(text);
  if (!peers.ok()) return peers.status().WithContext(path);
  return peers;
}

StatusOr<nlohmann::json> PeerClient::Call(const Peer& peer, const std::string& path, const nlohmann::json& body) const {
  auto client = Connect(peer, token_, timeout_);
  Reply r;
  auto receive = [&](const char* data, size_t n) {
    if (r.body.size() + n > kMaxJsonReply) {
      r.too_big = true;
      return false;
    }
    r.body.append(data, n);
    return true;
  };
  httplib::Result res = body.is_null()
      ? client->Get(path.c_str(), [&](const httplib::Response& h) { r.status = h.status; return true; }, receive)
      : client->Post(path.c_str(), body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), "application/json");
  if (r.too_big) return OutOfRange("{}: a reply of more than {} MiB", peer.Label(), kMaxJsonReply >> 20);
  if (!res) return Transport(peer, res.error());
  if (!body.is_null()) {
    r.status = res->status;
    r.body = res->body.substr(0, kMaxJsonReply);
  }
  if (r.status != 200) return PeerError(peer, r);
  auto j = nlohmann::json::parse(r.body, nullptr, false);
  if (j.is_discarded()) return DataLoss("{}: the reply is not JSON", peer.Label());
  return j;
}

Status PeerClient::Download(const Peer& peer, const std::string& path, size_t max_bytes,
                            const std::function<Status(std::string_view)>& sink) const {
  auto client = Connect(peer, token_, timeout_);
  Reply r;
  size_t got = 0;
  Status sink_status;
  auto receive = [&](const char* data, size_t n) {
    if (r.status != 200) {  // an error's text, for the message
      r.body.append(data, std::min(n, kMaxErrorText - std::min(kMaxErrorText, r.body.size())));
      return true;
    }
    got += n;
    if (got > max_bytes) {
      r.too_big = true;
      return false;
    }
    sink_status = sink(std::string_view(data, n));
    return sink_status.ok();
  };
  auto res = client->Get(path.c_str(), [&](const httplib::Response& h) { r.status = h.status; return true; }, receive);
  if (r.too_big) return OutOfRange("{}{}: more than {} MiB", peer.Label(), path, max_bytes >> 20);
  if (!sink_status.ok()) return sink_status;
  if (!res) return Transport(peer, res.error());
  if (r.status != 200) return PeerError(peer, r);
  return OkStatus();
}

}  // namespace rankscope::daemon

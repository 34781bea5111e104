// The daemons of the other hosts of a multi-host job (rankscoped --peers FILE), and how one
// daemon talks to them: a detected hang is snapshotted on every host and its files gathered
// here (hang_watch.h, snapshot_gather.h).
//
// The peers file is the operator's, read once at startup like the token file: one host:port
// per line, '#' comments, at most kMaxPeers. Requests to peers carry this daemon's API token
// (--token-file: the same token on every daemon of the cluster); a peer on another host
// requires one, so a daemon with such a peer refuses to start without --token-file. Replies
// are bounded (JSON 16 MiB; files by the caller) and read within a time limit.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "rankscope/base/status.h"

namespace rankscope::daemon {

inline constexpr size_t kMaxPeers = 1024;

struct Peer {
  std::string host;  // a name or an IPv4 address
  int port = 8383;
  std::string Label() const;  // host:port
};

// The lines of a peers file; fails naming the line of the first bad entry.
StatusOr<std::vector<Peer>> ParsePeers(std::string_view text);
StatusOr<std::vector<Peer>> ReadPeersFile(const std::string& path);

class PeerClient {
 public:
  PeerClient(std::string token, std::chrono::seconds timeout) : token_(std::move(token)), timeout_(timeout) {}

  // GET (body null) or POST `path`; the JSON reply, or the peer's error message (its status).
  StatusOr<nlohmann::json> Call(const Peer& peer, const std::string& path, const nlohmann::json& body = nullptr) const;
  // GET `path` and hand the reply's bytes to `sink` as they arrive: at most `max_bytes`, else an
  // error (and `sink` gets no more).
  Status Download(const Peer& peer, const std::string& path, size_t max_bytes,
                  const std::function<Status(std::string_view)>& sink) const;

 private:
  std::string token_;
  std::chrono::seconds timeout_;
};

}  // namespace rankscope::daemon

// The transport under the HTTP API: cpp-httplib's request handling behind limits that hold
// before anything is parsed or authenticated.
//
//   * connections: at most `max_connections` at once and `max_per_peer` per local user (the
//     kernel's uid of the peer socket on loopback, see tcp_peer.h) or remote address; more are
//     answered 503 and closed at once, so one user's idle connections cannot starve the rest;
//   * time: the whole request must arrive within `request_deadline` (a slow sender is cut
//     off, not waited for byte by byte), and one request is served per connection;
//   * size: the request line and headers within `max_header_bytes`, the body within
//     `max_body_bytes` (a larger Content-Length is answered 413 without reading it).
//
// The limits live in the byte stream cpp-httplib reads from, so they apply whatever the request
// is: the library never holds more than these bounds in memory per connection.
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

#include "rankscope/daemon/http_limits.h"

namespace rankscope::daemon {

// The header the server sets on every request (replacing any the client sent): who the peer
// is, "uid:<n>" for a local user or "ip:<address>" (tcp_peer.h).
inline constexpr const char* kPeerHeader = "X-Rankscope-Peer";

class GuardedHttpServer : public httplib::Server {
 public:
  explicit GuardedHttpServer(HttpLimits limits);
  const HttpLimits& limits() const { return limits_; }
  nlohmann::json Stats() const;

 private:
  // Called by cpp-httplib's accept loop (on a worker thread) for every accepted connection.
  bool process_and_close_socket(socket_t sock) override;
  bool Admit(const std::string& peer);
  void Release(const std::string& peer);

  const HttpLimits limits_;
  std::mutex mu_;
  size_t open_ = 0;
  std::map<std::string, size_t> per_peer_;
  std::atomic<uint64_t> served_{0}, refused_busy_{0}, refused_peer_{0}, cut_off_{0};
};

}  // namespace rankscope::daemon

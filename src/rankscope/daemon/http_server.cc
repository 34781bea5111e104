#include "rankscope/daemon/http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "rankscope/daemon/tcp_peer.h"

namespace rankscope::daemon {
namespace {

using SteadyClock = std::chrono::steady_clock;

// The bytes of one connection as cpp-httplib reads and writes them, within the limits: reads
// stop at the request deadline, at `max_header_bytes` before the blank line that ends the
// headers, and at `max_body_bytes` after it. cpp-httplib reads headers a byte at a time, so
// reads are served from a small buffer.
class BoundedStream final : public httplib::Stream {
 public:
  BoundedStream(int sock, const HttpLimits& limits)
      : sock_(sock), limits_(limits), read_deadline_(SteadyClock::now() + limits.request_deadline),
        write_deadline_(read_deadline_ + limits.response_deadline) {}

  bool is_readable() const override { return pos_ < len_ || Wait(POLLIN, read_deadline_); }
  bool is_writable() const override { return Wait(POLLOUT, write_deadline_); }

  ssize_t read(char* ptr, size_t size) override {
    if (size == 0) return 0;
    if (pos_ == len_ && !Fill()) return -1;
    // Never hand out more than the budget left: the headers, then the body.
    size_t n = std::min(size, len_ - pos_);
    const size_t budget = header_done_ ? limits_.max_body_bytes + kBodySlack - body_read_
                                       : limits_.max_header_bytes - header_read_;
    if (budget == 0) {
      exceeded_ = true;
      return -1;
    }
    n = std::min(n, budget);
    Account(buf_ + pos_, n);
    std::memcpy(ptr, buf_ + pos_, n);
    pos_ += n;
    return static_cast<ssize_t>(n);
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (!Wait(POLLOUT, write_deadline_)) return -1;
    const ssize_t n = ::send(sock_, ptr, size, MSG_NOSIGNAL | MSG_DONTWAIT);
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) ? 0 : n;
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override { Address(::getpeername, ip, port); }
  void get_local_ip_and_port(std::string& ip, int& port) const override { Address(::getsockname, ip, port); }
  socket_t socket() const override { return sock_; }

  bool cut_off() const { return exceeded_ || timed_out_; }

 private:
  // Chunked bodies carry framing (sizes, CRLFs) beyond the payload itself.
  static constexpr size_t kBodySlack = 64 * 1024;

  bool Wait(short events, SteadyClock::time_point deadline) const {
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::now()).count();
      if (left <= 0) {
        timed_out_ = true;
        return false;
      }
      pollfd p{sock_, events, 0};
      const int r = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 1000)));
      if (r > 0) return true;
      if (r < 0 && errno != EINTR) return false;
    }
  }

  bool Fill() {
    if (!Wait(POLLIN, read_deadline_)) return false;
    const ssize_t n = ::recv(sock_, buf_, sizeof(buf_), 0);
    if (n <= 0) return false;
    pos_ = 0;
    len_ = static_cast<size_t>(n);
    return true;
  }

  // Counts bytes against the header budget until the blank line that ends the headers.
  void Account(const char* p, size_t n) {
    for (size_t i = 0; i < n; ++i) {
      if (header_done_) {
        body_read_ += n - i;
        return;
      }
      ++header_read_;
      tail_ = (tail_ << 8) | static_cast<uint8_t>(p[i]);
      if ((tail_ & 0xffffffffu) == 0x0d0a0d0au || (tail_ & 0xffffu) == 0x0a0au) header_done_ = true;
    }
  }

  template <typename Fn>
  void Address(Fn fn, std::string& ip, int& port) const {
    sockaddr_storage a{};
    socklen_t len = sizeof(a);
    ip.clear();
    port = 0;
    if (fn(sock_, reinterpret_cast<sockaddr*>(&a), &len) != 0) return;
    char text[INET6_ADDRSTRLEN] = "";
    if (a.ss_family == AF_INET) {
      const auto& v4 = reinterpret_cast<const sockaddr_in&>(a);
      inet_ntop(AF_INET, &v4.sin_addr, text, sizeof(text));
      port = ntohs(v4.sin_port);
    } else if (a.ss_family == AF_INET6) {
      const auto& v6 = reinterpret_cast<const sockaddr_in6&>(a);
      inet_ntop(AF_INET6, &v6.sin6_addr, text, sizeof(text));
      port = ntohs(v6.sin6_port);
    }
    ip = text;
  }

  int sock_;
  const HttpLimits& limits_;
  SteadyClock::time_point read_deadline_, write_deadline_;
  char buf_[4096];
  size_t pos_ = 0, len_ = 0;
  size_t header_read_ = 0, body_read_ = 0;
  uint32_t tail_ = 0;
  bool header_done_ = false, exceeded_ = false;
  mutable bool timed_out_ = false;
};

void Refuse(int sock, const char* why) {
  const std::string body = fmt::format("{{\"error\": \"{}\"}}\n", why);
  const std::string reply = fmt::format(
      "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: {}\r\n"
      "Connection: close\r\nRetry-After: 1\r\n\r\n{}", body.size(), body);
  // Never waits: a peer that does not read its refusal just does not get it.
  (void)::send(sock, reply.data(), reply.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
}

void Close(int sock) {
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
}

}  // namespace

GuardedHttpServer::GuardedHttpServer(HttpLimits limits) : limits_(limits) {
  const size_t threads = limits_.threads;
  new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  set_payload_max_length(limits_.max_body_bytes);
  set_keep_alive_max_count(1);
}

bool GuardedHttpServer::Admit(const std::string& peer) {
  std::lock_guard lock(mu_);
  if (open_ >= limits_.max_connections) {
    refused_busy_.fetch_add(1);
    return false;
  }
  size_t& mine = per_peer_[peer];
  if (mine >= limits_.max_per_peer) {
    refused_peer_.fetch_add(1);
    if (mine == 0) per_peer_.erase(peer);
    return false;
  }
  ++mine;
  ++open_;
  return true;
}

void GuardedHttpServer::Release(const std::string& peer) {
  std::lock_guard lock(mu_);
  --open_;
  if (--per_peer_[peer] == 0) per_peer_.erase(peer);
}

bool GuardedHttpServer::process_and_close_socket(socket_t sock) {
  const std::string peer = ConnectionPeerKey(sock);
  if (!Admit(peer)) {
    Refuse(sock, "too many connections (from this user, or in all); retry shortly");
    Close(sock);
    return false;
  }
  BoundedStream stream(sock, limits_);
  bool closed = false;
  const auto who = [&peer](httplib::Request& req) {
    req.headers.erase(kPeerHeader);  // the client's word is not taken for it
    req.set_header(kPeerHeader, peer);
  };
  const bool ok = process_request(stream, /*close_connection=*/true, closed, who);
  if (stream.cut_off()) cut_off_.fetch_add(1);
  served_.fetch_add(1);
  Close(sock);
  Release(peer);
  return ok;
}

nlohmann::json GuardedHttpServer::Stats() const {
  return {{"served", served_.load()}, {"refused_busy", refused_busy_.load()}, {"refused_per_peer", refused_peer_.load()},
          {"cut_off", cut_off_.load()}};
}

}  // namespace rankscope::daemon

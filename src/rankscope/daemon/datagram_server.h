// A thread that receives datagrams on one socket and hands each to a handler, which replies
// inline. Blocks in poll() on the socket and a stop eventfd: no timer wake-ups while idle.
// A datagram reaches the handler only with the kernel's word on its sender (SCM_CREDENTIALS)
// and whole (never truncated); the handler needs nothing else from the socket layer.
#pragma once

#include <atomic>
#include <functional>
#include <span>
#include <thread>

#include "rankscope/daemon/unix_socket.h"

namespace rankscope::daemon {

class DatagramServer {
 public:
  using Handler = std::function<void(std::span<const uint8_t> bytes, const Datagram& meta, UnixDgramSocket& socket)>;

  DatagramServer(UnixDgramSocket socket, Handler handler, size_t max_datagram);
  // Starts the receive thread; separate from construction so that the owner can store the
  // server before the handler may run.
  void Start();
  ~DatagramServer();  // stops and joins
  DatagramServer(const DatagramServer&) = delete;
  DatagramServer& operator=(const DatagramServer&) = delete;

  // Sends from the server's own socket (so that replies and pushes come from its address).
  Status SendTo(const UnixAddress& to, std::span<const uint8_t> bytes) { return socket_.SendTo(to, bytes); }
  const UnixAddress& address() const { return socket_.address(); }
  uint64_t received() const { return received_.load(); }
  uint64_t malformed() const { return malformed_.load(); }
  uint64_t refused() const { return refused_.load(); }
  void CountMalformed() { malformed_.fetch_add(1); }
  // A well-formed datagram the daemon will not act on: no credentials, a claim the kernel
  // contradicts (another process's pid), or a registry quota.
  void CountRefused() { refused_.fetch_add(1); }

 private:
  void Loop();

  UnixDgramSocket socket_;
  Handler handler_;
  size_t max_datagram_;
  int stop_fd_ = -1;
  std::atomic<uint64_t> received_{0}, malformed_{0}, refused_{0};
  std::thread thread_;
};

}  // namespace rankscope::daemon

#include "rankscope/daemon/datagram_server.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <vector>

namespace rankscope::daemon {

DatagramServer::DatagramServer(UnixDgramSocket socket, Handler handler, size_t max_datagram)
    : socket_(std::move(socket)), handler_(std::move(handler)), max_datagram_(max_datagram) {
  stop_fd_ = ::eventfd(0, EFD_CLOEXEC);
}

void DatagramServer::Start() { thread_ = std::thread([this] { Loop(); }); }

DatagramServer::~DatagramServer() {
  uint64_t one = 1;
  if (::write(stop_fd_, &one, sizeof(one)) < 0) { /* the loop also ends when the socket closes */ }
  if (thread_.joinable()) thread_.join();
  ::close(stop_fd_);
}

void DatagramServer::Loop() {
  std::vector<uint8_t> buf(max_datagram_);
  pollfd fds[2] = {{socket_.fd(), POLLIN, 0}, {stop_fd_, POLLIN, 0}};
  for (;;) {
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents) return;
    if (!(fds[0].revents & POLLIN)) continue;
    auto d = socket_.Receive(buf);
    if (!d.ok()) continue;
    received_.fetch_add(1);
    if (d->truncated) {
      malformed_.fetch_add(1);
      continue;
    }
    if (!d->peer.known || d->peer.pid <= 0) {
      refused_.fetch_add(1);  // a sender the kernel cannot name (another pid namespace)
      continue;
    }
    handler_(std::span<const uint8_t>(buf.data(), d->size), *d, socket_);
  }
}

}  // namespace rankscope::daemon

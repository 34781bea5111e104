#include "rankscope/daemon/tcp_peer.h"

#include <arpa/inet.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include <fmt/format.h>

#include "rankscope/daemon/unique_fd.h"

namespace rankscope::daemon {
namespace {

bool IsLoopback(const sockaddr_storage& a) {
  if (a.ss_family == AF_INET) {
    return (ntohl(reinterpret_cast<const sockaddr_in&>(a).sin_addr.s_addr) >> 24) == 127;
  }
  if (a.ss_family == AF_INET6) {
    const in6_addr& v6 = reinterpret_cast<const sockaddr_in6&>(a).sin6_addr;
    if (IN6_IS_ADDR_LOOPBACK(&v6)) return true;
    return IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127;
  }
  return false;
}

// Port (network order) and address words of an IPv4/IPv6 socket address, for inet_diag.
void Fill(const sockaddr_storage& a, __be16* port, __be32 addr[4]) {
  if (a.ss_family == AF_INET) {
    const auto& v4 = reinterpret_cast<const sockaddr_in&>(a);
    *port = v4.sin_port;
    addr[0] = v4.sin_addr.s_addr;
  } else {
    const auto& v6 = reinterpret_cast<const sockaddr_in6&>(a);
    *port = v6.sin6_port;
    std::memcpy(addr, &v6.sin6_addr, 16);
  }
}

std::string AddressText(const sockaddr_storage& a) {
  char buf[INET6_ADDRSTRLEN] = "?";
  if (a.ss_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(a).sin_addr, buf, sizeof(buf));
  } else if (a.ss_family == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6&>(a).sin6_addr, buf, sizeof(buf));
  }
  return buf;
}

}  // namespace

std::optional<uid_t> LoopbackPeerUid(int fd) {
  sockaddr_storage local{}, peer{};
  socklen_t local_len = sizeof(local), peer_len = sizeof(peer);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_len) != 0 ||
      ::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_len) != 0 || !IsLoopback(peer)) {
    return std::nullopt;
  }
  UniqueFd nl(::socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG));
  if (!nl.valid()) return std::nullopt;
  const timeval wait{1, 0};  // the kernel answers at once; never hang a worker on it
  ::setsockopt(nl.get(), SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait));
  struct {
    nlmsghdr header;
    inet_diag_req_v2 body;
  } req{};
  req.header.nlmsg_len = sizeof(req);
  req.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  req.header.nlmsg_flags = NLM_F_REQUEST;
  req.body.sdiag_family = static_cast<__u8>(peer.ss_family);
  req.body.sdiag_protocol = IPPROTO_TCP;
  req.body.idiag_states = ~0u;
  // The peer's own socket: its local end is the peer address, its remote end is us.
  Fill(peer, &req.body.id.idiag_sport, req.body.id.idiag_src);
  Fill(local, &req.body.id.idiag_dport, req.body.id.idiag_dst);
  req.body.id.idiag_cookie[0] = req.body.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (::sendto(nl.get(), &req, sizeof(req), 0, reinterpret_cast<sockaddr*>(&kernel), sizeof(kernel)) < 0) {
    return std::nullopt;
  }
  alignas(nlmsghdr) char buf[8192];
  const ssize_t n = ::recv(nl.get(), buf, sizeof(buf), 0);
  if (n < static_cast<ssize_t>(NLMSG_LENGTH(sizeof(inet_diag_msg)))) return std::nullopt;
  const auto* h = reinterpret_cast<const nlmsghdr*>(buf);
  if (!NLMSG_OK(h, static_cast<unsigned>(n)) || h->nlmsg_type != SOCK_DIAG_BY_FAMILY) return std::nullopt;
  return static_cast<const inet_diag_msg*>(NLMSG_DATA(h))->idiag_uid;
}

std::string ConnectionPeerKey(int fd) {
  if (auto uid = LoopbackPeerUid(fd)) return fmt::format("uid:{}", *uid);
  sockaddr_storage peer{};
  socklen_t len = sizeof(peer);
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &len) != 0) return "unknown";
  return "ip:" + AddressText(peer);
}

}  // namespace rankscope::daemon

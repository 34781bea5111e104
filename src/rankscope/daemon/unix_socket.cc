#include "rankscope/daemon/unix_socket.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace rankscope::daemon {

StatusOr<UnixAddress> UnixAddress::Abstract(std::string_view name, bool with_trailing_nul) {
  UnixAddress a;
  a.addr.sun_family = AF_UNIX;
  const size_t extra = with_trailing_nul ? 2 : 1;
  if (name.empty() || name.size() + extra > sizeof(a.addr.sun_path)) {
    return InvalidArgument("abstract socket name '{}' is empty or longer than {} bytes", name,
                           sizeof(a.addr.sun_path) - extra);
  }
  a.addr.sun_path[0] = '\0';
  std::memcpy(a.addr.sun_path + 1, name.data(), name.size());
  a.len = static_cast<socklen_t>(sizeof(sa_family_t) + name.size() + extra);
  return a;
}

StatusOr<UnixAddress> UnixAddress::Path(std::string_view path) {
  UnixAddress a;
  a.addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() + 1 > sizeof(a.addr.sun_path)) {
    return InvalidArgument("socket path '{}' is empty or longer than {} bytes", path,
                           sizeof(a.addr.sun_path) - 1);
  }
  std::memcpy(a.addr.sun_path, path.data(), path.size());
  a.addr.sun_path[path.size()] = '\0';
  a.len = static_cast<socklen_t>(sizeof(sa_family_t) + path.size() + 1);
  return a;
}

StatusOr<UnixAddress> UnixAddress::Parse(std::string_view spec) {
  if (!spec.empty() && spec[0] == '@') return Abstract(spec.substr(1), false);
  return Path(spec);
}

std::string UnixAddress::ToString() const {
  if (len <= sizeof(sa_family_t)) return "(unnamed)";
  const size_t n = len - sizeof(sa_family_t);
  if (!is_abstract()) return std::string(addr.sun_path, strnlen(addr.sun_path, n));
  std::string out = "@";
  for (size_t i = 1; i < n; ++i) {
    if (addr.sun_path[i] == '\0') {
      out += "\\0";
    } else {
      out += addr.sun_path[i];
    }
  }
  return out;
}

bool UnixAddress::operator==(const UnixAddress& other) const {
  return len == other.len && std::memcmp(&addr, &other.addr, len) == 0;
}

namespace {

// Training processes may run as other users; the socket is the only thing they can reach.
// chmod() by name would follow a symlink swapped in after bind() (the directory may be /tmp):
// open the name without following, check it is a socket, and change that inode.
Status MakeReachable(const char* path) {
  const int fd = ::open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return IoError("socket {}: {}", path, std::strerror(errno));
  struct stat st {};
  Status s;
  if (::fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) {
    s = FailedPrecondition("{} is no longer the daemon's socket (replaced?)", path);
  } else if (::chmod(fmt::format("/proc/self/fd/{}", fd).c_str(), 0666) != 0) {
    s = IoError("chmod {}: {}", path, std::strerror(errno));
  }
  ::close(fd);
  return s;
}

}  // namespace

UnixDgramSocket::~UnixDgramSocket() {
  if (fd_ >= 0) ::close(fd_);
  if (unlink_on_close_) ::unlink(address_.addr.sun_path);
}

UnixDgramSocket::UnixDgramSocket(UnixDgramSocket&& other) noexcept { *this = std::move(other); }

UnixDgramSocket& UnixDgramSocket::operator=(UnixDgramSocket&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    address_ = other.address_;
    unlink_on_close_ = other.unlink_on_close_;
    other.fd_ = -1;
    other.unlink_on_close_ = false;
  }
  return *this;
}

StatusOr<UnixDgramSocket> UnixDgramSocket::Unbound() {
  int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return IoError("socket(AF_UNIX, SOCK_DGRAM): {}", std::strerror(errno));
  return UnixDgramSocket(fd);
}

StatusOr<UnixDgramSocket> UnixDgramSocket::Bind(const UnixAddress& address) {
  RANKSCOPE_ASSIGN_OR_RETURN(UnixDgramSocket sock, Unbound());
  if (!address.is_abstract()) ::unlink(address.addr.sun_path);
  if (::bind(sock.fd_, reinterpret_cast<const sockaddr*>(&address.addr), address.len) != 0) {
    return IoError("bind {}: {}{}", address.ToString(), std::strerror(errno),
                   errno == EADDRINUSE ? " (another daemon already serves this address)" : "");
  }
  const int on = 1;
  if (::setsockopt(sock.fd_, SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)) != 0) {
    return IoError("SO_PASSCRED on {}: {}", address.ToString(), std::strerror(errno));
  }
  if (!address.is_abstract()) {
    sock.unlink_on_close_ = true;
    RANKSCOPE_RETURN_IF_ERROR(MakeReachable(address.addr.sun_path));
  }
  sock.address_ = address;
  return sock;
}

StatusOr<Datagram> UnixDgramSocket::Receive(std::span<uint8_t> buf) {
  Datagram d;
  iovec iov{buf.data(), buf.size()};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(ucred))];
  msghdr msg{};
  msg.msg_name = &d.sender.addr;
  msg.msg_namelen = sizeof(d.sender.addr);
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  // MSG_TRUNC makes the kernel return the datagram's real length even when it did not fit.
  ssize_t n = ::recvmsg(fd_, &msg, MSG_TRUNC | MSG_CMSG_CLOEXEC);
  if (n < 0) return IoError("recvmsg: {}", std::strerror(errno));
  d.size = static_cast<size_t>(n);
  d.truncated = d.size > buf.size() || (msg.msg_flags & MSG_TRUNC);
  d.sender.len = msg.msg_namelen;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS && c->cmsg_len >= CMSG_LEN(sizeof(ucred))) {
      ucred cred{};
      std::memcpy(&cred, CMSG_DATA(c), sizeof(cred));
      d.peer = {true, static_cast<int32_t>(cred.pid), cred.uid, cred.gid};
    }
  }
  return d;
}

Status UnixDgramSocket::SendTo(const UnixAddress& to, std::span<const uint8_t> bytes) {
  ssize_t n = ::sendto(fd_, bytes.data(), bytes.size(), MSG_DONTWAIT | MSG_NOSIGNAL,
                       reinterpret_cast<const sockaddr*>(&to.addr), to.len);
  if (n < 0) return IoError("sendto {}: {}", to.ToString(), std::strerror(errno));
  return OkStatus();
}

}  // namespace rankscope::daemon

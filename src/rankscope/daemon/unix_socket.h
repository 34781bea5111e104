// Unix datagram sockets: the transport of both the Kineto endpoint and the collector endpoint.
//
// An address is either abstract (sun_path[0] == '\0', per network namespace, no file) or a
// filesystem path. Kineto counts a trailing NUL in abstract names (see KINETO_IPC.md), so the
// address keeps its exact length instead of being rebuilt from a string.
#pragma once

#include <sys/socket.h>
#include <sys/un.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "rankscope/base/status.h"

namespace rankscope::daemon {

struct UnixAddress {
  sockaddr_un addr{};
  socklen_t len = 0;

  // "\0name" (+ "\0" counted in the length when with_trailing_nul, as Kineto does).
  static StatusOr<UnixAddress> Abstract(std::string_view name, bool with_trailing_nul);
  static StatusOr<UnixAddress> Path(std::string_view path);
  // "@name" is abstract (no trailing NUL), anything else a filesystem path.
  static StatusOr<UnixAddress> Parse(std::string_view spec);

  bool is_abstract() const { return len > sizeof(sa_family_t) && addr.sun_path[0] == '\0'; }
  // Printable form: "@name" for abstract addresses (NULs shown as "\0"), else the path.
  std::string ToString() const;
  bool operator==(const UnixAddress& other) const;
};

// Who sent a datagram, as the kernel says (SCM_CREDENTIALS): a process can only send its own
// pid, uid and gid (unless it has CAP_SYS_ADMIN / CAP_SETUID, i.e. is root already). pid is 0
// when the sender lives in a pid namespace the daemon cannot see.
struct PeerCredentials {
  bool known = false;
  int32_t pid = 0;
  uid_t uid = 0;
  gid_t gid = 0;
};

struct Datagram {
  size_t size = 0;        // bytes received (the whole datagram, even when truncated into buf)
  bool truncated = false;
  UnixAddress sender;
  PeerCredentials peer;
};

class UnixDgramSocket {
 public:
  UnixDgramSocket() = default;
  ~UnixDgramSocket();
  UnixDgramSocket(UnixDgramSocket&& other) noexcept;
  UnixDgramSocket& operator=(UnixDgramSocket&& other) noexcept;
  UnixDgramSocket(const UnixDgramSocket&) = delete;
  UnixDgramSocket& operator=(const UnixDgramSocket&) = delete;

  // Binds a new socket that receives its senders' credentials (SO_PASSCRED). A filesystem path
  // is unlinked first and made 0666 after binding so that training processes of any user on
  // the node can reach the daemon.
  static StatusOr<UnixDgramSocket> Bind(const UnixAddress& address);
  // An unbound socket for sending only (tests, the collector side in C++).
  static StatusOr<UnixDgramSocket> Unbound();

  // Blocks until a datagram arrives (or returns kIoError). The caller polls fd() first when it
  // must not block.
  StatusOr<Datagram> Receive(std::span<uint8_t> buf);
  // Never blocks: a peer whose queue is full or that is gone is simply not reached, and the
  // error says so; the daemon must never wait on a training process.
  Status SendTo(const UnixAddress& to, std::span<const uint8_t> bytes);

  int fd() const { return fd_; }
  const UnixAddress& address() const { return address_; }

 private:
  explicit UnixDgramSocket(int fd) : fd_(fd) {}
  int fd_ = -1;
  UnixAddress address_;
  bool unlink_on_close_ = false;
};

}  // namespace rankscope::daemon

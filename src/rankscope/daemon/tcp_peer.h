// Who is at the other end of an accepted TCP connection. On loopback every local user comes
// from 127.0.0.1, so the address says nothing: the kernel is asked instead (NETLINK_SOCK_DIAG)
// which uid owns the peer's socket, as `ss -e` shows it. This is what lets the HTTP API limit
// connections per local user before anything is authenticated.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

namespace rankscope::daemon {

// The uid owning the other end of the connected TCP socket `fd`, when that end is on this
// host's loopback; nullopt otherwise (or when the kernel cannot say).
std::optional<uid_t> LoopbackPeerUid(int fd);

// "uid:<n>" for a local user (loopback), else "ip:<address>": the key connection limits use.
std::string ConnectionPeerKey(int fd);

}  // namespace rankscope::daemon

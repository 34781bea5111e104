// The Kineto-compatible endpoint: answers the polls of plain PyTorch processes started with
// KINETO_USE_DAEMON=1 (protocol in ../shared/KINETO_IPC.md). The first poll registers a
// process; a pending configuration is handed out once, in the reply to a poll. Replies are
// sent inline from the receive thread: Kineto waits only ~90 ms for them.
//
// A poll names its sender in its first pid; it is answered only when that is the pid the
// kernel reports for the datagram, so no process can take another's configuration.
#pragma once

#include <memory>

#include "rankscope/daemon/capture_manager.h"
#include "rankscope/daemon/datagram_server.h"

namespace rankscope::daemon {

class KinetoEndpoint {
 public:
  // `socket_dir` empty: the abstract name "dynolog" (with its trailing NUL); else
  // <socket_dir>/dynolog, as clients with KINETO_IPC_SOCKET_DIR expect.
  static StatusOr<std::unique_ptr<KinetoEndpoint>> Start(const std::string& socket_dir, ProcessRegistry* registry,
                                                         CaptureManager* captures);
  std::string address() const { return server_->address().ToString(); }
  uint64_t polls() const { return server_->received(); }
  uint64_t malformed() const { return server_->malformed(); }
  uint64_t refused() const { return server_->refused(); }

 private:
  KinetoEndpoint(ProcessRegistry* registry, CaptureManager* captures) : registry_(registry), captures_(captures) {}
  void Handle(std::span<const uint8_t> bytes, const Datagram& meta, UnixDgramSocket& socket);
  void OnRequest(std::span<const uint8_t> payload, const Datagram& meta, UnixDgramSocket& socket);
  void OnContext(std::span<const uint8_t> payload, const Datagram& meta, UnixDgramSocket& socket);
  ProcIdentity IdentityOf(const Datagram& meta);

  ProcessRegistry* registry_;
  CaptureManager* captures_;
  std::unique_ptr<DatagramServer> server_;
};

}  // namespace rankscope::daemon

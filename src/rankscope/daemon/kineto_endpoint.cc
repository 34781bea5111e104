#include "rankscope/daemon/kineto_endpoint.h"

#include "rankscope/daemon/kineto_wire.h"

namespace rankscope::daemon {

StatusOr<std::unique_ptr<KinetoEndpoint>> KinetoEndpoint::Start(const std::string& socket_dir, ProcessRegistry* registry,
                                                                 CaptureManager* captures) {
  StatusOr<UnixAddress> addr = socket_dir.empty() ? UnixAddress::Abstract("dynolog", /*with_trailing_nul=*/true)
                                                  : UnixAddress::Path(socket_dir + "/dynolog");
  if (!addr.ok()) return addr.status();
  RANKSCOPE_ASSIGN_OR_RETURN(UnixDgramSocket sock, UnixDgramSocket::Bind(*addr));
  std::unique_ptr<KinetoEndpoint> ep(new KinetoEndpoint(registry, captures));
  KinetoEndpoint* self = ep.get();
  ep->server_ = std::make_unique<DatagramServer>(
      std::move(sock),
      [self](std::span<const uint8_t> bytes, const Datagram& meta, UnixDgramSocket& s) { self->Handle(bytes, meta, s); },
      64 * 1024);
  ep->server_->Start();
  return ep;
}

void KinetoEndpoint::Handle(std::span<const uint8_t> bytes, const Datagram& meta, UnixDgramSocket& socket) {
  auto msg = kineto::ParseMessage(bytes);
  if (msg.ok() && msg->type == "req") return OnRequest(msg->payload, meta, socket);
  if (msg.ok() && msg->type == "ctxt") return OnContext(msg->payload, meta, socket);
  server_->CountMalformed();
}

ProcIdentity KinetoEndpoint::IdentityOf(const Datagram& meta) {
  const int32_t pid = meta.peer.pid;
  const uint64_t start = ProcessStartTicks(pid);
  // /proc is read once per process, at registration: its environment does not change.
  auto known = registry_->Get(pid);
  ProcIdentity id;
  if (known && known->identity.start_ticks == start) {
    id = known->identity;
  } else if (!registry_->HasRoomFor(meta.peer.uid)) {
    return id;  // start_ticks 0: refused without reading its /proc (a quota is full)
  } else if (auto read = ReadProcIdentity(pid); read.ok()) {
    id = *read;
  }
  id.uid = meta.peer.uid;
  id.gid = meta.peer.gid;
  id.start_ticks = start;
  return id;
}

void KinetoEndpoint::OnRequest(std::span<const uint8_t> payload, const Datagram& meta, UnixDgramSocket& socket) {
  auto req = kineto::ParseRequest(payload);
  if (!req.ok()) return server_->CountMalformed();
  const int32_t pid = meta.peer.pid;
  if (req->pids[0] != pid) return server_->CountRefused();  // a poll on another process's behalf
  const ProcIdentity identity = IdentityOf(meta);
  if (identity.start_ticks == 0) return server_->CountRefused();
  std::string config;
  if (registry_->SeenKineto(pid, req->type, req->job_id, req->pids, identity).ok()) {
    config = captures_->TakeKinetoConfig(pid, req->type);
  } else {
    server_->CountRefused();  // over a quota: answered (Kineto waits for it), with nothing
  }
  (void)socket.SendTo(meta.sender, kineto::EncodeConfigReply(config));
}

void KinetoEndpoint::OnContext(std::span<const uint8_t> payload, const Datagram& meta, UnixDgramSocket& socket) {
  auto ctxt = kineto::ParseContext(payload);
  if (!ctxt.ok()) return server_->CountMalformed();
  int32_t count = 0;
  for (const auto& p : registry_->List()) count += (p.kinds & kKinetoClient) && p.slurm_job_id == ctxt->job_id;
  (void)socket.SendTo(meta.sender, kineto::EncodeContextReply(count + 1));
}

}  // namespace rankscope::daemon

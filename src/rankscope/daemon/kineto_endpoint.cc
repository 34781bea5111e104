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
  if (!msg.ok()) {
    server_->CountMalformed();
    return;
  }
  if (msg->type == "req") {
    auto req = kineto::ParseRequest(msg->payload);
    if (!req.ok()) {
      server_->CountMalformed();
      return;
    }
    const int32_t pid = req->pids[0];
    // /proc is read once, at registration: the environment of a process does not change.
    ProcIdentity identity;
    if (!registry_->Contains(pid)) {
      if (auto id = ReadProcIdentity(pid); id.ok()) identity = *id;
    }
    registry_->SeenKineto(pid, req->type, req->job_id, req->pids, identity);
    const std::string config = captures_->TakeKinetoConfig(pid, req->type);
    (void)socket.SendTo(meta.sender, kineto::EncodeConfigReply(config));
  } else if (msg->type == "ctxt") {
    auto ctxt = kineto::ParseContext(msg->payload);
    if (!ctxt.ok()) {
      server_->CountMalformed();
      return;
    }
    int32_t count = 0;
    for (const auto& p : registry_->List()) count += (p.kinds & kKinetoClient) && p.slurm_job_id == ctxt->job_id;
    (void)socket.SendTo(meta.sender, kineto::EncodeContextReply(count + 1));
  } else {
    server_->CountMalformed();
  }
}

}  // namespace rankscope::daemon

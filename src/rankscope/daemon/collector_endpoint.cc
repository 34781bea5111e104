#include "rankscope/daemon/collector_endpoint.h"

namespace rankscope::daemon {

StatusOr<std::unique_ptr<CollectorEndpoint>> CollectorEndpoint::Start(const UnixAddress& address, const std::string& out_dir,
                                                                      ProcessRegistry* registry) {
  RANKSCOPE_ASSIGN_OR_RETURN(UnixDgramSocket sock, UnixDgramSocket::Bind(address));
  std::unique_ptr<CollectorEndpoint> ep(new CollectorEndpoint(out_dir, registry));
  CollectorEndpoint* self = ep.get();
  ep->server_ = std::make_unique<DatagramServer>(
      std::move(sock),
      [self](std::span<const uint8_t> bytes, const Datagram& meta, UnixDgramSocket&) { self->Handle(bytes, meta); },
      64 * 1024);
  ep->server_->Start();
  return ep;
}

Status CollectorEndpoint::Send(const UnixAddress& to, const nlohmann::json& msg) {
  const std::string text = msg.dump();
  return server_->SendTo(to, {reinterpret_cast<const uint8_t*>(text.data()), text.size()});
}

ProcessInfo CollectorEndpoint::FromHeartbeat(const nlohmann::json& msg, const Datagram& meta) {
  ProcessInfo p;
  p.pid = msg.at("pid").get<int32_t>();
  p.identity.rank = msg.value("rank", -1);
  p.identity.local_rank = msg.value("local_rank", -1);
  p.identity.world_size = msg.value("world_size", -1);
  p.identity.job = SanitizeName(msg.value("job", fmt::format("pid{}", p.pid)));
  p.identity.uid = msg.value("uid", 0u);
  p.identity.command = msg.value("cmd", "").substr(0, 200);
  p.host = msg.value("host", "");
  p.step = msg.value("step", int64_t{-1});
  p.step_ms = msg.value("step_ms", 0.0);
  p.busy = msg.value("busy", false);
  p.fr_pending_s = msg.value("fr_pending_s", -1.0);
  p.collector_address = meta.sender;
  return p;
}

void CollectorEndpoint::Handle(std::span<const uint8_t> bytes, const Datagram& meta) {
  // Whatever a collector sends, nothing it sends may take the daemon down.
  try {
    const auto msg = nlohmann::json::parse(bytes.begin(), bytes.end());
    const std::string op = msg.value("op", "");
    const int32_t pid = msg.at("pid").get<int32_t>();
    CaptureManager* captures = captures_.load();
    if (op == "hello" || op == "beat") {
      const bool is_new = registry_->SeenCollector(FromHeartbeat(msg, meta));
      if (op == "hello" || is_new) (void)Send(meta.sender, {{"op", "welcome"}, {"out_dir", out_dir_}});
    } else if (op == "report" && captures) {
      captures->OnCollectorReport(pid, msg);
    } else if (op == "auto" && captures) {
      if (auto p = registry_->Get(pid)) captures->OnAutoTrigger(*p, msg);
    } else {
      server_->CountMalformed();
    }
  } catch (const std::exception&) {
    server_->CountMalformed();
  }
}

}  // namespace rankscope::daemon

#include "rankscope/daemon/collector_endpoint.h"

#include <cmath>
#include <string_view>

#include "rankscope/base/utf8.h"

namespace rankscope::daemon {
namespace {

constexpr size_t kMaxDatagram = 64 * 1024;
constexpr size_t kMaxCommand = 200;
constexpr size_t kMaxHost = 255;

// Valid UTF-8, cut between characters: these strings are written out as JSON.
std::string Clip(const std::string& s, size_t n) { return ClipUtf8(s, n); }

// A duration in ms or s: any JSON number (a float is right here) within [lo, 1e9].
StatusOr<double> Duration(const nlohmann::json& msg, const char* key, double fallback, double lo) {
  auto it = msg.find(key);
  if (it == msg.end()) return fallback;
  if (!it->is_number()) return InvalidArgument("{} must be a number", key);
  const double v = it->get<double>();
  if (!std::isfinite(v) || v < lo || v > 1e9) return InvalidArgument("{} must be in [{}, 1e9]", key, lo);
  return v;
}

}  // namespace

StatusOr<ProcessInfo> ProcessFromHeartbeat(const nlohmann::json& msg, const Datagram& meta) {
  ProcessInfo p;
  p.pid = meta.peer.pid;  // the kernel's, whatever the message says
  p.identity.uid = meta.peer.uid;
  p.identity.gid = meta.peer.gid;
  p.collector_address = meta.sender;
  if (p.collector_address.len <= sizeof(sa_family_t)) return InvalidArgument("the collector's socket has no address");
  RANKSCOPE_ASSIGN_OR_RETURN(int64_t rank, IntegerField(msg, "rank", -1, -1, kMaxRank));
  RANKSCOPE_ASSIGN_OR_RETURN(int64_t local_rank, IntegerField(msg, "local_rank", -1, -1, kMaxRank));
  RANKSCOPE_ASSIGN_OR_RETURN(int64_t world_size, IntegerField(msg, "world_size", -1, -1, kMaxRank));
  RANKSCOPE_ASSIGN_OR_RETURN(p.step, IntegerField(msg, "step", -1, -1, kMaxStep));
  RANKSCOPE_ASSIGN_OR_RETURN(p.step_ms, Duration(msg, "step_ms", 0.0, 0.0));
  RANKSCOPE_ASSIGN_OR_RETURN(p.fr_pending_s, Duration(msg, "fr_pending_s", -1.0, -1.0));
  RANKSCOPE_ASSIGN_OR_RETURN(p.busy, BoolField(msg, "busy", false));
  RANKSCOPE_ASSIGN_OR_RETURN(std::string job, StringField(msg, "job", kMaxDatagram));
  RANKSCOPE_ASSIGN_OR_RETURN(std::string cmd, StringField(msg, "cmd", kMaxDatagram));
  RANKSCOPE_ASSIGN_OR_RETURN(std::string host, StringField(msg, "host", kMaxDatagram));
  p.identity.rank = static_cast<int32_t>(rank);
  p.identity.local_rank = static_cast<int32_t>(local_rank);
  p.identity.world_size = static_cast<int32_t>(world_size);
  p.identity.job = SanitizeName(job.empty() ? fmt::format("pid{}", p.pid) : job);
  p.identity.command = Clip(std::move(cmd), kMaxCommand);
  p.host = Clip(std::move(host), kMaxHost);
  return p;
}

StatusOr<std::unique_ptr<CollectorEndpoint>> CollectorEndpoint::Start(const UnixAddress& address, const std::string& out_dir,
                                                                      ProcessRegistry* registry) {
  RANKSCOPE_ASSIGN_OR_RETURN(UnixDgramSocket sock, UnixDgramSocket::Bind(address));
  std::unique_ptr<CollectorEndpoint> ep(new CollectorEndpoint(out_dir, registry));
  CollectorEndpoint* self = ep.get();
  ep->server_ = std::make_unique<DatagramServer>(
      std::move(sock),
      [self](std::span<const uint8_t> bytes, const Datagram& meta, UnixDgramSocket&) { self->Handle(bytes, meta); },
      kMaxDatagram);
  ep->server_->Start();
  return ep;
}

Status CollectorEndpoint::Send(const UnixAddress& to, const nlohmann::json& msg) {
  const std::string text = msg.dump();
  return server_->SendTo(to, {reinterpret_cast<const uint8_t*>(text.data()), text.size()});
}

void CollectorEndpoint::Handle(std::span<const uint8_t> bytes, const Datagram& meta) {
  using Handler = void (CollectorEndpoint::*)(const nlohmann::json&, const Datagram&);
  static constexpr std::pair<std::string_view, Handler> kHandlers[] = {
      {"hello", &CollectorEndpoint::OnHeartbeat},
      {"beat", &CollectorEndpoint::OnHeartbeat},
      {"report", &CollectorEndpoint::OnReport},
      {"auto", &CollectorEndpoint::OnAuto},
  };
  // Whatever a collector sends, nothing it sends may take the daemon down: no exceptions.
  const auto msg = nlohmann::json::parse(bytes.begin(), bytes.end(), nullptr, /*allow_exceptions=*/false);
  auto op = msg.is_object() ? StringField(msg, "op", 16) : StatusOr<std::string>(InvalidArgument("not an object"));
  if (op.ok()) {
    for (const auto& [name, handler] : kHandlers) {
      if (name == *op) return (this->*handler)(msg, meta);
    }
  }
  server_->CountMalformed();
}

void CollectorEndpoint::OnHeartbeat(const nlohmann::json& msg, const Datagram& meta) {
  auto p = ProcessFromHeartbeat(msg, meta);
  if (!p.ok()) return server_->CountMalformed();
  p->identity.start_ticks = ProcessStartTicks(p->pid);
  if (p->identity.start_ticks == 0) return server_->CountRefused();  // gone already, or not ours to see
  auto is_new = registry_->SeenCollector(*p);
  if (!is_new.ok()) return server_->CountRefused();  // over a quota
  if (*is_new || msg.value("op", "") == "hello") (void)Send(meta.sender, {{"op", "welcome"}, {"out_dir", out_dir_}});
}

void CollectorEndpoint::OnReport(const nlohmann::json& msg, const Datagram& meta) {
  if (CaptureManager* captures = captures_.load()) captures->OnCollectorReport(meta.peer.pid, msg);
}

void CollectorEndpoint::OnAuto(const nlohmann::json& msg, const Datagram& meta) {
  CaptureManager* captures = captures_.load();
  auto p = registry_->Get(meta.peer.pid);
  if (!captures || !p || p->identity.start_ticks != ProcessStartTicks(meta.peer.pid)) return server_->CountRefused();
  captures->OnAutoTrigger(*p, msg);
}

}  // namespace rankscope::daemon

// libFuzzer target for what rankscoped and the CLI parse from outside: Kineto IPC datagrams and
// collector heartbeats (any local process can send them), trace/snapshot request bodies of the
// HTTP API, token files, --hosts files and --peers files. The first byte picks the parser; the rest is its
// input. Any input must give a value or a Status, never a crash, an exception or undefined
// behaviour (a float where an integer is expected included).
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include <nlohmann/json.hpp>

#include "rankscope/cluster/host_map.h"
#include "rankscope/daemon/capture_spec.h"
#include "rankscope/daemon/collector_endpoint.h"
#include "rankscope/daemon/kineto_wire.h"
#include "rankscope/daemon/peers.h"
#include "rankscope/daemon/token_file.h"

namespace {

void FuzzKinetoDatagram(std::span<const uint8_t> bytes) {
  namespace kineto = rankscope::daemon::kineto;
  auto message = kineto::ParseMessage(bytes);
  if (!message.ok()) return;
  if (message->type == "req") (void)kineto::ParseRequest(message->payload);
  if (message->type == "ctxt") (void)kineto::ParseContext(message->payload);
}

void FuzzRequestBody(std::string_view text) {
  const nlohmann::json body = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded()) return;
  (void)rankscope::daemon::TraceSpecFromJson(body);
  (void)rankscope::daemon::SnapshotSpecFromJson(body);
}

void FuzzHeartbeat(std::string_view text) {
  const nlohmann::json msg = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!msg.is_object()) return;
  rankscope::daemon::Datagram meta;
  meta.peer = {true, 4242, 1000, 1000};
  meta.sender = *rankscope::daemon::UnixAddress::Abstract("fuzz", false);
  (void)rankscope::daemon::ProcessFromHeartbeat(msg, meta);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::span<const uint8_t> rest(data + 1, size - 1);
  const std::string_view text(reinterpret_cast<const char*>(rest.data()), rest.size());
  switch (data[0] % 6) {
    case 0: FuzzKinetoDatagram(rest); break;
    case 1: FuzzRequestBody(text); break;
    case 2: (void)rankscope::ParseHostMap(text); break;
    case 3: FuzzHeartbeat(text); break;
    case 5: (void)rankscope::daemon::ParsePeers(text); break;
    default: (void)rankscope::daemon::CheckToken(text); break;
  }
  return 0;
}

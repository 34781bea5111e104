#include "rankscope/daemon/kineto_wire.h"

#include <cstring>

namespace rankscope::daemon::kineto {
namespace {

// The C structs of the client, for sizes and offsets only.
struct WireHeader {
  uint64_t size;
  char type[kTypeSize];
};
static_assert(sizeof(WireHeader) == kHeaderSize, "Kineto's Metadata is 40 bytes");

struct WireRequest {
  int32_t type;
  int32_t n;
  int64_t jobid;
  // int32_t pids[n] follows
};
static_assert(sizeof(WireRequest) == 16, "LibkinetoRequest header is 16 bytes");

struct WireContext {
  int32_t gpu;
  int32_t pid;
  int64_t jobid;
};
static_assert(sizeof(WireContext) == 16, "LibkinetoContext is 16 bytes");

// Kineto sends at most 10 ancestors + itself; anything far above is garbage.
constexpr int32_t kMaxPids = 64;

template <typename T>
T Load(std::span<const uint8_t> bytes, size_t offset) {
  T v;
  std::memcpy(&v, bytes.data() + offset, sizeof(T));
  return v;
}

}  // namespace

StatusOr<Message> ParseMessage(std::span<const uint8_t> datagram) {
  if (datagram.size() < kHeaderSize) {
    return DataLoss("Kineto datagram of {} bytes is shorter than its 40-byte header", datagram.size());
  }
  const uint64_t size = Load<uint64_t>(datagram, 0);
  if (size != datagram.size() - kHeaderSize) {
    return DataLoss("Kineto datagram says {} payload bytes but carries {}", size,
                    datagram.size() - kHeaderSize);
  }
  const char* type = reinterpret_cast<const char*>(datagram.data() + 8);
  Message m;
  m.type.assign(type, strnlen(type, kTypeSize));
  m.payload = datagram.subspan(kHeaderSize);
  return m;
}

StatusOr<Request> ParseRequest(std::span<const uint8_t> payload) {
  if (payload.size() < sizeof(WireRequest)) return DataLoss("Kineto req payload of {} bytes", payload.size());
  const auto head = Load<WireRequest>(payload, 0);
  if (head.n < 0 || head.n > kMaxPids ||
      payload.size() != sizeof(WireRequest) + sizeof(int32_t) * static_cast<size_t>(head.n)) {
    return DataLoss("Kineto req with n={} does not match its {} payload bytes", head.n, payload.size());
  }
  Request r;
  r.type = head.type;
  r.job_id = head.jobid;
  r.pids.resize(head.n);
  if (head.n > 0) std::memcpy(r.pids.data(), payload.data() + sizeof(WireRequest), sizeof(int32_t) * head.n);
  if (r.pids.empty() || r.pids[0] <= 0) return DataLoss("Kineto req without the sender's pid");
  return r;
}

StatusOr<Context> ParseContext(std::span<const uint8_t> payload) {
  if (payload.size() != sizeof(WireContext)) return DataLoss("Kineto ctxt payload of {} bytes", payload.size());
  const auto c = Load<WireContext>(payload, 0);
  return Context{c.gpu, c.pid, c.jobid};
}

std::vector<uint8_t> Encode(std::string_view type, std::span<const uint8_t> payload) {
  std::vector<uint8_t> out(kHeaderSize + payload.size(), 0);
  const uint64_t size = payload.size();
  std::memcpy(out.data(), &size, sizeof(size));
  std::memcpy(out.data() + 8, type.data(), std::min(type.size(), kTypeSize - 1));
  if (!payload.empty()) std::memcpy(out.data() + kHeaderSize, payload.data(), payload.size());
  return out;
}

std::vector<uint8_t> EncodeConfigReply(std::string_view config_text) {
  // The text is not NUL-terminated: the client builds std::string(buf, size).
  return Encode("req", {reinterpret_cast<const uint8_t*>(config_text.data()), config_text.size()});
}

std::vector<uint8_t> EncodeContextReply(int32_t process_count) {
  return Encode("ctxt", {reinterpret_cast<const uint8_t*>(&process_count), sizeof(process_count)});
}

std::vector<uint8_t> EncodeRequest(const Request& req) {
  std::vector<uint8_t> payload(sizeof(WireRequest) + sizeof(int32_t) * req.pids.size());
  WireRequest head{req.type, static_cast<int32_t>(req.pids.size()), req.job_id};
  std::memcpy(payload.data(), &head, sizeof(head));
  if (!req.pids.empty()) {
    std::memcpy(payload.data() + sizeof(head), req.pids.data(), sizeof(int32_t) * req.pids.size());
  }
  return Encode("req", payload);
}

}  // namespace rankscope::daemon::kineto

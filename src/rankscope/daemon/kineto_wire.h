// The datagram layout of Kineto's daemon client ("IPC fabric"), see ../shared/KINETO_IPC.md.
//
//   offset 0   uint64   size of the payload
//   offset 8   char[32] type, NUL-terminated: "req" or "ctxt"
//   offset 40  payload[size]
//
// Native byte order, no padding: the client memcpy()s C structs. Everything here is a pure
// function over bytes so that it is tested without sockets.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rankscope/base/status.h"

namespace rankscope::daemon::kineto {

inline constexpr size_t kTypeSize = 32;
inline constexpr size_t kHeaderSize = 8 + kTypeSize;
// Kineto's 'type' bit mask in a req: a client whose activity profiler is busy polls without
// bit 2 and must not be handed a configuration.
inline constexpr int32_t kEventProfiler = 1;
inline constexpr int32_t kActivityProfiler = 2;

struct Message {
  std::string type;                   // "req", "ctxt", ...
  std::span<const uint8_t> payload;   // points into the received bytes
};

// A poll for an on-demand configuration; the first one registers the process.
struct Request {
  int32_t type = 0;
  int64_t job_id = 0;             // SLURM_JOB_ID, 0 when unset
  std::vector<int32_t> pids;      // the process first, then its ancestors
};

// Old clients register with this before polling.
struct Context {
  int32_t gpu = 0;
  int32_t pid = 0;
  int64_t job_id = 0;
};

StatusOr<Message> ParseMessage(std::span<const uint8_t> datagram);
StatusOr<Request> ParseRequest(std::span<const uint8_t> payload);
StatusOr<Context> ParseContext(std::span<const uint8_t> payload);

// A whole datagram: header + payload.
std::vector<uint8_t> Encode(std::string_view type, std::span<const uint8_t> payload);
std::vector<uint8_t> EncodeConfigReply(std::string_view config_text);
std::vector<uint8_t> EncodeContextReply(int32_t process_count);
// What a Kineto client sends (used by tests and by `rankscoped --self-test`).
std::vector<uint8_t> EncodeRequest(const Request& req);

}  // namespace rankscope::daemon::kineto

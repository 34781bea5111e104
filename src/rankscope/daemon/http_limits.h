// The limits of the HTTP API's transport (GuardedHttpServer, http_server.h), applied before a
// request is parsed or authenticated.
#pragma once

#include <chrono>
#include <cstddef>

namespace rankscope::daemon {

struct HttpLimits {
  size_t max_connections = 64;   // open at once, in all
  size_t max_per_peer = 8;       // per local user (loopback) or remote address
  size_t threads = 32;           // requests served in parallel
  size_t max_header_bytes = 16 * 1024;
  size_t max_body_bytes = 1 << 20;
  std::chrono::milliseconds request_deadline{10'000};   // to receive the whole request
  std::chrono::milliseconds response_deadline{30'000};  // then to send the reply
};

}  // namespace rankscope::daemon

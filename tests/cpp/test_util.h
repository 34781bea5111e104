// Helpers shared by the C++ tests.
#pragma once

#include <cstdlib>
#include <string>

namespace rankscope::testing {

// ../shared (RANKSCOPE_SHARED overrides the path compiled in).
inline std::string SharedDir() {
  if (const char* env = std::getenv("RANKSCOPE_SHARED")) return env;
  return RANKSCOPE_SHARED_DIR;
}

inline std::string TracePath(const std::string& relative) { return SharedDir() + "/traces/" + relative; }

}  // namespace rankscope::testing

#include <isa-l/igzip_lib.h>

#include <stdexcept>
#include <vector>

namespace rankscope::testing {

// gzip-compresses `data` (isa-l, one member).
inline std::string Gzip(const std::string& data) {
  std::string out(data.size() + data.size() / 2 + 1024, '\0');
  isal_zstream stream;
  isal_deflate_stateless_init(&stream);
  stream.gzip_flag = IGZIP_GZIP;
  stream.end_of_stream = 1;
  stream.next_in = reinterpret_cast<uint8_t*>(const_cast<char*>(data.data()));
  stream.avail_in = static_cast<uint32_t>(data.size());
  stream.next_out = reinterpret_cast<uint8_t*>(out.data());
  stream.avail_out = static_cast<uint32_t>(out.size());
  if (isal_deflate_stateless(&stream) != COMP_OK) throw std::runtime_error("gzip failed");
  out.resize(stream.total_out);
  return out;
}

}  // namespace rankscope::testing

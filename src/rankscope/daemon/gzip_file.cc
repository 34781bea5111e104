#include "rankscope/daemon/gzip_file.h"

#include <isa-l/igzip_lib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace rankscope::daemon {
namespace {

constexpr size_t kChunk = 1 << 20;

StatusOr<size_t> ReadChunk(int fd, uint8_t* buf, size_t size) {
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::read(fd, buf + done, size - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return IoError("read: {}", std::strerror(errno));
    }
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  return done;
}

Status WriteAll(int fd, const uint8_t* data, size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return IoError("write: {}", std::strerror(errno));
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  return OkStatus();
}

}  // namespace

Status GzipStream(int in_fd, int out_fd) {
  std::vector<uint8_t> inbuf(kChunk), outbuf(kChunk);
  std::vector<uint8_t> level_buf(ISAL_DEF_LVL1_DEFAULT);
  isal_zstream z;
  isal_deflate_init(&z);
  z.gzip_flag = IGZIP_GZIP;
  z.level = 1;
  z.level_buf = level_buf.data();
  z.level_buf_size = static_cast<uint32_t>(level_buf.size());
  do {
    RANKSCOPE_ASSIGN_OR_RETURN(size_t n, ReadChunk(in_fd, inbuf.data(), kChunk));
    z.avail_in = static_cast<uint32_t>(n);
    z.next_in = inbuf.data();
    z.end_of_stream = n < kChunk ? 1 : 0;
    z.flush = NO_FLUSH;
    do {
      z.next_out = outbuf.data();
      z.avail_out = static_cast<uint32_t>(kChunk);
      if (isal_deflate(&z) != COMP_OK) return IoError("compression failed (isa-l)");
      RANKSCOPE_RETURN_IF_ERROR(WriteAll(out_fd, outbuf.data(), kChunk - z.avail_out));
    } while (z.avail_out == 0);
  } while (z.internal_state.state != ZSTATE_END);
  return OkStatus();
}

}  // namespace rankscope::daemon

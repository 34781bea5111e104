#include "rankscope/daemon/gzip_file.h"

#include <isa-l/igzip_lib.h>

#include <cstdio>
#include <memory>
#include <vector>

namespace rankscope::daemon {
namespace {

struct FileCloser {
  void operator()(FILE* f) const { if (f) std::fclose(f); }
};
using File = std::unique_ptr<FILE, FileCloser>;

}  // namespace

Status GzipFile(const std::string& src, const std::string& dst) {
  File in(std::fopen(src.c_str(), "rb"));
  if (!in) return IoError("cannot open {}: {}", src, std::strerror(errno));
  const std::string tmp = dst + ".tmp";
  File out(std::fopen(tmp.c_str(), "wb"));
  if (!out) return IoError("cannot create {}: {}", tmp, std::strerror(errno));

  constexpr size_t kChunk = 1 << 20;
  std::vector<uint8_t> inbuf(kChunk), outbuf(kChunk);
  std::vector<uint8_t> level_buf(ISAL_DEF_LVL1_DEFAULT);
  isal_zstream z;
  isal_deflate_init(&z);
  z.gzip_flag = IGZIP_GZIP;
  z.level = 1;
  z.level_buf = level_buf.data();
  z.level_buf_size = static_cast<uint32_t>(level_buf.size());

  bool ok = true;
  do {
    z.avail_in = static_cast<uint32_t>(std::fread(inbuf.data(), 1, kChunk, in.get()));
    z.next_in = inbuf.data();
    z.end_of_stream = std::feof(in.get()) ? 1 : 0;
    z.flush = NO_FLUSH;
    do {
      z.next_out = outbuf.data();
      z.avail_out = static_cast<uint32_t>(kChunk);
      if (isal_deflate(&z) != COMP_OK) { ok = false; break; }
      const size_t n = kChunk - z.avail_out;
      if (std::fwrite(outbuf.data(), 1, n, out.get()) != n) { ok = false; break; }
    } while (z.avail_out == 0 && ok);
  } while (ok && z.internal_state.state != ZSTATE_END && !std::ferror(in.get()));

  if (std::ferror(in.get())) ok = false;
  if (std::fflush(out.get()) != 0) ok = false;
  out.reset();
  if (!ok) {
    std::remove(tmp.c_str());
    return IoError("compressing {} into {} failed", src, dst);
  }
  if (std::rename(tmp.c_str(), dst.c_str()) != 0) {
    std::remove(tmp.c_str());
    return IoError("rename {} -> {}: {}", tmp, dst, std::strerror(errno));
  }
  return OkStatus();
}

}  // namespace rankscope::daemon

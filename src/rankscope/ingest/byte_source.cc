#include "rankscope/ingest/byte_source.h"

#include <fcntl.h>
#include <isa-l/igzip_lib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace rankscope {
namespace {

constexpr size_t kGzipInputWindow = 256 * 1024;

class FileSource final : public ByteSource {
 public:
  FileSource(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  ~FileSource() override { ::close(fd_); }

  StatusOr<size_t> Read(char* dst, size_t max) override {
    size_t done = 0;
    while (done < max) {
      const ssize_t n = ::read(fd_, dst + done, max - done);
      if (n < 0) {
        if (errno == EINTR) continue;
        return IoError("{}: read failed after {} bytes: {}", path_, consumed_, std::strerror(errno));
      }
      if (n == 0) break;
      done += static_cast<size_t>(n);
      consumed_ += static_cast<uint64_t>(n);
    }
    return done;
  }
  uint64_t raw_bytes_consumed() const override { return consumed_; }

 private:
  int fd_;
  std::string path_;
  uint64_t consumed_ = 0;
};

class MemorySource final : public ByteSource {
 public:
  explicit MemorySource(std::string_view data) : data_(data) {}
  StatusOr<size_t> Read(char* dst, size_t max) override {
    const size_t n = std::min(max, data_.size() - pos_);
    std::memcpy(dst, data_.data() + pos_, n);
    pos_ += n;
    return n;
  }
  uint64_t raw_bytes_consumed() const override { return pos_; }

 private:
  std::string_view data_;
  size_t pos_ = 0;
};

// Re-serves bytes that were read ahead to sniff the compression or the format, then the rest of
// the source.
class PrefixedSource final : public ByteSource {
 public:
  PrefixedSource(std::string prefix, std::unique_ptr<ByteSource> rest)
      : prefix_(std::move(prefix)), rest_(std::move(rest)) {}
  StatusOr<size_t> Read(char* dst, size_t max) override {
    if (pos_ < prefix_.size()) {
      const size_t n = std::min(max, prefix_.size() - pos_);
      std::memcpy(dst, prefix_.data() + pos_, n);
      pos_ += n;
      return n;
    }
    return rest_->Read(dst, max);
  }
  uint64_t raw_bytes_consumed() const override { return rest_->raw_bytes_consumed(); }
  bool is_gzip() const override { return rest_->is_gzip(); }

 private:
  std::string prefix_;
  size_t pos_ = 0;
  std::unique_ptr<ByteSource> rest_;
};

const char* InflateErrorText(int code) {
  switch (code) {
    case ISAL_INVALID_BLOCK: return "invalid deflate block";
    case ISAL_INVALID_SYMBOL: return "invalid deflate symbol";
    case ISAL_INVALID_LOOKBACK: return "invalid back-reference distance";
    case ISAL_INVALID_WRAPPER: return "invalid gzip header";
    case ISAL_UNSUPPORTED_METHOD: return "unsupported compression method";
    case ISAL_INCORRECT_CHECKSUM: return "CRC mismatch (corrupt data)";
    case ISAL_NEED_DICT: return "stream needs a preset dictionary";
    default: return "inflate failed";
  }
}

// Streams the members of a gzip file through isa-l's inflate.
class GzipSource final : public ByteSource {
 public:
  explicit GzipSource(std::unique_ptr<ByteSource> raw) : raw_(std::move(raw)), in_(kGzipInputWindow) {
    isal_inflate_init(&state_);
    state_.crc_flag = ISAL_GZIP;
  }
  bool is_gzip() const override { return true; }
  uint64_t raw_bytes_consumed() const override { return raw_->raw_bytes_consumed() - state_.avail_in; }

  StatusOr<size_t> Read(char* dst, size_t max) override {
    size_t produced = 0;
    while (produced < max && !done_) {
      if (state_.avail_in == 0 && !raw_eof_) {
        RANKSCOPE_ASSIGN_OR_RETURN(size_t n, raw_->Read(reinterpret_cast<char*>(in_.data()), in_.size()));
        if (n == 0) raw_eof_ = true;
        state_.next_in = in_.data();
        state_.avail_in = static_cast<uint32_t>(n);
      }
      if (state_.block_state == ISAL_BLOCK_FINISH) {
        RANKSCOPE_RETURN_IF_ERROR(StartNextMember());
        continue;
      }
      state_.next_out = reinterpret_cast<uint8_t*>(dst + produced);
      state_.avail_out = static_cast<uint32_t>(std::min<size_t>(max - produced, 1u << 30));
      const uint32_t before = state_.avail_out;
      const int rc = isal_inflate(&state_);
      if (rc < 0 || rc == ISAL_NEED_DICT) {
        return DataLoss("gzip data is corrupt near compressed byte {}: {}", raw_bytes_consumed(),
                        InflateErrorText(rc));
      }
      const size_t n = before - state_.avail_out;
      produced += n;
      total_out_ += n;
      if (n == 0 && state_.avail_in == 0 && raw_eof_ && state_.block_state != ISAL_BLOCK_FINISH) {
        return DataLoss("gzip stream is truncated: input ended at compressed byte {} inside a "
                        "member ({} bytes inflated so far); the file was probably cut short "
                        "while being written or copied",
                        raw_bytes_consumed(), total_out_);
      }
    }
    return produced;
  }

 private:
  // After a member ends: another member may follow (concatenated gzip), or the file ends.
  Status StartNextMember() {
    if (state_.avail_in == 0 && !raw_eof_) return OkStatus();  // refill first
    if (state_.avail_in == 0 && raw_eof_) {
      done_ = true;
      return OkStatus();
    }
    if (state_.avail_in >= 1 && state_.next_in[0] != 0x1f) {
      // gzip(1) tolerates zero padding after the last member; so do we.
      for (uint32_t i = 0; i < state_.avail_in; ++i) {
        if (state_.next_in[i] != 0) {
          return DataLoss("unexpected bytes after the end of the gzip stream at compressed byte {}",
                          raw_bytes_consumed() + i);
        }
      }
      state_.avail_in = 0;
      return OkStatus();
    }
    uint8_t* next_in = state_.next_in;
    const uint32_t avail_in = state_.avail_in;
    isal_inflate_reset(&state_);
    state_.crc_flag = ISAL_GZIP;
    state_.next_in = next_in;
    state_.avail_in = avail_in;
    return OkStatus();
  }

  std::unique_ptr<ByteSource> raw_;
  std::vector<uint8_t> in_;
  inflate_state state_;
  bool raw_eof_ = false;
  bool done_ = false;
  uint64_t total_out_ = 0;
};

// gzip's last 4 bytes: the uncompressed size of the last member, mod 2^32.
uint64_t GzipSizeHint(uint64_t file_size, const uint8_t trailer[4]) {
  const uint64_t isize = uint64_t{trailer[0]} | uint64_t{trailer[1]} << 8 | uint64_t{trailer[2]} << 16 |
                         uint64_t{trailer[3]} << 24;
  // Beyond 4 GiB ISIZE wraps: fall back to a typical Kineto compression ratio.
  return isize >= file_size ? isize : file_size * 20;
}

// Reads the first bytes, then wraps the source in a GzipSource if they are the gzip magic.
StatusOr<std::unique_ptr<ByteSource>> Sniff(std::unique_ptr<ByteSource> raw) {
  std::string head(2, '\0');
  RANKSCOPE_ASSIGN_OR_RETURN(size_t n, raw->Read(head.data(), head.size()));
  head.resize(n);
  const bool gzip = n == 2 && static_cast<uint8_t>(head[0]) == 0x1f && static_cast<uint8_t>(head[1]) == 0x8b;
  auto prefixed = std::make_unique<PrefixedSource>(std::move(head), std::move(raw));
  if (gzip) return std::unique_ptr<ByteSource>(std::make_unique<GzipSource>(std::move(prefixed)));
  return std::unique_ptr<ByteSource>(std::move(prefixed));
}

const char* FileKind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "not a regular file";
}

}  // namespace

StatusOr<std::string> PeekHead(std::unique_ptr<ByteSource>* source, size_t max) {
  std::string head(max, '\0');
  size_t n = 0;
  while (n < max) {
    RANKSCOPE_ASSIGN_OR_RETURN(size_t got, (*source)->Read(head.data() + n, max - n));
    if (got == 0) break;
    n += got;
  }
  head.resize(n);
  const uint64_t hint = (*source)->size_hint();
  *source = std::make_unique<PrefixedSource>(head, std::move(*source));
  (*source)->set_size_hint(hint);
  return head;
}

StatusOr<std::unique_ptr<ByteSource>> OpenTraceFile(const std::string& path) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused below).
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENOENT) return NotFound("{}: no such file", path);
    if (errno == ELOOP) return InvalidArgument("{}: symlink loop (too many levels of symbolic links)", path);
    return IoError("{}: cannot open: {}", path, std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return IoError("{}: cannot stat: {}", path, std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return InvalidArgument("{}: is {}, not a trace file (only regular files are read)", path, FileKind(st.st_mode));
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  const uint64_t file_size = static_cast<uint64_t>(st.st_size);
  uint8_t trailer[4] = {0, 0, 0, 0};
  const bool have_trailer = file_size >= 4 && ::pread(fd, trailer, 4, static_cast<off_t>(file_size - 4)) == 4;
  RANKSCOPE_ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> source, Sniff(std::make_unique<FileSource>(fd, path)));
  source->set_size_hint(source->is_gzip() ? (have_trailer ? GzipSizeHint(file_size, trailer) : 0) : file_size);
  return source;
}

std::unique_ptr<ByteSource> OpenTraceBytes(std::string_view data) {
  auto source = std::move(Sniff(std::make_unique<MemorySource>(data))).value();  // memory cannot fail
  if (!source->is_gzip()) {
    source->set_size_hint(data.size());
  } else if (data.size() >= 4) {
    source->set_size_hint(GzipSizeHint(data.size(), reinterpret_cast<const uint8_t*>(data.data() + data.size() - 4)));
  }
  return source;
}

}  // namespace rankscope

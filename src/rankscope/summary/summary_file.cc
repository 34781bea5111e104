#include "rankscope/summary/summary_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "rankscope/base/hash.h"

namespace rankscope::summary {
namespace fs = std::filesystem;

namespace {

constexpr size_t kSampleBytes = 64 * 1024;
constexpr size_t kKeptBufferBytes = 16 << 20;  // a summary is <= 1 MiB (docs/scale.md)

StatusOr<std::string> ReadRange(std::ifstream& in, uint64_t offset, size_t n) {
  std::string buf(n, '\0');
  in.seekg(static_cast<std::streamoff>(offset));
  in.read(buf.data(), static_cast<std::streamsize>(n));
  if (static_cast<size_t>(in.gcount()) != n) return IoError("short read");
  return buf;
}

}  // namespace

bool IsSummaryPath(std::string_view path) { return path.ends_with(kSummarySuffix); }

std::string SummaryPathFor(const std::string& trace_path, const std::string& out_dir) {
  if (out_dir.empty()) return trace_path + std::string(kSummarySuffix);
  return (fs::path(out_dir) / fs::path(trace_path).filename()).string() + std::string(kSummarySuffix);
}

std::string TracePathOf(const std::string& summary_path) {
  return summary_path.substr(0, summary_path.size() - kSummarySuffix.size());
}

StatusOr<TraceIdentity> IdentifyTrace(const std::string& trace_path) {
  struct stat st {};
  if (::stat(trace_path.c_str(), &st) != 0) return IoError("{}: {}", trace_path, std::strerror(errno));
  TraceIdentity id;
  id.file_name = fs::path(trace_path).filename().string();
  id.size = static_cast<uint64_t>(st.st_size);
  id.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  std::ifstream in(trace_path, std::ios::binary);
  if (!in) return IoError("{}: cannot open", trace_path);
  const size_t head = std::min<uint64_t>(id.size, kSampleBytes);
  auto first = ReadRange(in, 0, head);
  auto last = ReadRange(in, id.size - std::min<uint64_t>(id.size, kSampleBytes), head);
  if (!first.ok() || !last.ok()) return IoError("{}: cannot read", trace_path);
  id.sample_hash = HashBytes(*first) ^ (HashBytes(*last) * 0x9E3779B97F4A7C15ull) ^ id.size;
  return id;
}

Status WriteSummaryFile(const std::string& path, const SummaryFile& file) {
  const std::string bytes = EncodeSummary(file);
  const std::string tmp = path + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) {
      std::error_code ec;
      fs::remove(tmp, ec);
      return IoError("{}: cannot write", path);
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) return IoError("{}: cannot write: {}", path, ec.message());
  return OkStatus();
}

StatusOr<SummaryFile> ReadSummaryFile(const std::string& path) {
  // One read into a buffer of the file's size, kept for the thread's next file: a job of 10,000
  // ranks reads a GiB of summaries, and a stream copy (growing its buffer, then copied out again)
  // cost more than decoding them; a fresh buffer per file cost its page faults.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return IoError("{}: cannot open", path);
  thread_local std::string bytes;
  bytes.clear();
  struct stat st {};
  if (::fstat(fd, &st) == 0 && st.st_size > 0) bytes.resize(static_cast<size_t>(st.st_size));
  size_t got = 0;
  char more[4096];
  for (;;) {  // to the end of the file (or the first error: the bytes read so far are decoded)
    const bool full = got == bytes.size();  // then probe for bytes past the size fstat said
    const ssize_t n = full ? ::read(fd, more, sizeof more) : ::read(fd, bytes.data() + got, bytes.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (full) bytes.append(more, static_cast<size_t>(n));
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  bytes.resize(got);
  auto file = DecodeSummary(bytes);
  if (bytes.capacity() > kKeptBufferBytes) std::string().swap(bytes);  // not a rare huge file's
  if (!file.ok()) return MakeError(file.status().code(), "{}: {}", path, file.status().message());
  return file;
}

}  // namespace rankscope::summary

// ByteSource: a file (or memory buffer) read as a stream of uncompressed bytes.
//
// gzip is detected by its magic bytes, not by the file name, and inflated with isa-l in bounded
// memory (a 256 KiB input window), so a 10 GB trace never has to fit in RAM.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "rankscope/base/status.h"

namespace rankscope {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Reads up to `max` bytes into dst. Returns the number read; 0 means end of stream.
  virtual StatusOr<size_t> Read(char* dst, size_t max) = 0;
  // Bytes consumed from the underlying file or buffer so far (compressed bytes for gzip).
  virtual uint64_t raw_bytes_consumed() const = 0;
  virtual bool is_gzip() const { return false; }
  // A guess at the total uncompressed size (0 = unknown), used to size the model's tables up
  // front: the file size for plain files, the gzip trailer's ISIZE for gzip. Only a hint: a
  // wrong one costs a reallocation, never correctness.
  uint64_t size_hint() const { return size_hint_; }
  void set_size_hint(uint64_t n) { size_hint_ = n; }

 private:
  uint64_t size_hint_ = 0;
};

// Opens `path`; the stream inflates it when it starts with the gzip magic.
StatusOr<std::unique_ptr<ByteSource>> OpenTraceFile(const std::string& path);

// The same over bytes in memory (the caller keeps `data` alive). Used by tests and the fuzzer.
std::unique_ptr<ByteSource> OpenTraceBytes(std::string_view data);

// Reads up to `max` bytes from the start of *source (fewer at its end) and returns them without
// consuming them: *source becomes a source that serves them again, then the rest.
StatusOr<std::string> PeekHead(std::unique_ptr<ByteSource>* source, size_t max);

}  // namespace rankscope

// TraceTokenizer: walks a trace's bytes once, in bounded memory, and splits them into
//  - top-level values other than traceEvents (handed over as JSON text), and
//  - chunks of whole traceEvents elements (handed over for the EventParser).
//
// Top-level structure is read byte by byte (it is small); the traceEvents array is scanned
// 64 bytes at a time (json_block_scanner.h) to find element boundaries, tracking strings and
// bracket depth so that a '}' inside a name never cuts an event. Compiled once per CPU target.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "rankscope/base/status.h"
#include "rankscope/ingest/byte_source.h"
#include "rankscope/ingest/reader_options.h"

#ifndef RANKSCOPE_TARGET_NS
#error "trace_tokenizer.h is compiled per CPU target: define RANKSCOPE_TARGET_NS"
#endif

namespace rankscope::kineto::RANKSCOPE_TARGET_NS {

class TraceTokenizer {
 public:
  // key, JSON text of the value (empty if it was over the size limit), stream offset.
  using TopLevelFn = std::function<void(std::string_view key, std::string_view value, uint64_t offset)>;
  // Whole elements, as text between the array's brackets, and the stream offset of its first
  // byte. The bytes live in the tokenizer's window, which guarantees that data[-1] and
  // data[size .. size + kChunkSlack) are writable, so the parser can bracket the chunk in place
  // (it must restore them).
  using ChunkFn = std::function<void(char* data, size_t size, uint64_t offset)>;
  // The same for a chunk whose end is a guess: returns false, having changed nothing, when the
  // chunk does not parse as whole elements (the tokenizer then cuts it exactly).
  using GuessedChunkFn = std::function<bool(char* data, size_t size, uint64_t offset)>;
  static constexpr size_t kChunkSlack = 128;

  TraceTokenizer(ByteSource* source, const ReaderOptions& options);

  Status Run(const TopLevelFn& on_value, const ChunkFn& on_chunk, const GuessedChunkFn& on_guessed_chunk);
  uint64_t bytes_read() const { return base_ + end_; }

 private:
  // The window holds stream bytes [base_, base_ + end_); positions are stream offsets.
  const char* At(uint64_t pos) const { return buf_.data() + (pos - base_); }
  char* MutableAt(uint64_t pos) { return buf_.data() + (pos - base_); }
  uint64_t Limit() const { return base_ + end_; }
  // Drops bytes before `keep`, reads more. Returns false when the stream has ended.
  StatusOr<bool> Refill(uint64_t keep);
  // Next byte at `pos` (after refilling as needed), or -1 at end of stream.
  StatusOr<int> Peek(uint64_t pos);
  StatusOr<int> PeekNonSpace(uint64_t* pos);

  Status ReadTopLevelObject(uint64_t pos, const TopLevelFn& on_value);
  StatusOr<std::string> ReadKey(uint64_t* pos);
  // Reads one JSON value starting at *pos into *text (up to the size limit).
  Status ReadValue(uint64_t* pos, std::string* text, bool* truncated);
  // Reads the traceEvents array from just after its '['; *pos ends just after its ']'.
  Status ReadEvents(uint64_t* pos);
  // A likely element boundary past the target chunk size: right after a '}' that is followed
  // by ',' and '{' (whitespace allowed). Cheap (memchr), but only a guess: the '}' may be in a
  // string or a nested object. kNone when there is none near.
  StatusOr<uint64_t> GuessCut(uint64_t chunk_start);
  // The exact next boundary (or the array's ']'), scanning from chunk_start, which must be an
  // element boundary, 64 bytes at a time with string and bracket state.
  struct ExactCut {
    uint64_t end = 0;
    bool array_end = false;
  };
  StatusOr<ExactCut> FindExactCut(uint64_t chunk_start);
  // Trims the leading separator; false if nothing is left.
  bool ChunkBounds(uint64_t* begin, uint64_t end) const;
  Status ExpectEnd(uint64_t pos);

  ByteSource* source_;
  ReaderOptions options_;
  std::vector<char> buf_;
  uint64_t base_ = 0;  // stream offset of buf_[0]
  size_t end_ = 0;     // valid bytes in buf_
  bool eof_ = false;
  bool saw_trace_events_ = false;
  const ChunkFn* on_chunk_ = nullptr;
  const GuessedChunkFn* on_guessed_chunk_ = nullptr;
  uint64_t chunks_ = 0;
  uint64_t wrong_guesses_ = 0;

 public:
  // Chunks cut at a guessed boundary that did not parse (and were cut exactly instead).
  uint64_t wrong_guesses() const { return wrong_guesses_; }
  uint64_t chunks() const { return chunks_; }
};

}  // namespace rankscope::kineto::RANKSCOPE_TARGET_NS

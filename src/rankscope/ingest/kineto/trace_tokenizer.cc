#include "rankscope/ingest/kineto/trace_tokenizer.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "rankscope/ingest/kineto/json_block_scanner.h"

namespace rankscope::kineto::RANKSCOPE_TARGET_NS {
namespace {

constexpr size_t kInitialWindow = 4u << 20;
constexpr size_t kPadding = TraceTokenizer::kChunkSlack;
constexpr size_t kMaxKeyBytes = 4096;
constexpr uint64_t kNone = ~uint64_t{0};

inline bool IsSpace(int c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

std::string DescribeByte(int c) {
  if (c >= 0x20 && c < 0x7F) return fmt::format("'{}'", static_cast<char>(c));
  return fmt::format("byte 0x{:02x}", c);
}

}  // namespace

TraceTokenizer::TraceTokenizer(ByteSource* source, const ReaderOptions& options)
    : source_(source), options_(options), buf_(std::min(kInitialWindow, options.chunk_bytes * 16) + kPadding) {}

StatusOr<bool> TraceTokenizer::Refill(uint64_t keep) {
  const size_t drop = static_cast<size_t>(keep - base_);
  if (drop > 0) {
    std::memmove(buf_.data(), buf_.data() + drop, end_ - drop);
    base_ += drop;
    end_ -= drop;
  }
  if (eof_) return false;
  size_t capacity = buf_.size() - kPadding;
  if (end_ == capacity) {
    const size_t max_window = options_.max_event_bytes + 2 * options_.chunk_bytes + kPadding;
    if (capacity >= max_window) {
      return OutOfRange("more than {} MiB of input without a complete event",
                        options_.max_event_bytes >> 20);
    }
    buf_.resize(std::min(capacity * 2, max_window) + kPadding);
    capacity = buf_.size() - kPadding;
  }
  RANKSCOPE_ASSIGN_OR_RETURN(size_t n, source_->Read(buf_.data() + end_, capacity - end_));
  if (n == 0) {
    eof_ = true;
    return false;
  }
  end_ += n;
  return true;
}

StatusOr<int> TraceTokenizer::Peek(uint64_t pos) {
  while (pos >= Limit()) {
    RANKSCOPE_ASSIGN_OR_RETURN(bool more, Refill(std::min(pos, Limit())));
    if (!more) return -1;
  }
  return static_cast<unsigned char>(*At(pos));
}

StatusOr<int> TraceTokenizer::PeekNonSpace(uint64_t* pos) {
  while (true) {
    RANKSCOPE_ASSIGN_OR_RETURN(int c, Peek(*pos));
    if (!IsSpace(c)) return c;
    ++*pos;
  }
}

Status TraceTokenizer::Run(const TopLevelFn& on_value, const ChunkFn& on_chunk,
                          const GuessedChunkFn& on_guessed_chunk) {
  on_chunk_ = &on_chunk;
  on_guessed_chunk_ = &on_guessed_chunk;
  uint64_t pos = 0;
  RANKSCOPE_ASSIGN_OR_RETURN(int c, Peek(0));
  if (c == -1) return DataLoss("the file is empty");
  if (c == 0xEF) {  // UTF-8 byte order mark
    RANKSCOPE_ASSIGN_OR_RETURN(int c1, Peek(1));
    RANKSCOPE_ASSIGN_OR_RETURN(int c2, Peek(2));
    if (c1 == 0xBB && c2 == 0xBF) pos = 3;
  }
  RANKSCOPE_ASSIGN_OR_RETURN(c, PeekNonSpace(&pos));
  if (c == -1) return DataLoss("the file holds no JSON (only whitespace)");
  if (c == '[') {  // the bare-array form of the Chrome trace format
    saw_trace_events_ = true;
    ++pos;
    RANKSCOPE_RETURN_IF_ERROR(ReadEvents(&pos));
    return ExpectEnd(pos);
  }
  if (c != '{') {
    return DataLoss("not a JSON trace: expected '{{' or '[' at byte {} but found {}", pos, DescribeByte(c));
  }
  RANKSCOPE_RETURN_IF_ERROR(ReadTopLevelObject(pos + 1, on_value));
  if (!saw_trace_events_) {
    return NotATrace("the JSON object has no \"traceEvents\" array: not a Chrome/Kineto trace");
  }
  return OkStatus();
}

Status TraceTokenizer::ReadTopLevelObject(uint64_t pos, const TopLevelFn& on_value) {
  bool first = true;
  while (true) {
    RANKSCOPE_ASSIGN_OR_RETURN(int c, PeekNonSpace(&pos));
    if (c == '}') return ExpectEnd(pos + 1);
    if (!first) {
      if (c != ',') {
        if (c == -1) return DataLoss("the file ends at byte {} before the top-level object is closed", pos);
        return DataLoss("expected ',' or '}}' at byte {} but found {}", pos, DescribeByte(c));
      }
      ++pos;
      RANKSCOPE_ASSIGN_OR_RETURN(c, PeekNonSpace(&pos));
    }
    first = false;
    if (c != '"') {
      if (c == -1) return DataLoss("the file ends at byte {} before the top-level object is closed", pos);
      return DataLoss("expected a key at byte {} but found {}", pos, DescribeByte(c));
    }
    RANKSCOPE_ASSIGN_OR_RETURN(std::string key, ReadKey(&pos));
    RANKSCOPE_ASSIGN_OR_RETURN(c, PeekNonSpace(&pos));
    if (c != ':') return DataLoss("expected ':' after key \"{}\" at byte {}", key, pos);
    ++pos;
    RANKSCOPE_ASSIGN_OR_RETURN(c, PeekNonSpace(&pos));
    if (key == "traceEvents") {
      if (saw_trace_events_) return DataLoss("a second \"traceEvents\" key at byte {}", pos);
      if (c != '[') return DataLoss("\"traceEvents\" at byte {} is not an array", pos);
      saw_trace_events_ = true;
      ++pos;
      RANKSCOPE_RETURN_IF_ERROR(ReadEvents(&pos));
      continue;
    }
    const uint64_t value_offset = pos;
    std::string text;
    bool truncated = false;
    Status st = ReadValue(&pos, &text, &truncated);
    if (!st.ok()) return st.WithContext(fmt::format("in the value of top-level key \"{}\"", key));
    on_value(key, truncated ? std::string_view() : std::string_view(text), value_offset);
  }
}

StatusOr<std::string> TraceTokenizer::ReadKey(uint64_t* pos) {
  std::string key;
  bool escaped = false;
  for (uint64_t p = *pos + 1;; ++p) {
    RANKSCOPE_ASSIGN_OR_RETURN(int c, Peek(p));
    if (c == -1) return DataLoss("the file ends at byte {} inside a key", p);
    if (!escaped && c == '"') {
      *pos = p + 1;
      return key;
    }
    escaped = !escaped && c == '\\';
    if (key.size() >= kMaxKeyBytes) return DataLoss("a top-level key at byte {} is longer than {} bytes", *pos, kMaxKeyBytes);
    key.push_back(static_cast<char>(c));
  }
}

Status TraceTokenizer::ReadValue(uint64_t* pos, std::string* text, bool* truncated) {
  uint64_t p = *pos;
  int depth = 0;
  bool in_string = false, escaped = false, started = false, scalar = false;
  auto keep = [&](char c) {
    if (text->size() < options_.max_top_level_value_bytes) {
      text->push_back(c);
    } else {
      *truncated = true;
    }
  };
  while (true) {
    RANKSCOPE_ASSIGN_OR_RETURN(int ci, Peek(p));
    if (ci == -1) {
      if (scalar && !in_string) break;  // a number right before end of input
      return DataLoss("the file ends at byte {} inside a value", p);
    }
    const char c = static_cast<char>(ci);
    if (in_string) {
      keep(c);
      ++p;
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
        if (depth == 0) break;
      }
      continue;
    }
    if (scalar && (c == ',' || c == '}' || c == ']' || IsSpace(c))) break;
    if (!started) {
      started = true;
      scalar = c != '"' && c != '{' && c != '[';
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (depth == 0) return DataLoss("unexpected {} at byte {}", DescribeByte(ci), p);
      --depth;
      keep(c);
      ++p;
      if (depth == 0) break;
      continue;
    }
    keep(c);
    ++p;
  }
  *pos = p;
  if (*truncated) text->clear();
  return OkStatus();
}

Status TraceTokenizer::ExpectEnd(uint64_t pos) {
  RANKSCOPE_ASSIGN_OR_RETURN(int c, PeekNonSpace(&pos));
  if (c != -1) return DataLoss("unexpected {} at byte {} after the end of the JSON document", DescribeByte(c), pos);
  return OkStatus();
}

bool TraceTokenizer::ChunkBounds(uint64_t* begin, uint64_t end) const {
  while (*begin < end && IsSpace(*At(*begin))) ++*begin;
  if (*begin < end && *At(*begin) == ',') ++*begin;
  while (*begin < end && IsSpace(*At(*begin))) ++*begin;
  return *begin < end;
}

Status TraceTokenizer::ReadEvents(uint64_t* pos_io) {
  uint64_t chunk_start = *pos_io;
  while (true) {
    // Most chunks end at a guessed boundary that the parser confirms: cheaper than scanning
    // every byte for strings and brackets. A wrong guess never parses (an unclosed string or
    // object); the model is then left untouched and the chunk is cut exactly.
    // A chunk parsed on another thread is past taking back, so it is cut exactly.
    uint64_t guess = kNone;
    if (options_.parse_threads <= 1) {
      RANKSCOPE_ASSIGN_OR_RETURN(guess, GuessCut(chunk_start));
    }
    if (guess != kNone) {
      uint64_t begin = chunk_start;
      if (!ChunkBounds(&begin, guess)) {
        chunk_start = guess;
        continue;
      }
      if ((*on_guessed_chunk_)(MutableAt(begin), guess - begin, begin)) {
        ++chunks_;
        chunk_start = guess;
        continue;
      }
      ++wrong_guesses_;
    }
    RANKSCOPE_ASSIGN_OR_RETURN(const ExactCut cut, FindExactCut(chunk_start));
    uint64_t begin = chunk_start;
    if (ChunkBounds(&begin, cut.end)) {
      ++chunks_;
      (*on_chunk_)(MutableAt(begin), cut.end - begin, begin);
    }
    if (cut.array_end) {
      *pos_io = cut.end + 1;
      return OkStatus();
    }
    chunk_start = cut.end;
  }
}

StatusOr<uint64_t> TraceTokenizer::GuessCut(uint64_t chunk_start) {
  // Search at most this far past the target before leaving it to the exact scan.
  constexpr uint64_t kSearchLimit = 256 * 1024;
  const uint64_t from = chunk_start + options_.chunk_bytes;
  uint64_t p = from;
  while (p < from + kSearchLimit) {
    // Enough bytes after p to see "}  ,  {" (+ a little whitespace) without another refill.
    if (p + 64 > Limit()) {
      auto more = Refill(chunk_start - 1);
      // A read error (corrupt gzip) is the answer: a source need not repeat it on the next read.
      if (!more.ok() && more.status().code() != StatusCode::kOutOfRange) return more.status();
      if (!more.ok() || !*more) return kNone;  // too big or the end: the exact scan decides
      continue;
    }
    const char* start = At(p);
    const void* brace = std::memchr(start, '}', Limit() - p - 63);
    if (brace == nullptr) {
      p = Limit() - 63;
      continue;
    }
    uint64_t q = p + static_cast<uint64_t>(static_cast<const char*>(brace) - start);
    const uint64_t cut = q + 1;
    ++q;
    while (q < Limit() && IsSpace(*At(q))) ++q;
    if (q < Limit() && *At(q) == ',') {
      ++q;
      while (q < Limit() && IsSpace(*At(q))) ++q;
      if (q < Limit() && *At(q) == '{') return cut;
    }
    p = cut;
  }
  return kNone;
}

StatusOr<TraceTokenizer::ExactCut> TraceTokenizer::FindExactCut(uint64_t chunk_start) {
  ScanCarry carry;
  int64_t depth = 1;  // 1 = inside the traceEvents array, between elements
  uint64_t scan = chunk_start;
  alignas(64) uint8_t tail[64];
  while (true) {
    const uint8_t* block;
    if (scan + 64 <= Limit()) {
      block = reinterpret_cast<const uint8_t*>(At(scan));
    } else {
      // Keep the byte before the chunk too ('[', ',' or whitespace): the parser brackets the
      // chunk in place there. chunk_start is always past the array's '[' so that byte exists.
      auto more = Refill(chunk_start - 1);
      if (!more.ok() && more.status().code() != StatusCode::kOutOfRange) return more.status();  // e.g. truncated gzip
      if (!more.ok()) {
        return DataLoss("a traceEvents element starting near byte {} is larger than {} MiB; the "
                        "file is probably corrupt (an unclosed bracket or quote)",
                        chunk_start, options_.max_event_bytes >> 20);
      }
      if (*more) continue;
      if (scan >= Limit()) {
        return DataLoss("the file ends at byte {} inside the traceEvents array ({}); it was "
                        "probably cut short while being written or copied",
                        Limit(), carry.prev_in_string ? "inside a string" :
                                 depth > 1 ? "inside an event" : "between events");
      }
      std::memset(tail, ' ', sizeof(tail));
      std::memcpy(tail, At(scan), Limit() - scan);
      block = tail;
    }
    const BlockMasks m = ScanBlock(block, carry);
    const int closes = std::popcount(m.close);
    const bool past_target = scan + 64 - chunk_start >= options_.chunk_bytes;
    if (closes < depth - 1 || (!past_target && closes < depth)) {
      depth += std::popcount(m.open) - closes;
      scan += 64;
      continue;
    }
    // Depth may reach 1 (an element ends) or 0 (the array ends) in this block: walk it.
    uint64_t bits = m.open | m.close | (past_target ? m.comma : 0);
    while (bits != 0) {
      const int i = std::countr_zero(bits);
      const uint64_t bit = uint64_t{1} << i;
      bits &= bits - 1;
      if (m.open & bit) {
        ++depth;
      } else if (m.close & bit) {
        if (--depth == 0) return ExactCut{scan + i, true};
        if (depth == 1 && past_target) return ExactCut{scan + i + 1, false};
      } else if (depth == 1 && scan + i > chunk_start) {  // a comma between elements
        return ExactCut{scan + i, false};
      }
    }
    scan += 64;
  }
}

}  // namespace rankscope::kineto::RANKSCOPE_TARGET_NS

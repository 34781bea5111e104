#include "rankscope/summary/summary_codec.h"

#include <array>
#include <bit>
#include <cstring>
#include <optional>
#include <type_traits>
#include <vector>

#include "rankscope/base/hash.h"
#include "rankscope/summary/summary_fields.h"

namespace rankscope::summary {
namespace {

template <class T>
concept Scalar = std::is_integral_v<T> || std::is_enum_v<T>;

// Appends every field to a byte string. Fields() takes non-const references because the reader
// uses the same list; the writer never modifies them.
class Writer {
 public:
  std::string out;

  void Varint(uint64_t v) {
    while (v >= 0x80) {
      out.push_back(static_cast<char>(v | 0x80));
      v >>= 7;
    }
    out.push_back(static_cast<char>(v));
  }
  template <Scalar T>
  void operator()(T& v) {
    if constexpr (std::is_enum_v<T>) {
      Varint(static_cast<uint64_t>(static_cast<std::underlying_type_t<T>>(v)));
    } else if constexpr (std::is_signed_v<T>) {
      const int64_t s = v;
      Varint((static_cast<uint64_t>(s) << 1) ^ static_cast<uint64_t>(s >> 63));  // zigzag
    } else {
      Varint(static_cast<uint64_t>(v));
    }
  }
  void operator()(double& v) {
    const uint64_t bits = std::bit_cast<uint64_t>(v);
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(bits >> (8 * i)));
  }
  void operator()(std::string& s) {
    Varint(s.size());
    out += s;
  }
  template <class T, size_t N>
  void operator()(std::array<T, N>& a) {
    for (T& v : a) (*this)(v);
  }
  template <class T>
  void operator()(std::vector<T>& v) {
    Varint(v.size());
    for (T& e : v) (*this)(e);
  }
  template <class T>
  void operator()(std::optional<T>& o) {
    out.push_back(o ? 1 : 0);
    if (o) (*this)(*o);
  }
  template <class T>
    requires std::is_class_v<T>
  void operator()(T& v) {
    Fields(*this, v);
  }
};

// Reads the fields back, never past the end: the first problem is kept and every later read
// yields zeros, so a truncated or hostile file costs at most its own size in work and memory.
class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  bool failed() const { return !error_.empty(); }
  const std::string& error() const { return error_; }
  size_t remaining() const { return in_.size() - pos_; }
  void Fail(std::string message) {
    if (error_.empty()) error_ = std::move(message);
  }

  uint64_t Varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= in_.size()) {
        Fail("truncated");
        return 0;
      }
      const auto byte = static_cast<uint8_t>(in_[pos_++]);
      v |= static_cast<uint64_t>(byte & 0x7F) << shift;
      if (!(byte & 0x80)) return v;
    }
    Fail("varint longer than 10 bytes");
    return 0;
  }
  template <Scalar T>
  void operator()(T& v) {
    const uint64_t raw = Varint();
    if constexpr (std::is_enum_v<T>) {
      v = static_cast<T>(static_cast<std::underlying_type_t<T>>(raw));
      if (static_cast<uint64_t>(static_cast<std::underlying_type_t<T>>(v)) != raw) Fail("enum value out of range");
    } else if constexpr (std::is_same_v<T, bool>) {
      if (raw > 1) Fail("boolean is neither 0 nor 1");
      v = raw == 1;
    } else if constexpr (std::is_signed_v<T>) {
      const int64_t s = static_cast<int64_t>(raw >> 1) ^ -static_cast<int64_t>(raw & 1);
      v = static_cast<T>(s);
      if (static_cast<int64_t>(v) != s) Fail("integer out of range");
    } else {
      v = static_cast<T>(raw);
      if (static_cast<uint64_t>(v) != raw) Fail("integer out of range");
    }
  }
  void operator()(double& v) {
    if (remaining() < 8) {
      Fail("truncated");
      v = 0;
      return;
    }
    uint64_t bits = 0;
    for (int i = 0; i < 8; ++i) bits |= static_cast<uint64_t>(static_cast<uint8_t>(in_[pos_ + i])) << (8 * i);
    pos_ += 8;
    v = std::bit_cast<double>(bits);
  }
  void operator()(std::string& s) {
    const uint64_t n = Varint();
    if (n > remaining()) {
      Fail("truncated string");
      return;
    }
    s.assign(in_.substr(pos_, n));
    pos_ += n;
  }
  template <class T, size_t N>
  void operator()(std::array<T, N>& a) {
    for (T& v : a) (*this)(v);
  }
  template <class T>
  void operator()(std::vector<T>& v) {
    const uint64_t n = Varint();
    if (n > remaining()) {  // every element takes at least one byte
      Fail("truncated array");
      return;
    }
    v.resize(n);
    for (T& e : v) {
      if (failed()) break;
      (*this)(e);
    }
  }
  template <class T>
  void operator()(std::optional<T>& o) {
    bool present = false;
    (*this)(present);
    if (present) (*this)(o.emplace());
  }
  template <class T>
    requires std::is_class_v<T>
  void operator()(T& v) {
    Fields(*this, v);
  }

 private:
  std::string_view in_;
  size_t pos_ = 0;
  std::string error_;
};

template <class A>
void FileFields(A& a, SummaryFile& f) {
  a(f.producer), a(f.options_key), a(f.trace.file_name), a(f.trace.size), a(f.trace.mtime_ns), a(f.trace.sample_hash);
  a(f.summary);
}

// What the cluster diagnosis indexes with must be in range, and the enums must be ones the
// analysis produces: a summary is input like a trace, and bad input gets an error.
Status Validate(const RankSummary& r) {
  auto valid_class = [](ActivityClass c) { return static_cast<int>(c) < kNumActivityClasses || c == ActivityClass::kNone; };
  if (static_cast<int>(r.window_mode) > static_cast<int>(WindowMode::kExplicit)) return DataLoss("unknown window mode");
  for (const FunctionTable* t : {&r.kernels, &r.kernel_names, &r.kernels_by_op, &r.memory_ops, &r.runtime_calls,
                                 &r.cpu_ops, &r.python_paths, &r.untraced}) {
    for (const FunctionStat& f : t->rows) {
      if (!valid_class(f.cls)) return DataLoss("unknown activity class {}", static_cast<int>(f.cls));
    }
  }
  for (const CollectiveInstance& c : r.collectives) {
    if (c.type >= r.collective_types.size() || c.group >= r.process_groups.size()) {
      return DataLoss("collective instance refers to type {} / group {} of {} / {}", c.type, c.group,
                      r.collective_types.size(), r.process_groups.size());
    }
  }
  return OkStatus();
}

void PutLe(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}

uint64_t GetLe(std::string_view in, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(in[at + i])) << (8 * i);
  return v;
}

}  // namespace

std::string EncodeSummary(const SummaryFile& file) {
  Writer w;
  FileFields(w, const_cast<SummaryFile&>(file));
  std::string out;
  out.reserve(kSummaryHeaderBytes + w.out.size());
  out += kSummaryMagic;
  PutLe(out, kSummaryFormatVersion, 4);
  PutLe(out, 0, 4);
  PutLe(out, w.out.size(), 8);
  PutLe(out, HashBytes(w.out), 8);
  out += w.out;
  return out;
}

StatusOr<SummaryFile> DecodeSummaryPayload(std::string_view payload) {
  Reader r(payload);
  SummaryFile file;
  FileFields(r, file);
  if (r.failed()) return DataLoss("corrupt summary: {}", r.error());
  if (r.remaining() != 0) return DataLoss("corrupt summary: {} unexpected byte(s) after the fields", r.remaining());
  if (Status s = Validate(file.summary); !s.ok()) return DataLoss("corrupt summary: {}", s.message());
  return file;
}

StatusOr<SummaryFile> DecodeSummary(std::string_view bytes) {
  if (bytes.size() < kSummaryMagic.size() || bytes.substr(0, kSummaryMagic.size()) != kSummaryMagic) {
    return NotATrace("not a rankscope summary (no {} header)", kSummaryMagic);
  }
  if (bytes.size() < kSummaryHeaderBytes) return DataLoss("truncated summary: {} byte header cut short", kSummaryHeaderBytes);
  const auto version = static_cast<uint32_t>(GetLe(bytes, 8, 4));
  if (version != kSummaryFormatVersion) {
    return FailedPrecondition("summary format version {} ({} rankscope); this rankscope reads version {}: "
                              "re-make it with `rankscope summarize` from the trace",
                              version, version > kSummaryFormatVersion ? "a newer" : "an older",
                              kSummaryFormatVersion);
  }
  const uint64_t length = GetLe(bytes, 16, 8);
  if (length != bytes.size() - kSummaryHeaderBytes) {
    return DataLoss("truncated summary: header says {} payload bytes, the file has {}", length,
                    bytes.size() - kSummaryHeaderBytes);
  }
  const std::string_view payload = bytes.substr(kSummaryHeaderBytes);
  if (GetLe(bytes, 24, 8) != HashBytes(payload)) return DataLoss("corrupt summary: payload hash mismatch");
  return DecodeSummaryPayload(payload);
}

}  // namespace rankscope::summary

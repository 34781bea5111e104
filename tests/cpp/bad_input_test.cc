// Bad input: every case ends in a clear error (naming the byte offset and the reason) or in
// skipped-and-counted events, never a crash, a hang or a silently wrong model.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <random>

#include "rankscope/ingest/read_trace.h"
#include "test_util.h"

namespace rankscope {
namespace {

const std::string kGood =
    "{\"traceEvents\": [\n"
    "  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\", \"pid\": 1, \"tid\": 1, \"ts\": 10, \"dur\": 5},\n"
    "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, \"ts\": 12.5, \"dur\": 1,"
    " \"args\": {\"correlation\": 1, \"grid\": [1, 1, 1]}},\n"
    "  {\"ph\": \"i\", \"name\": \"mark\", \"pid\": 1, \"tid\": 1, \"ts\": 20, \"s\": \"t\"}\n"
    "], \"baseTimeNanoseconds\": 1000}\n";

std::string ErrorOf(const std::string& data, ReaderOptions options = {}) {
  auto model = ReadTraceBytes(data, "bad.json", options);
  EXPECT_FALSE(model.ok()) << "accepted: " << data.substr(0, 200);
  return model.ok() ? "" : model.status().message();
}

TraceModel Accept(const std::string& data) {
  auto model = ReadTraceBytes(data, "odd.json");
  EXPECT_TRUE(model.ok()) << model.status().message();
  return model.ok() ? std::move(model).value() : TraceModel{};
}

TEST(BadInputTest, EmptyAndNotJson) {
  EXPECT_NE(ErrorOf("").find("bad.json: the file is empty"), std::string::npos);
  EXPECT_NE(ErrorOf(" \n\t ").find("only whitespace"), std::string::npos);
  EXPECT_NE(ErrorOf("hello").find("expected '{' or '[' at byte 0 but found 'h'"), std::string::npos);
  EXPECT_NE(ErrorOf("\x89PNG\r\n").find("byte 0x89"), std::string::npos);
  EXPECT_NE(ErrorOf("{\"a\": 1}").find("no \"traceEvents\" array"), std::string::npos);
  EXPECT_EQ(ReadTraceBytes("{\"a\": 1}", "x").status().code(), StatusCode::kNotATrace);
  EXPECT_NE(ErrorOf("{\"traceEvents\": {}}").find("is not an array"), std::string::npos);
  EXPECT_NE(ErrorOf("{\"traceEvents\": [], \"traceEvents\": []}").find("second \"traceEvents\""), std::string::npos);
  EXPECT_NE(ErrorOf("{\"traceEvents\": []} trailing").find("after the end of the JSON document"), std::string::npos);
  EXPECT_NE(ErrorOf("{\"traceEvents\": [] \"x\": 1}").find("expected ',' or '}'"), std::string::npos);
}

TEST(BadInputTest, TruncatedAtEveryByte) {
  for (size_t n = 1; n < kGood.size() - 1; ++n) {
    const std::string cut = kGood.substr(0, n);
    auto model = ReadTraceBytes(cut, "cut.json");
    // Cut right after the final '}' only whitespace is missing: that one is complete.
    if (cut.find_last_not_of(" \n") == kGood.find_last_of('}')) continue;
    ASSERT_FALSE(model.ok()) << "accepted a file cut at byte " << n;
    EXPECT_NE(model.status().message().find("cut.json"), std::string::npos);
    EXPECT_NE(model.status().message().find("byte"), std::string::npos) << model.status().message();
  }
  const std::string msg = ErrorOf(kGood.substr(0, 60));
  EXPECT_NE(msg.find("inside the traceEvents array"), std::string::npos) << msg;
}

TEST(BadInputTest, TruncatedAndCorruptGzip) {
  const std::string gz = testing::Gzip(kGood);
  for (size_t n : {size_t{2}, size_t{10}, gz.size() / 2, gz.size() - 4, gz.size() - 1}) {
    const std::string msg = ErrorOf(gz.substr(0, n));
    EXPECT_TRUE(msg.find("truncated") != std::string::npos || msg.find("corrupt") != std::string::npos) << msg;
  }
  std::string flipped = gz;
  flipped[gz.size() / 2] ^= 0x55;
  EXPECT_NE(ErrorOf(flipped).find("gzip"), std::string::npos);
  EXPECT_NE(ErrorOf(gz + "garbage").find("after the end of the gzip stream"), std::string::npos);
}

// A gzip stream whose checksum is wrong names the corruption whatever the chunk size, so wherever
// the read that meets it falls (a guessed chunk end used to swallow the error, and the inflater
// then answered "end of stream": the file was blamed as cut short); one thread or several.
TEST(BadInputTest, ACorruptGzipChecksumIsNamedAtEveryChunkSize) {
  std::string json = "{\"traceEvents\": [";
  for (int i = 0; i < 400; ++i) {
    json += fmt::format("{}{{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op{}\", \"pid\": 1, \"tid\": 1, "
                        "\"ts\": {}, \"dur\": 1}}", i ? "," : "", i % 7, i * 2);
  }
  json += "]}";
  std::string gz = testing::Gzip(json);
  gz[gz.size() - 8] ^= 0x01;  // the CRC-32 of the trailer
  for (size_t chunk = 200; chunk <= 6000; chunk += 173) {
    for (unsigned threads : {1u, 3u}) {
      ReaderOptions options;
      options.chunk_bytes = chunk;
      options.parse_threads = threads;
      const std::string msg = ErrorOf(gz, options);
      EXPECT_NE(msg.find("CRC"), std::string::npos) << chunk << " B chunks, " << threads << " threads: " << msg;
    }
  }
}

TEST(BadInputTest, MalformedEventsAreSkippedAndCounted) {
  const std::string data =
      "{\"traceEvents\": ["
      "{\"ph\": \"X\", \"name\": \"ok1\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 1},"
      "{\"ph\": \"X\", \"name\": \"broken\", \"ts\": , \"dur\": 1},"
      "{\"ph\": \"X\", \"name\": \"bad\xff\xfeutf8\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 1},"
      "42,"
      "{\"ph\": \"X\", \"name\": \"huge\", \"pid\": 1, \"tid\": 1, \"ts\": 1e400, \"dur\": 1},"
      "{\"ph\": \"X\", \"name\": \"strts\", \"pid\": 1, \"tid\": 1, \"ts\": \"abc\", \"dur\": 1},"
      "{\"ph\": \"X\", \"name\": \"nodur\", \"pid\": 1, \"tid\": 1, \"ts\": 1},"
      "{\"ph\": \"X\", \"name\": \"negdur\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": -3},"
      "{\"ph\": \"XY\", \"name\": \"ph\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 1},"
      "{\"name\": \"noph\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 1},"
      "{\"ph\": \"X\", \"name\": 7, \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 1},"
      "{\"ph\": \"X\", \"name\": \"pidobj\", \"pid\": {}, \"tid\": 1, \"ts\": 1, \"dur\": 1},"
      "{\"ph\": \"X\", \"name\": \"badarg\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 1, \"args\": {\"correlation\": \"x\"}},"
      "{\"ph\": \"X\", \"name\": \"ok2\", \"pid\": 1, \"tid\": 1, \"ts\": 2, \"dur\": 1}"
      "]}";
  TraceModel m = Accept(data);
  ASSERT_EQ(m.slices.size(), 3u);  // ok1, badarg (kept without correlation), ok2
  EXPECT_EQ(m.Str(m.slices.name[0]), "ok1");
  EXPECT_EQ(m.Str(m.slices.name[1]), "badarg");
  EXPECT_EQ(m.slices.correlation[1], kNoId);
  EXPECT_EQ(m.Str(m.slices.name[2]), "ok2");
  EXPECT_EQ(m.stats.elements, 14u);
  EXPECT_EQ(m.stats.skipped.total(), 11u);
  const auto& r = m.stats.skipped.by_reason;
  EXPECT_EQ(r.at("traceEvents element is not an object").count, 1u);
  EXPECT_EQ(r.at("ts is out of range").count, 1u);
  EXPECT_EQ(r.at("ts is not a number").count, 1u);
  EXPECT_EQ(r.at("complete event (ph X) without dur").count, 1u);
  EXPECT_EQ(r.at("complete event (ph X) with negative dur").count, 1u);
  EXPECT_EQ(r.at("event without \"ph\"").count, 1u);
  EXPECT_EQ(r.at("ph is not a one-character string").count, 1u);
  EXPECT_EQ(r.at("name is not a string").count, 1u);
  EXPECT_EQ(r.at("pid/tid is neither a number nor a string").count, 1u);
  uint64_t malformed = 0;
  for (const auto& [reason, e] : r) {
    if (reason.rfind("malformed event", 0) == 0) malformed += e.count;
  }
  EXPECT_EQ(malformed, 2u);  // the syntax error and the invalid UTF-8
  EXPECT_EQ(m.stats.ignored_fields.by_reason.at("args.correlation is not an integer").count, 1u);
  // Offsets point at the offending element.
  const size_t broken_at = data.find("{\"ph\": \"X\", \"name\": \"broken\"");
  bool offset_found = false;
  for (const auto& [reason, e] : r) offset_found |= e.first_offset == broken_at;
  EXPECT_TRUE(offset_found);
}

TEST(BadInputTest, DeepNestingIsBounded) {
  std::string deep = "{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"d\", \"pid\": 1, \"tid\": 1, \"ts\": 1, "
                     "\"dur\": 1, \"args\": {\"x\": ";
  deep += std::string(100000, '[') + std::string(100000, ']') + "}}]}";
  TraceModel m = Accept(deep);
  EXPECT_EQ(m.slices.size() + m.stats.skipped.total(), 1u);

  // Unclosed nesting: an error naming the limit, not unbounded buffering.
  ReaderOptions small;
  small.max_event_bytes = 1 << 20;
  small.chunk_bytes = 4096;
  const std::string open = "{\"traceEvents\": [" + std::string(3 << 20, '[');
  EXPECT_NE(ErrorOf(open, small).find("larger than 1 MiB"), std::string::npos);
  const std::string string_never_closed = "{\"traceEvents\": [{\"name\": \"" + std::string(3 << 20, 'a');
  EXPECT_NE(ErrorOf(string_never_closed, small).find("larger than 1 MiB"), std::string::npos);
}

TEST(BadInputTest, RandomBytesNeverCrash) {
  std::mt19937 rng(1);
  for (int i = 0; i < 2000; ++i) {
    std::string data(rng() % 300, '\0');
    for (char& c : data) c = static_cast<char>(rng());
    if (i % 2) data = "{\"traceEvents\": [" + data;
    (void)ReadTraceBytes(data, "random.bin");
  }
}

// Flipping any single byte of a valid trace yields an error or a model; both are fine, a
// crash is not. (The libFuzzer target explores this much further.)
TEST(BadInputTest, SingleByteMutationsNeverCrash) {
  for (size_t i = 0; i < kGood.size(); ++i) {
    for (char c : {'"', '\\', '{', '}', '[', ']', ',', '\0', '\xff', 'x'}) {
      std::string data = kGood;
      data[i] = c;
      (void)ReadTraceBytes(data, "mutant.json");
    }
  }
}

}  // namespace
}  // namespace rankscope

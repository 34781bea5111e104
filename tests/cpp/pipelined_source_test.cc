// PipelinedSource (ingest/pipelined_source.h): gzip inflated on its own thread ahead of the
// parser. The bytes must be exactly the inner source's at every block size, depth and read size
// (so every chunk boundary of the parser falls elsewhere), errors must arrive after the bytes
// before them, and a trace read through it must give the identical rank summary.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "rankscope/analysis/analyze_rank.h"
#include "rankscope/ingest/byte_source.h"
#include "rankscope/ingest/pipelined_source.h"
#include "rankscope/ingest/read_trace.h"
#include "rankscope/summary/summary_codec.h"

namespace rankscope {
namespace {

const std::string kTrace =
    std::string(RANKSCOPE_SOURCE_DIR) + "/tests/data/cluster/ground_truth/collective/rank3.pt.trace.json.gz";

std::string FileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Everything a source yields, read `read_size` bytes at a time; the error, if any, at the end.
std::string Drain(ByteSource& source, size_t read_size, Status* error) {
  std::string out, buf(read_size, '\0');
  while (true) {
    auto n = source.Read(buf.data(), buf.size());
    if (!n.ok()) {
      *error = n.status();
      return out;
    }
    if (*n == 0) return out;
    out.append(buf.data(), *n);
  }
}

TEST(PipelinedSourceTest, SameBytesAtEveryBlockDepthAndReadSize) {
  const std::string gz = FileBytes(kTrace);
  ASSERT_GT(gz.size(), 1000u);
  Status none;
  auto plain = OpenTraceBytes(gz);
  ASSERT_TRUE(plain->is_gzip());
  const std::string reference = Drain(*plain, 65536, &none);
  ASSERT_TRUE(none.ok());
  ASSERT_GT(reference.size(), gz.size());
  for (size_t block : {size_t{97}, size_t{4095}, size_t{4096}, size_t{65537}, size_t{1} << 20, reference.size(),
                       reference.size() + 1}) {
    for (size_t depth : {1, 3}) {
      for (size_t read_size : {size_t{13}, size_t{4096}, size_t{1} << 20}) {
        PipelinedSource piped(OpenTraceBytes(gz), block, depth);
        Status error;
        ASSERT_EQ(Drain(piped, read_size, &error), reference) << block << " " << depth << " " << read_size;
        EXPECT_TRUE(error.ok());
        EXPECT_TRUE(piped.is_gzip());
        EXPECT_EQ(piped.raw_bytes_consumed(), plain->raw_bytes_consumed());
      }
    }
  }
}

TEST(PipelinedSourceTest, ACorruptStreamFailsAfterTheBytesBeforeIt) {
  const std::string whole = FileBytes(kTrace);
  Status none;
  auto full = OpenTraceBytes(whole);
  const std::string reference = Drain(*full, 65536, &none);
  std::string gz = whole;
  gz.resize(gz.size() / 2);  // truncated mid-stream
  Status plain_error, piped_error;
  auto plain = OpenTraceBytes(gz);
  Drain(*plain, 4096, &plain_error);
  ASSERT_FALSE(plain_error.ok());
  PipelinedSource piped(OpenTraceBytes(gz), 5000, 2);
  // How much the inflater yields before it sees the cut depends on the sizes asked of it; what
  // it yields is the start of the stream, and then the same error.
  const std::string got = Drain(piped, 777, &piped_error);
  EXPECT_GT(got.size(), 0u);
  EXPECT_EQ(got, reference.substr(0, got.size()));
  EXPECT_EQ(piped_error.code(), plain_error.code());
  EXPECT_EQ(piped_error.message(), plain_error.message());
}

TEST(PipelinedSourceTest, LeftUnreadIsFine) {
  const std::string gz = FileBytes(kTrace);  // OpenTraceBytes reads it in place
  PipelinedSource piped(OpenTraceBytes(gz), 1024, 2);
  char buf[10];
  ASSERT_TRUE(piped.Read(buf, sizeof buf).ok());
}  // the producer, blocked on a full queue, is stopped and joined

TEST(PipelinedSourceTest, AFileReadThroughItGivesTheSameSummary) {
  auto piped = ReadTrace(kTrace);  // files: pipelined
  auto direct = ReadTraceBytes(FileBytes(kTrace), kTrace);  // memory: on this thread
  ASSERT_TRUE(piped.ok() && direct.ok());
  EXPECT_TRUE(piped->stats.gzip);
  EXPECT_EQ(piped->stats.file_bytes, direct->stats.file_bytes);
  auto encoded = [](const TraceModel& m) {
    auto s = AnalyzeRank(m, AnalysisOptions{});
    EXPECT_TRUE(s.ok());
    summary::SummaryFile f;
    f.summary = std::move(s).value();
    f.summary.analysis_ns = 0;  // wall time of this run
    return summary::EncodeSummary(f);
  };
  EXPECT_EQ(encoded(*piped), encoded(*direct));
}

}  // namespace
}  // namespace rankscope

#include "rankscope/ingest/byte_source.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <random>

#include "test_util.h"

namespace rankscope {
namespace {

std::string ReadAll(ByteSource& s, size_t step) {
  std::string out;
  std::string buf(step, '\0');
  while (true) {
    auto n = s.Read(buf.data(), buf.size());
    EXPECT_TRUE(n.ok()) << n.status().message();
    if (!n.ok() || *n == 0) break;
    out.append(buf.data(), *n);
  }
  return out;
}

TEST(ByteSourceTest, GzipRoundTripAnyReadSize) {
  std::mt19937 rng(3);
  std::string data(3 << 20, '\0');
  for (char& c : data) c = "{}[]\",:abcdef0123456789 "[rng() % 24];
  const std::string gz = testing::Gzip(data);
  for (size_t step : {1, 17, 4096, 1 << 20}) {
    if (step == 1) {
      auto s = OpenTraceBytes(std::string_view(gz).substr(0, gz.size()));
      std::string head(1000, '\0');
      auto n = s->Read(head.data(), head.size());
      ASSERT_TRUE(n.ok());
      EXPECT_EQ(head.substr(0, *n), data.substr(0, *n));
      continue;
    }
    auto s = OpenTraceBytes(gz);
    EXPECT_TRUE(s->is_gzip());
    EXPECT_EQ(ReadAll(*s, step), data) << step;
    EXPECT_EQ(s->raw_bytes_consumed(), gz.size());
  }
}

TEST(ByteSourceTest, PlainIsPassedThrough) {
  auto s = OpenTraceBytes("{\"traceEvents\": []}");
  EXPECT_FALSE(s->is_gzip());
  EXPECT_EQ(ReadAll(*s, 3), "{\"traceEvents\": []}");
}

TEST(ByteSourceTest, MissingFileAndDirectory) {
  auto missing = OpenTraceFile("/nonexistent/x.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  auto dir = OpenTraceFile("/tmp");
  ASSERT_FALSE(dir.ok());
  EXPECT_NE(dir.status().message().find("is a directory"), std::string::npos);
}

// A FIFO would block open() until a writer comes, and never end; a symlink loop is not "missing".
TEST(ByteSourceTest, RefusesWhatIsNotARegularFile) {
  const std::string dir = ::testing::TempDir() + "rankscope-bytesource-" + std::to_string(::getpid());
  ::mkdir(dir.c_str(), 0700);
  const std::string fifo = dir + "/pipe.json", loop = dir + "/loop.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  ASSERT_EQ(::symlink("loop.json", loop.c_str()), 0);
  auto f = OpenTraceFile(fifo);
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("a FIFO"), std::string::npos) << f.status().message();
  auto l = OpenTraceFile(loop);
  ASSERT_FALSE(l.ok());
  EXPECT_NE(l.status().message().find("symlink loop"), std::string::npos) << l.status().message();
  auto dev = OpenTraceFile("/dev/zero");
  ASSERT_FALSE(dev.ok());
  EXPECT_NE(dev.status().message().find("character device"), std::string::npos);
  ::unlink(fifo.c_str());
  ::unlink(loop.c_str());
  ::rmdir(dir.c_str());
}

}  // namespace
}  // namespace rankscope

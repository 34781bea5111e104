// The trace-format registry: which format reads a file, and what directory search looks for.
#include <gtest/gtest.h>

#include "rankscope/ingest/read_trace.h"
#include "rankscope/ingest/trace_formats.h"
#include "test_util.h"

namespace rankscope {
namespace {

TEST(TraceFormatTest, KinetoIsRegisteredAndTheDefault) {
  ASSERT_FALSE(TraceFormats().empty());
  EXPECT_EQ(TraceFormats().front()->name(), "kineto");
}

TEST(TraceFormatTest, KinetoSniffsJsonObjectsAndArrays) {
  const TraceFormat& kineto = *TraceFormats().front();
  EXPECT_TRUE(kineto.Sniff("{\"traceEvents\": []}", "a.json"));
  EXPECT_TRUE(kineto.Sniff("\xEF\xBB\xBF \n [{\"ph\": \"X\"}]", "a.json"));  // BOM, whitespace, bare array
  EXPECT_TRUE(kineto.Sniff("{", "name-does-not-matter.bin"));
  EXPECT_FALSE(kineto.Sniff("", "a.json"));
  EXPECT_FALSE(kineto.Sniff("  \n", "a.json"));
  EXPECT_FALSE(kineto.Sniff("\x89PNG\r\n", "a.json"));
}

TEST(TraceFormatTest, UnrecognisedBytesGoToTheDefaultFormatWhichSaysWhy) {
  EXPECT_EQ(&SelectTraceFormat("\x89PNG\r\n", "x.png"), TraceFormats().front());
  auto model = ReadTraceBytes("hello", "x.txt");
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.status().message().find("x.txt: not a JSON trace: expected '{' or '[' at byte 0"), std::string::npos)
      << model.status().message();
}

TEST(TraceFormatTest, SniffingSeesInflatedBytesAndReadingStillGetsThemAll) {
  // Longer than the sniffed head, gzipped: the format must read every event, from byte 0.
  std::string json = "{\"traceEvents\": [";
  for (int i = 0; i < 500; ++i) {
    json += (i ? "," : "") + std::string("{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"op\",\"pid\":1,\"tid\":1,\"ts\":") +
            std::to_string(i) + ",\"dur\":1}";
  }
  json += "]}";
  ASSERT_GT(json.size(), TraceFormat::kSniffBytes);
  auto model = ReadTraceBytes(testing::Gzip(json), "big.json.gz");
  ASSERT_TRUE(model.ok()) << model.status().message();
  EXPECT_EQ(model->slices.size(), 500u);
  EXPECT_TRUE(model->stats.gzip);
  EXPECT_EQ(model->stats.json_bytes, json.size());
}

TEST(TraceFormatTest, DirectorySearchUsesTheFormatsFileNames) {
  EXPECT_TRUE(HasTraceFileSuffix("rank0.pt.trace.json"));
  EXPECT_TRUE(HasTraceFileSuffix("rank0.pt.trace.json.gz"));
  EXPECT_FALSE(HasTraceFileSuffix("telemetry.host.tsv"));
  EXPECT_FALSE(HasTraceFileSuffix("capture.manifest"));
  EXPECT_EQ(TraceFilePatterns(), "*.json, *.json.gz");
}

}  // namespace
}  // namespace rankscope

// The rank summary format (summary/summary_codec.h) on a recorded trace: a summary survives the
// round trip field for field, and every truncation, every flipped byte and another format
// version is an error of the right kind, never a wrong summary.
#include <gtest/gtest.h>

#include <string>

#include "rankscope/analysis/analyze_rank.h"
#include "rankscope/ingest/read_trace.h"
#include "rankscope/summary/summary_codec.h"

namespace rankscope::summary {
namespace {

SummaryFile RecordedSummary() {
  auto model = ReadTrace(std::string(RANKSCOPE_SOURCE_DIR) + "/tests/data/cluster/ground_truth/collective/rank2.pt.trace.json.gz");
  EXPECT_TRUE(model.ok()) << model.status().message();
  auto summary = AnalyzeRank(*model, AnalysisOptions{});
  EXPECT_TRUE(summary.ok()) << summary.status().message();
  SummaryFile file;
  file.producer = "test";
  file.options_key = "window=auto";
  file.trace = {"rank2.pt.trace.json.gz", 1234, 5678, 91011};
  file.summary = std::move(summary).value();
  return file;
}

TEST(SummaryCodecTest, RoundTripKeepsEveryField) {
  const SummaryFile file = RecordedSummary();
  ASSERT_FALSE(file.summary.steps.empty());
  ASSERT_FALSE(file.summary.collectives.empty());
  const std::string bytes = EncodeSummary(file);
  auto back = DecodeSummary(bytes);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(EncodeSummary(*back), bytes);
  EXPECT_EQ(back->trace, file.trace);
  EXPECT_EQ(back->options_key, file.options_key);
  const RankSummary& a = file.summary;
  const RankSummary& b = back->summary;
  EXPECT_EQ(b.distributed_rank, a.distributed_rank);
  EXPECT_EQ(b.window_start_ns, a.window_start_ns);
  EXPECT_EQ(b.steps.size(), a.steps.size());
  EXPECT_EQ(b.steps.back().comm_exposed_ns, a.steps.back().comm_exposed_ns);
  ASSERT_FALSE(a.cpu_ops.rows.empty());  // a CPU (gloo) job: its function tables are CPU ops
  EXPECT_EQ(b.cpu_ops.rows.size(), a.cpu_ops.rows.size());
  EXPECT_EQ(b.cpu_ops.rows.front().name, a.cpu_ops.rows.front().name);
  EXPECT_EQ(b.cpu_ops.rows.front().bottleneck_ns, a.cpu_ops.rows.front().bottleneck_ns);
  EXPECT_EQ(b.collectives.size(), a.collectives.size());
  EXPECT_EQ(b.collectives.back().seq, a.collectives.back().seq);
  EXPECT_EQ(b.gpu.exposed_ns, a.gpu.exposed_ns);
  EXPECT_EQ(b.launch.histogram, a.launch.histogram);
}

TEST(SummaryCodecTest, EveryTruncationIsAnError) {
  const std::string bytes = EncodeSummary(RecordedSummary());
  for (size_t n = 0; n < bytes.size(); n += (n < 64 ? 1 : 97)) {
    auto r = DecodeSummary(std::string_view(bytes).substr(0, n));
    ASSERT_FALSE(r.ok()) << n;
    EXPECT_EQ(r.status().code(), n < kSummaryMagic.size() ? StatusCode::kNotATrace : StatusCode::kDataLoss) << n;
  }
}

TEST(SummaryCodecTest, FlippedBytesAreErrors) {
  const std::string bytes = EncodeSummary(RecordedSummary());
  for (size_t at = 0; at < bytes.size(); at += (at < 64 ? 1 : 89)) {
    if (at >= 12 && at < 16) continue;  // reserved
    std::string bad = bytes;
    bad[at] ^= 0x10;
    EXPECT_FALSE(DecodeSummary(bad).ok()) << at;
  }
}

TEST(SummaryCodecTest, AnotherVersionNamesBoth) {
  std::string bytes = EncodeSummary(RecordedSummary());
  bytes[8] = static_cast<char>(kSummaryFormatVersion + 1);
  auto r = DecodeSummary(bytes);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find(fmt::format("version {} (a newer rankscope); this rankscope reads version {}",
                                                  kSummaryFormatVersion + 1, kSummaryFormatVersion)),
            std::string::npos)
      << r.status().message();
}

TEST(SummaryCodecTest, PayloadIndicesAreChecked) {
  SummaryFile file = RecordedSummary();
  file.summary.collectives.back().type = static_cast<uint32_t>(file.summary.collective_types.size());
  const std::string bytes = EncodeSummary(file);
  auto r = DecodeSummary(bytes);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("collective instance refers to type"), std::string::npos);
}

}  // namespace
}  // namespace rankscope::summary

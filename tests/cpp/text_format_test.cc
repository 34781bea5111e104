// The one duration and the one byte formatter every report uses.
#include "rankscope/report/text_format.h"

#include <gtest/gtest.h>

namespace rankscope {
namespace {

TEST(TextFormatTest, Durations) {
  EXPECT_EQ(FormatNs(0), "0 ns");
  EXPECT_EQ(FormatNs(812), "812 ns");
  EXPECT_EQ(FormatNs(45'249), "45.2 us");
  EXPECT_EQ(FormatNs(12'345'678), "12.35 ms");
  EXPECT_EQ(FormatNs(1'234'400'000), "1.234 s");
  EXPECT_EQ(FormatNs(-2'500'000), "-2.50 ms");
  EXPECT_EQ(FormatNs(812.4), "812 ns");  // fractional ns (estimates) round
  EXPECT_EQ(FormatNs(int64_t{713'092'000}), "713.09 ms");
}

TEST(TextFormatTest, Bytes) {
  EXPECT_EQ(FormatByteCount(0), "0 B");
  EXPECT_EQ(FormatByteCount(1023), "1023 B");
  EXPECT_EQ(FormatByteCount(1536), "1.5 KiB");
  EXPECT_EQ(FormatByteCount(int64_t{5} << 20), "5.0 MiB");
  EXPECT_EQ(FormatByteCount((int64_t{5} << 30) / 4), "1.25 GiB");
  EXPECT_EQ(FormatByteCount(-1), "-");
}

TEST(TextFormatTest, UtcTime) {
  EXPECT_EQ(FormatUtcTime(1'716'423'322'388'068'123), "2024-05-23 00:15:22.388068 UTC");
}

}  // namespace
}  // namespace rankscope

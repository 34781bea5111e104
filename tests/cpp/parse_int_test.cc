#include "rankscope/base/parse_int.h"

#include <gtest/gtest.h>

namespace rankscope {
namespace {

TEST(ParseIntTest, WholeTextOnly) {
  EXPECT_EQ(ParseInt("12"), 12);
  EXPECT_EQ(ParseInt("-3"), -3);
  EXPECT_EQ(ParseInt("9223372036854775807"), INT64_MAX);
  EXPECT_EQ(ParseInt(""), std::nullopt);
  EXPECT_EQ(ParseInt("+1"), std::nullopt);
  EXPECT_EQ(ParseInt(" 1"), std::nullopt);
  EXPECT_EQ(ParseInt("1 "), std::nullopt);
  EXPECT_EQ(ParseInt("12a"), std::nullopt);
  EXPECT_EQ(ParseInt("1.5"), std::nullopt);
  EXPECT_EQ(ParseInt("9223372036854775808"), std::nullopt);  // out of range
}

TEST(ParseIntTest, OtherBases) {
  EXPECT_EQ(ParseInt("ff", 16), 255);
  EXPECT_EQ(ParseInt("0x10", 16), std::nullopt);  // the caller strips a prefix
}

}  // namespace
}  // namespace rankscope

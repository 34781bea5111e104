#include "rankscope/base/decimal.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <random>

namespace rankscope {
namespace {

int64_t Ns(std::string_view text) {
  int64_t v = 0;
  EXPECT_EQ(ParseMicrosToNanos(text, &v), NumberError::kOk) << text;
  return v;
}

TEST(DecimalTest, IntegerMicroseconds) {
  EXPECT_EQ(Ns("0"), 0);
  EXPECT_EQ(Ns("1"), 1000);
  EXPECT_EQ(Ns("1623143089861"), 1623143089861000);
  EXPECT_EQ(Ns("-5"), -5000);
}

TEST(DecimalTest, ThreeDecimalsAreExact) {
  EXPECT_EQ(Ns("4424458002433.952"), 4424458002433952);
  EXPECT_EQ(Ns("0.001"), 1);
  EXPECT_EQ(Ns("12.5"), 12500);
  EXPECT_EQ(Ns("1.05"), 1050);
  EXPECT_EQ(Ns("-0.5"), -500);
}

// The reason this parser exists: through a double, many 3-decimal values come out 1 ns off.
TEST(DecimalTest, ExactWhereDoublesAreNot) {
  std::mt19937_64 rng(42);
  int double_wrong = 0;
  for (int i = 0; i < 100000; ++i) {
    const int64_t ns = static_cast<int64_t>(rng() % 9000000000000000ull);
    char text[64];
    std::snprintf(text, sizeof(text), "%lld.%03lld", static_cast<long long>(ns / 1000),
                  static_cast<long long>(ns % 1000));
    ASSERT_EQ(Ns(text), ns) << text;
    const int64_t via_double = static_cast<int64_t>(std::strtod(text, nullptr) * 1000.0);
    double_wrong += via_double != ns;
  }
  EXPECT_GT(double_wrong, 1000);  // the double route really is lossy on such values
}

TEST(DecimalTest, SubNanosecondDigitsRoundHalfAwayFromZero) {
  EXPECT_EQ(Ns("1.0004"), 1000);
  EXPECT_EQ(Ns("1.0005"), 1001);
  EXPECT_EQ(Ns("1.00049999999999999999"), 1000);
  EXPECT_EQ(Ns("-1.0005"), -1001);
  EXPECT_EQ(Ns("0.0004"), 0);
}

TEST(DecimalTest, Exponents) {
  EXPECT_EQ(Ns("1e3"), 1000000);
  EXPECT_EQ(Ns("1.5E-3"), 2);  // 1.5 ns rounds to 2
  EXPECT_EQ(Ns("2.5e+2"), 250000);
  EXPECT_EQ(Ns("1e-400"), 0);
  EXPECT_EQ(Ns("0e999999999"), 0);
}

TEST(DecimalTest, Rejections) {
  int64_t v;
  for (const char* bad : {"", "-", "abc", "1.", ".5", "1e", "1e+", "1..2", "0x10", "1 2", "--1", "\"1\""}) {
    EXPECT_EQ(ParseMicrosToNanos(bad, &v), NumberError::kNotANumber) << bad;
  }
  for (const char* huge : {"9223372036854776", "1e400", "99999999999999999999999", "-9223372036854776"}) {
    EXPECT_EQ(ParseMicrosToNanos(huge, &v), NumberError::kOutOfRange) << huge;
  }
}

TEST(DecimalTest, Int64Limits) {
  int64_t v;
  EXPECT_EQ(ParseScaledDecimal("9223372036854775807", 0, &v), NumberError::kOk);
  EXPECT_EQ(v, INT64_MAX);
  EXPECT_EQ(ParseScaledDecimal("-9223372036854775808", 0, &v), NumberError::kOk);
  EXPECT_EQ(v, INT64_MIN);
  EXPECT_EQ(ParseScaledDecimal("9223372036854775808", 0, &v), NumberError::kOutOfRange);
}

}  // namespace
}  // namespace rankscope

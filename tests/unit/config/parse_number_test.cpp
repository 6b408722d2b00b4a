// Strict number parsing (core/parse_number.hpp), used by the CLI flags, the YAML, DSE CSV and CACTI
// readers: decimal only, no silent truncation, rounding, nan or inf.
#include <gtest/gtest.h>

#include <climits>

#include "core/parse_number.hpp"

namespace capsgen {
namespace {

TEST(ParseNumber, DecimalIntegers) {
  EXPECT_EQ(parse_decimal_int("0"), 0);
  EXPECT_EQ(parse_decimal_int("010"), 10);  // decimal, not octal
  EXPECT_EQ(parse_decimal_int("+7"), 7);
  EXPECT_EQ(parse_decimal_int("-12"), -12);
  EXPECT_EQ(parse_decimal_int("9223372036854775807"), LLONG_MAX);
  for (const char* bad : {"", "+", "-", "0x1", "1.9", "1e3", " 1", "1 ", "9223372036854775808", "nan", "inf", "1_000"})
    EXPECT_FALSE(parse_decimal_int(bad).has_value()) << bad;
}

TEST(ParseNumber, FiniteReals) {
  EXPECT_DOUBLE_EQ(*parse_finite_real("0.5"), 0.5);
  EXPECT_DOUBLE_EQ(*parse_finite_real("-1.25e3"), -1250);
  EXPECT_DOUBLE_EQ(*parse_finite_real(".5"), 0.5);
  EXPECT_DOUBLE_EQ(*parse_finite_real("3."), 3.0);
  EXPECT_DOUBLE_EQ(*parse_finite_real("1e308"), 1e308);
  for (const char* bad : {"", ".", "e3", "1e", "nan", "NaN", "inf", "-inf", "infinity", "0x1p3", "1e400", "-1e400",
                          "1e-320", "1,5", " 1", "1.0 "})
    EXPECT_FALSE(parse_finite_real(bad).has_value()) << bad;
}

TEST(ParseNumber, IntegralReals) {
  EXPECT_EQ(parse_integral_real("1024", 1, 2048), 1024);
  EXPECT_EQ(parse_integral_real("1.024e3", 1, 2048), 1024);
  EXPECT_FALSE(parse_integral_real("0.5", 0, 10).has_value());
  EXPECT_FALSE(parse_integral_real("1e30", 0, LLONG_MAX).has_value());
  EXPECT_FALSE(parse_integral_real("9223372036854775808", 0, LLONG_MAX).has_value());  // 2^63
  EXPECT_FALSE(parse_integral_real("9.223372036854775808e18", 0, LLONG_MAX).has_value());
  EXPECT_FALSE(parse_integral_real("0", 1, 10).has_value());
  EXPECT_FALSE(parse_integral_real("inf", 0, 10).has_value());
}

}  // namespace
}  // namespace capsgen

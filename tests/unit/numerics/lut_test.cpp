// Every LUT against its real function over its whole address range. Guarantee (docs/numerics.md):
// each entry is the real value rounded to nearest (|error| <= 0.5 LSB), or the saturation limit
// when the real value is beyond it.
#include <gtest/gtest.h>

#include <cmath>

#include "config/accel_config.hpp"
#include "numerics/activation.hpp"
#include "numerics/fixed.hpp"

namespace capsgen::fx {
namespace {

// Checks one LUT entry: value within 0.5 LSB of `ideal`, or saturated at [lo, hi] correctly.
void expect_entry(std::int64_t value, double ideal, std::int64_t lo, std::int64_t hi, const std::string& what) {
  if (ideal >= double(hi) + 0.5) {
    ASSERT_EQ(value, hi) << what << " ideal " << ideal;
  } else if (ideal <= double(lo) - 0.5) {
    ASSERT_EQ(value, lo) << what << " ideal " << ideal;
  } else {
    ASSERT_LE(std::fabs(double(value) - ideal), 0.5 + 1e-9) << what << " ideal " << ideal;
  }
}

std::vector<ActParams> param_sets() {
  std::vector<ActParams> v;
  v.push_back(ActParams{});  // CapsAcc defaults: sqrt 12->8, squash 6+5->8, exp 8->8
  ActParams wide;
  wide.act_bits = 10;
  wide.sqrt_in_bits = 14;
  wide.sqrt_out_bits = 10;
  wide.sq_elem_bits = 8;
  wide.sq_norm_bits = 7;
  wide.sq_out_bits = 10;
  wide.sq_in_frac = 6;
  wide.sq_norm_shift = 4;
  wide.exp_in_bits = 9;
  wide.exp_out_bits = 10;
  wide.sm_in_frac = 6;
  v.push_back(wide);
  ActParams narrow;
  narrow.act_bits = 6;
  narrow.sqrt_in_bits = 9;
  narrow.sqrt_out_bits = 5;
  narrow.sq_elem_bits = 4;
  narrow.sq_norm_bits = 3;
  narrow.sq_out_bits = 6;
  narrow.sq_in_frac = 3;
  narrow.sq_norm_shift = 0;
  narrow.exp_in_bits = 5;
  narrow.exp_out_bits = 6;
  narrow.sm_in_frac = 3;
  v.push_back(narrow);
  return v;
}

class LutTest : public ::testing::TestWithParam<ActParams> {};

TEST_P(LutTest, SqrtWithinHalfLsb) {
  const ActParams p = GetParam();
  const auto lut = build_sqrt_lut(p);
  ASSERT_EQ(lut.size(), std::size_t{1} << p.sqrt_in_bits);
  for (std::size_t a = 0; a < lut.size(); ++a)
    expect_entry(lut[a], std::ldexp(std::sqrt(double(a)), p.sqrt_frac()), 0, umax(p.sqrt_out_bits),
                 "sqrt[" + std::to_string(a) + "]");
  // Monotonic non-decreasing: the norm never shrinks as the vector grows.
  for (std::size_t a = 1; a < lut.size(); ++a) ASSERT_GE(lut[a], lut[a - 1]);
}

TEST_P(LutTest, SquashWithinHalfLsb) {
  const ActParams p = GetParam();
  const auto lut = build_squash_lut(p);
  const int elem_frac = p.sq_in_frac - (p.act_bits - p.sq_elem_bits);
  const int nf = p.norm_frac(p.sq_in_frac, p.sq_norm_shift) - (p.sqrt_out_bits - p.sq_norm_bits);
  ASSERT_EQ(lut.size(), std::size_t{1} << (p.sq_elem_bits + p.sq_norm_bits));
  for (std::uint32_t e = 0; e < (1u << p.sq_elem_bits); ++e)
    for (std::uint32_t m = 0; m < (1u << p.sq_norm_bits); ++m) {
      const double x = std::ldexp(double(sign_extend(e, p.sq_elem_bits)), -elem_frac);
      const double n = std::ldexp(double(m), -nf);
      const double ideal = std::ldexp(x * n / (1 + n * n), p.squash_out_frac());
      expect_entry(sign_extend(lut[(e << p.sq_norm_bits) | m], p.sq_out_bits), ideal, smin(p.sq_out_bits),
                   smax(p.sq_out_bits), "squash[e=" + std::to_string(e) + ",m=" + std::to_string(m) + "]");
    }
}

// Gain kind: the same widths with a gain LUT of gain_bits = out_bits, addressed by the norm alone.
TEST_P(LutTest, SquashGainWithinHalfLsb) {
  ActParams p = GetParam();
  p.sq_gain = true;
  p.sq_gain_bits = p.sq_out_bits;
  const auto lut = build_squash_lut(p);
  const int nf = p.norm_frac(p.sq_in_frac, p.sq_norm_shift) - (p.sqrt_out_bits - p.sq_norm_bits);
  ASSERT_EQ(lut.size(), std::size_t{1} << p.sq_norm_bits);
  ASSERT_EQ(p.squash_addr_bits(), p.sq_norm_bits);
  ASSERT_EQ(p.squash_data_bits(), p.sq_gain_bits);
  for (std::uint32_t m = 0; m < lut.size(); ++m) {
    const double n = std::ldexp(double(m), -nf);
    expect_entry(lut[m], std::ldexp(n / (1 + n * n), p.squash_gain_frac()), 0, umax(p.sq_gain_bits),
                 "gain[m=" + std::to_string(m) + "]");
  }
}

TEST_P(LutTest, ExpWithinHalfLsb) {
  const ActParams p = GetParam();
  const auto lut = build_exp_lut(p);
  ASSERT_EQ(lut.size(), std::size_t{1} << p.exp_in_bits);
  for (std::uint32_t a = 0; a < lut.size(); ++a) {
    const double d = std::ldexp(double(a), -p.exp_addr_frac());
    expect_entry(lut[a], std::ldexp(std::exp(-d), p.exp_frac()), 0, umax(p.exp_out_bits),
                 "exp[" + std::to_string(a) + "]");
  }
  // exp(0) = 1.0 saturates to the largest code, so every softmax sum is > 0.
  EXPECT_EQ(lut[0], umax(p.exp_out_bits));
  for (std::size_t a = 1; a < lut.size(); ++a) ASSERT_LE(lut[a], lut[a - 1]);
}

INSTANTIATE_TEST_SUITE_P(Widths, LutTest, ::testing::ValuesIn(param_sets()));

TEST(Lut, CapsAccDefaultSizes) {
  const ActParams p;
  EXPECT_EQ(build_sqrt_lut(p).size(), 4096u);     // 12-bit in
  EXPECT_EQ(build_squash_lut(p).size(), 2048u);   // 6-bit element + 5-bit norm
  EXPECT_EQ(build_exp_lut(p).size(), 256u);       // 8-bit in
  EXPECT_EQ(p.sqrt_frac(), 2);
  EXPECT_EQ(p.exp_frac(), 8);       // exp(-d) * 256
  EXPECT_EQ(p.exp_addr_frac(), 5);  // d = (max - x) / 32, 0 <= d < 8
}

}  // namespace
}  // namespace capsgen::fx

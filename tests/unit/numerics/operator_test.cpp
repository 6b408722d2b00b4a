// The activation operators (norm, squash, softmax) on hand-computed cases, and their error against
// the real functions over random and corner inputs (docs/numerics.md states these bounds).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/rng.hpp"
#include "numerics/activation.hpp"
#include "numerics/fixed.hpp"

namespace capsgen::fx {
namespace {

struct Units {
  ActParams p;
  Units() = default;
  explicit Units(const ActParams& params) : p(params) {}
  std::vector<std::uint32_t> sqrt_lut = build_sqrt_lut(p);
  std::vector<std::uint32_t> squash_lut = build_squash_lut(p);
  std::vector<std::uint32_t> exp_lut = build_exp_lut(p);
};

TEST(Norm, HandComputed) {
  Units u;
  // (1.5, 2.0) at 5 fraction bits: codes 48, 64. sumsq = 6400, >>2 = 1600, sqrt = 40, *4 = 160.
  std::int64_t x[2] = {48, 64};
  const NormResult r = norm(u.p, u.sqrt_lut, x, 2, 2);
  EXPECT_EQ(r.sumsq, 6400);
  EXPECT_EQ(r.addr, 1600);
  EXPECT_EQ(r.norm, 160);
  EXPECT_EQ(u.p.norm_frac(5, 2), 6);  // 160 / 64 = 2.5 = |(1.5, 2)|
  // The largest vector saturates the sqrt address, and the output at 255.
  std::int64_t big[16];
  for (auto& v : big) v = -128;
  EXPECT_EQ(norm(u.p, u.sqrt_lut, big, 16, 2).addr, 4095);
  EXPECT_EQ(norm(u.p, u.sqrt_lut, big, 16, 2).norm, 255);
  EXPECT_THROW(norm(u.p, u.sqrt_lut, x, 2, 3), std::invalid_argument);
}

// |N - sqrt(sumsq / 2^shift) * 2^sqrt_frac| <= 0.5 + 2^sqrt_frac * sqrt(1/2) whenever the address
// does not saturate: the address rounding moves sumsq/2^shift by at most 1/2, and
// |sqrt(p) - sqrt(q)| <= sqrt(|p - q|).
TEST(Norm, ErrorBoundOverRandomVectors) {
  Units u;
  Rng rng(7);
  const double bound = 0.5 + std::ldexp(std::sqrt(0.5), u.p.sqrt_frac());
  double worst = 0;
  for (int trial = 0; trial < 200000; ++trial) {
    const int n = int(rng.range(1, 16));
    const int mag = int(rng.range(1, 128));
    std::int64_t x[16];
    for (int i = 0; i < n; ++i) x[i] = rng.range(-mag, mag - 1);
    const int shift = 2 * int(rng.range(0, 3));
    const NormResult r = norm(u.p, u.sqrt_lut, x, n, shift);
    const double a_real = std::ldexp(double(r.sumsq), -shift);
    if (a_real > double(umax(u.p.sqrt_in_bits))) continue;  // saturated: covered by HandComputed
    const double ideal = std::ldexp(std::sqrt(a_real), u.p.sqrt_frac());
    if (ideal > double(umax(u.p.sqrt_out_bits))) continue;
    worst = std::max(worst, std::fabs(double(r.norm) - ideal));
    ASSERT_LE(std::fabs(double(r.norm) - ideal), bound + 1e-9) << "trial " << trial;
  }
  RecordProperty("norm_max_error_lsb", std::to_string(worst));
}

using Codes = std::vector<std::int64_t>;
// The squash unit's output codes for one capsule's input codes.
Codes squash_of(const Units& u, Codes s) {
  Codes v(s.size());
  squash(u.p, u.sqrt_lut, u.squash_lut, s.data(), int(s.size()), v.data());
  return v;
}

TEST(Squash, HandComputed) {
  Units u;
  // s = (1.5, 2.0) (codes 48, 64 at 5 fraction bits), |s| = 2.5: elements -> 6-bit codes 12, 16
  // (3 fraction bits), norm 160 -> 5-bit code 20 (3 fraction bits = 2.5).
  // v = x * 2.5 / 7.25: 1.5 -> 0.5172 -> 66/128, 2.0 -> 0.6897 -> 88/128.
  EXPECT_EQ(squash_of(u, {48, 64}), (Codes{66, 88}));
  // Negative elements mirror positive ones.
  EXPECT_EQ(squash_of(u, {-48, -64}), (Codes{-66, -88}));
  // The zero vector squashes to zero.
  EXPECT_EQ(squash_of(u, {0, 0, 0, 0}), (Codes{0, 0, 0, 0}));
}

ActParams gain_params() {
  ActParams p;
  p.sq_gain = true;
  p.sq_gain_bits = 8;
  return p;
}

TEST(SquashGain, HandComputed) {
  Units u(gain_params());
  // s = (1.5, 2.0) as above: norm code 160 -> 5-bit code 20 = 2.5, g = 2.5 / 7.25 = 0.3448 -> Q0.9
  // code round(176.55) = 177; out = round_half_up(x * 177 >> (5 + 9 - 7)):
  // 48 * 177 = 8496 -> 66 (66.4), 64 * 177 = 11328 -> 89 (88.5 rounds up; the real value is 88.3).
  ASSERT_EQ(u.squash_lut.size(), 32u);
  EXPECT_EQ(u.squash_lut[20], 177u);
  EXPECT_EQ(u.p.squash_gain_shift(), 7);
  EXPECT_EQ(squash_of(u, {48, 64}), (Codes{66, 89}));
  // Round half up is not symmetric: -8496 / 128 = -66.4 -> -66, -11328 / 128 = -88.5 -> -88.
  EXPECT_EQ(squash_of(u, {-48, -64}), (Codes{-66, -88}));
  EXPECT_EQ(squash_of(u, {0, 0, 0, 0}), (Codes{0, 0, 0, 0}));
  // The largest element with the gain's peak (n = 1, g = 1/2 -> code 255 saturated) stays in range:
  // |s| = 1.0, 32 * 255 = 8160 -> 63.75 -> 64 = 0.5.
  EXPECT_EQ(squash_of(u, {32}), (Codes{64}));
}

// Over random capsules whose norm stays inside the squash LUT's norm range (|s| < 4 for the
// default formats), the squash output stays within a few LSB of the real squash of the input
// codes. The bound is measured (docs/numerics.md tabulates it); the test guards it against drift.
struct SquashError {
  double worst = 0, mean = 0;
};
SquashError squash_error(const Units& u) {
  Rng rng(11);
  double worst = 0, sum = 0;
  long long count = 0;
  for (int trial = 0; trial < 100000; ++trial) {
    const int n = int(rng.range(2, 16));
    const int mag = int(rng.range(1, 127));
    std::int64_t s[16], v[16];
    double sq = 0;
    for (int i = 0; i < n; ++i) {
      s[i] = rng.range(-mag, mag);
      const double r = std::ldexp(double(s[i]), -u.p.sq_in_frac);
      sq += r * r;
    }
    if (std::sqrt(sq) >= 3.75) continue;  // norm address saturates beyond 31/8
    squash(u.p, u.sqrt_lut, u.squash_lut, s, n, v);
    const double scale = sq > 0 ? std::sqrt(sq) / (1 + sq) : 0;
    for (int i = 0; i < n; ++i) {
      const double ideal = std::ldexp(double(s[i]), -u.p.sq_in_frac) * scale;
      const double err = std::fabs(std::ldexp(double(v[i]), -u.p.squash_out_frac()) - ideal);
      worst = std::max(worst, err);
      sum += err;
      ++count;
    }
  }
  return {worst, sum / double(count)};
}

TEST(Squash, ErrorAgainstRealSquash) {
  const SquashError e = squash_error(Units{});
  RecordProperty("squash_max_abs_error", std::to_string(e.worst));
  RecordProperty("squash_mean_abs_error", std::to_string(e.mean));
  EXPECT_LE(e.worst, 0.05);   // measured 0.0423 (6-bit elements, 5-bit norms)
  EXPECT_LE(e.mean, 0.015);   // measured 0.0122
}

// The gain kind multiplies the whole element: the element's own rounding (6 of 8 bits above) is
// gone, only the norm's quantization (5 or 8 bits) and the gain's remain.
TEST(SquashGain, ErrorAgainstRealSquash) {
  const SquashError e5 = squash_error(Units(gain_params()));
  ActParams p8 = gain_params();
  p8.sq_norm_bits = 8;
  const SquashError e8 = squash_error(Units(p8));
  RecordProperty("squash_gain_n5_max_abs_error", std::to_string(e5.worst));
  RecordProperty("squash_gain_n5_mean_abs_error", std::to_string(e5.mean));
  RecordProperty("squash_gain_n8_max_abs_error", std::to_string(e8.worst));
  RecordProperty("squash_gain_n8_mean_abs_error", std::to_string(e8.mean));
  const SquashError table = squash_error(Units{});
  EXPECT_LT(e5.mean, table.mean);
  EXPECT_LT(e8.mean, e5.mean);
  EXPECT_LT(e8.worst, table.worst);
}

TEST(Softmax, HandComputed) {
  Units u;
  // All-zero logits: every difference to the max is 0, e = 255 each. n = 10: sum 2550,
  // c = (255*128 + 1275) / 2550 = 13.3 -> 13 (= the CapsAcc first-iteration constant).
  std::int64_t z[10] = {}, c[10];
  softmax(u.p, u.exp_lut, z, 10, c);
  for (auto v : c) EXPECT_EQ(v, 13);
  // (1.0, 0): differences 0 and 32 (= 1.0): e = 255 and round(256/e) = 94, sum 349:
  // c = (32640 + 174) / 349 = 94, (12032 + 174) / 349 = 34 (real: 0.731, 0.269 -> 93.6, 34.4).
  std::int64_t x[2] = {32, 0}, c2[2];
  softmax(u.p, u.exp_lut, x, 2, c2);
  EXPECT_EQ(c2[0], 94);
  EXPECT_EQ(c2[1], 34);
  // One dominant logit: its coefficient saturates at 127 (1.0 is not representable).
  std::int64_t d[2] = {127, -128}, c3[2];
  softmax(u.p, u.exp_lut, d, 2, c3);
  EXPECT_EQ(c3[0], 127);
  EXPECT_EQ(c3[1], 0);
  // Very negative but equal logits still share evenly (max subtraction): (765*... ) -> 43 each.
  std::int64_t neg[3] = {-128, -128, -128}, c4[3];
  softmax(u.p, u.exp_lut, neg, 3, c4);
  for (auto v : c4) EXPECT_EQ(v, 43);
}

TEST(Softmax, Divider) {
  EXPECT_EQ(softmax_divide(0, 0, 7, 127), 0);
  EXPECT_EQ(softmax_divide(5, 0, 7, 127), 0);
  EXPECT_EQ(softmax_divide(5, 5, 7, 127), 127);       // 1.0 saturates
  EXPECT_EQ(softmax_divide(1, 2, 7, 127), 64);        // exactly 0.5
  EXPECT_EQ(softmax_divide(1, 3, 7, 127), 43);        // 42.67 -> 43
  EXPECT_EQ(softmax_divide(1, 256, 7, 127), 1);       // 0.5 -> 1 (half up)
  EXPECT_EQ(softmax_divide(1, 257, 7, 127), 0);       // 0.498 -> 0
  EXPECT_EQ(softmax_divide(255, 2550, 7, 127), 13);   // 12.8 -> 13
}

// Against the real softmax of the same logits, over the whole input range (any spread, any
// offset: the max subtraction makes the result independent of the offset).
TEST(Softmax, ErrorAgainstRealSoftmax) {
  Units u;
  Rng rng(5);
  double worst = 0;
  for (int trial = 0; trial < 50000; ++trial) {
    const int n = int(rng.range(2, 16));
    std::int64_t x[16], c[16];
    const int spread = int(rng.range(0, 255));
    const std::int64_t base = rng.range(-128, 127);
    for (int i = 0; i < n; ++i) x[i] = std::clamp<std::int64_t>(base + rng.range(-spread, spread), -128, 127);
    softmax(u.p, u.exp_lut, x, n, c);
    double den = 0;
    for (int i = 0; i < n; ++i) den += std::exp(std::ldexp(double(x[i]), -u.p.sm_in_frac));
    for (int i = 0; i < n; ++i) {
      const double ideal = std::exp(std::ldexp(double(x[i]), -u.p.sm_in_frac)) / den;
      worst = std::max(worst, std::fabs(std::ldexp(double(c[i]), -u.p.coupling_frac()) - ideal));
    }
  }
  RecordProperty("softmax_max_abs_error", std::to_string(worst));
  EXPECT_LE(worst, 0.02);  // measured 0.0176
}

}  // namespace
}  // namespace capsgen::fx

// PIM-CapsNet's LUT-free operators (numerics/pim_approx.hpp): exhaustive over their input ranges
// against double-precision references, with the error bounds docs/numerics.md derives, and their
// bit-level properties (monotonicity, agreement with the LUT units they replace).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/rng.hpp"
#include "numerics/activation.hpp"
#include "numerics/fixed.hpp"
#include "numerics/pim_approx.hpp"

namespace capsgen::fx {
namespace {

// capsacc-16x16's softmax / norm formats.
ActParams capsacc() {
  ActParams p;
  p.act_bits = 8;
  p.sqrt_in_bits = 12;
  p.sqrt_out_bits = 8;
  p.exp_in_bits = 8;
  p.exp_out_bits = 8;
  p.sm_in_frac = 5;
  return p;
}

// A wide variant: 16-bit activations, a 12-bit exp address, 16-bit exp and sqrt outputs, a 20-bit
// sqrt address (the largest the config allows for 16-bit act is 2*16+6, the test stops at 20).
ActParams wide() {
  ActParams p;
  p.act_bits = 16;
  p.sqrt_in_bits = 20;
  p.sqrt_out_bits = 16;
  p.exp_in_bits = 12;
  p.exp_out_bits = 16;
  p.sm_in_frac = 8;
  return p;
}

// Relative error range of the mean-corrected linear antilog 2^k (1 + f) against 2^(t - Avg):
// (1 + f) / 2^f * 2^-Avg over f in [0, 1): [2^-Avg... ] evaluated on a fine grid (docs/numerics.md).
struct RelRange {
  double lo = 1e9, hi = -1e9;
};
RelRange exp_ratio_range() {
  RelRange r;
  const double avg = 1.0 / std::log(2.0) - 1.5;
  for (int i = 0; i <= 1 << 16; ++i) {
    const double f = std::ldexp(double(i), -16);
    const double q = (1.0 + f) / std::exp2(f) * std::exp2(avg);
    r.lo = std::min(r.lo, q);
    r.hi = std::max(r.hi, q);
  }
  return r;
}

struct ErrStats {
  double max_abs = 0, sum_abs = 0, sum_signed = 0;
  long long n = 0;
  void add(double e) {
    max_abs = std::max(max_abs, std::fabs(e));
    sum_abs += std::fabs(e);
    sum_signed += e;
    ++n;
  }
  double mean_abs() const { return sum_abs / double(n); }
  double mean_signed() const { return sum_signed / double(n); }
};

void print(const char* what, const ErrStats& s) {
  std::printf("[pim] %s: max |err| %.4f LSB, mean |err| %.4f LSB, mean err %+.4f LSB over %lld inputs\n", what,
              s.max_abs, s.mean_abs(), s.mean_signed(), s.n);
}

TEST(PimExp, ConstantsAreTheRoundedReals) {
  EXPECT_EQ(pim::kLog2eQ15, std::llround(std::ldexp(1.0 / std::log(2.0), 15)));
  EXPECT_EQ(pim::kAvgQ16, std::llround(std::ldexp(1.0 / std::log(2.0) - 1.5, 16)));
  EXPECT_EQ(pim::kRecip0Q16, std::llround(std::ldexp(2.0 * std::sqrt(3.0) - 2.0, 16)));
  const RelRange r = exp_ratio_range();
  EXPECT_NEAR(r.lo, 0.9611, 1e-4);  // at f = 0: 2^Avg
  EXPECT_NEAR(r.hi, 1.0201, 1e-4);  // at f = 1/ln2 - 1
}

TEST(PimExp, HandComputed) {
  const ActParams p = capsacc();
  // a = 0: t = Avg = -3756 -> k = -1, f = 61780, out = (65536 + 61780) >> (16 + 1 - 8) = 248.
  EXPECT_EQ(pim::exp_shift(p, 0, 0), 248);
  // a = 32 (d = 1): y = -round(32*47274 / 2^4) = -94548, t = -98304 = -2 + 0.5 -> (1.5 * 2^-2) * 256 = 96.
  EXPECT_EQ(pim::exp_shift(p, 32, 0), 96);
  EXPECT_THROW(pim::exp_shift(p, -1, 0), std::invalid_argument);
}

// Exhaustive over the exp address: |out - exp(-d) 2^E| <= (1 - ratio_lo) * exact + 1 below the exact
// value and (ratio_hi - 1) * exact above it (the truncating shift only lowers), and non-increasing in a.
void check_exp(const ActParams& p, const char* name) {
  const RelRange r = exp_ratio_range();
  const double top = double(umax(p.exp_out_bits));
  ErrStats st;
  double bound_max = 0, bound_sum = 0;
  std::int64_t prev = umax(p.exp_out_bits);
  for (std::int64_t a = 0; a < (std::int64_t{1} << p.exp_in_bits); ++a) {
    const std::int64_t out = pim::exp_shift(p, a, 0);
    const double exact = std::min(top, std::ldexp(std::exp(-std::ldexp(double(a), -p.exp_addr_frac())), p.exp_out_bits));
    const double err = double(out) - exact;
    st.add(err);
    // The input alignment (Q16 rounding of d*log2 e) moves 2^y by at most 2^-17 relative * ln 2.
    const double slack = 1e-4 * exact;
    const double up = (r.hi - 1.0) * exact + slack, down = (1.0 - r.lo) * exact + 1.0 + slack;
    ASSERT_LE(err, up) << "a=" << a;
    ASSERT_GE(err, -down) << "a=" << a;
    bound_max = std::max({bound_max, up, down});
    bound_sum += std::max(up, down);
    ASSERT_LE(out, prev) << "exp_shift must be non-increasing, a=" << a;
    prev = out;
  }
  print(name, st);
  std::printf("[pim] %s: derived bounds: max %.4f LSB, mean %.4f LSB\n", name, bound_max, bound_sum / double(st.n));
  EXPECT_LE(st.max_abs, bound_max);
  EXPECT_LE(st.mean_abs(), bound_sum / double(st.n));
}

TEST(PimExp, ExhaustiveCapsacc) { check_exp(capsacc(), "exp_shift capsacc (8->8)"); }
TEST(PimExp, ExhaustiveWide) { check_exp(wide(), "exp_shift wide (12->16)"); }

// Recovery: the constant is sum(exact) / sum(approx); with it, the mean signed error over the address
// range shrinks, the output stays non-increasing, and exp(0) saturates at most to the top code.
void check_recovery(const ActParams& p, const char* name) {
  const std::int64_t q = pim::exp_recovery_q(p);
  EXPECT_GT(q, std::int64_t{1} << p.exp_out_bits);  // the truncating approximation runs low on average
  ErrStats plain, rec;
  std::int64_t prev = umax(p.exp_out_bits);
  for (std::int64_t a = 0; a < (std::int64_t{1} << p.exp_in_bits); ++a) {
    const double exact = std::ldexp(std::exp(-std::ldexp(double(a), -p.exp_addr_frac())), p.exp_out_bits);
    const std::int64_t o0 = pim::exp_shift(p, a, 0), o1 = pim::exp_shift(p, a, q);
    EXPECT_EQ(o1, sat_u(round_shift(o0 * q, p.exp_out_bits), p.exp_out_bits));
    plain.add(double(o0) - exact);
    rec.add(double(o1) - exact);
    ASSERT_LE(o1, prev);
    prev = o1;
  }
  print((std::string(name) + " no recovery").c_str(), plain);
  print((std::string(name) + " recovery").c_str(), rec);
  std::printf("[pim] %s recovery constant %lld / 2^%d = %.5f\n", name, static_cast<long long>(q), p.exp_out_bits,
              std::ldexp(double(q), -p.exp_out_bits));
  EXPECT_LT(std::fabs(rec.mean_signed()), std::fabs(plain.mean_signed()));
}

TEST(PimExp, RecoveryCapsacc) { check_recovery(capsacc(), "exp_shift capsacc"); }
TEST(PimExp, RecoveryWide) { check_recovery(wide(), "exp_shift wide"); }

// Reciprocal, exhaustive over den in [1, 2^16) and on every power-of-two boundary up to 2^40:
// r0 has relative error <= 2 - sqrt(3)... i.e. |1 - M r0| <= 0.0718, one Newton step squares it
// (<= 0.00516, always from below), the two truncations add < 2^-15. Non-increasing inside each
// binade [2^n, 2^(n+1)); at den = 2^n the error drops from 0.5% to 0.13%, so 1/den steps up there by
// less than 0.4%.
TEST(PimRecip, ExhaustiveRelativeError) {
  double worst = 0, worst_above = 0;
  double prev = 2.0;
  for (std::int64_t d = 1; d < (std::int64_t{1} << 16); ++d) {
    const pim::Recip r = pim::reciprocal(d);
    const double v = std::ldexp(double(r.r), -(16 + r.n));
    const double rel = v * double(d) - 1.0;
    worst = std::max(worst, -rel);
    worst_above = std::max(worst_above, rel);
    if ((d & (d - 1)) != 0) ASSERT_LE(v, prev) << "1/den must be non-increasing inside a binade, den=" << d;
    else ASSERT_LE(v, prev * 1.004) << "den=" << d;
    prev = v;
  }
  std::printf("[pim] reciprocal: max relative error %.6f below, %.6f above (den in [1, 2^16))\n", worst, worst_above);
  // r0's error grows by its truncations (< 2^-15), e's and r's floors add < 3 * 2^-16.
  EXPECT_LE(worst, std::pow(0.0718 + std::ldexp(1.0, -15), 2) + 3 * std::ldexp(1.0, -16));
  EXPECT_LE(worst_above, 0.0);  // Newton from either side lands below
  for (int n = 17; n <= 40; ++n)
    for (std::int64_t d : {(std::int64_t{1} << n) - 1, std::int64_t{1} << n, (std::int64_t{3} << (n - 1))}) {
      const pim::Recip r = pim::reciprocal(d);
      EXPECT_NEAR(std::ldexp(double(r.r), -(16 + r.n)) * double(d), 1.0, 0.0054) << d;
    }
  EXPECT_THROW(pim::reciprocal(0), std::invalid_argument);
}

// The softmax divide through the reciprocal, exhaustive over num in [0, 2^8) and den in [num, 2^13)
// (every softmax of up to 32 capsules has e_k <= sum < 32 * 2^8): within 1 LSB of the exact divider
// and within 0.5 + 0.00516 * quotient + 2^-15 * quotient of the real quotient.
TEST(PimRecip, ExhaustiveSoftmaxDivide) {
  ErrStats vs_real, vs_div;
  for (std::int64_t num = 0; num < 256; ++num)
    for (std::int64_t den = std::max<std::int64_t>(num, 1); den < (1 << 13); ++den) {
      const std::int64_t q = pim::divide_recip(num, den, 7, 127);
      const double real = std::min(127.0, std::ldexp(double(num), 7) / double(den));
      const double e = double(q) - real;
      vs_real.add(e);
      vs_div.add(double(q - softmax_divide(num, den, 7, 127)));
      ASSERT_LE(std::fabs(e), 0.5 + 0.0052 * real + 1e-9) << num << "/" << den;
    }
  print("divide_recip vs real quotient", vs_real);
  print("divide_recip vs exact divider", vs_div);
  EXPECT_LE(vs_div.max_abs, 1.0);
  EXPECT_EQ(pim::divide_recip(5, 0, 7, 127), 0);
}

// Inverse square root, exhaustive over a in [1, 2^20): |y0 sqrt(M) - 1| <= 4.9% (minimax constants),
// one Newton step leaves 1.5 eps^2 + 0.5 |eps|^3 <= 0.0037 (from below), the truncations < 2^-14.
TEST(PimRsqrt, ExhaustiveRelativeError) {
  double below = 0, above = 0;
  for (std::int64_t a = 1; a < (std::int64_t{1} << 20); ++a) {
    const pim::Rsqrt r = pim::rsqrt(a);
    const double rel = std::ldexp(double(r.y), -(16 + r.e)) * std::sqrt(double(a)) - 1.0;
    below = std::max(below, -rel);
    above = std::max(above, rel);
  }
  std::printf("[pim] rsqrt: max relative error %.6f below, %.6f above (a in [1, 2^20))\n", below, above);
  const double eps = 0.0492;
  EXPECT_LE(below, 1.5 * eps * eps + 0.5 * eps * eps * eps + std::ldexp(1.0, -14));
  EXPECT_LE(above, std::ldexp(1.0, -14));
  EXPECT_THROW(pim::rsqrt(0), std::invalid_argument);
}

// sqrt through the inverse square root, exhaustive over the sqrt address: within 1 LSB of the sqrt
// LUT it replaces and within 0.5 + 0.0038 * value of the real sqrt. `strict`: non-decreasing (holds
// for capsacc's 12->8 unit). Not claimed in general: where the initial guess changes segment
// (a = 2^(2e+1)) the Newton result's error changes from 0.03% to 0.1%, and the floors of the Newton
// step can reverse the 16-bit output by a few LSB.
void check_sqrt(const ActParams& p, const char* name, bool strict) {
  const std::vector<std::uint32_t> lut = build_sqrt_lut(p);
  ErrStats vs_real, vs_lut;
  std::int64_t prev = 0;
  for (std::int64_t a = 0; a < (std::int64_t{1} << p.sqrt_in_bits); ++a) {
    const std::int64_t o = pim::sqrt_rsqrt(p, a);
    const double real = std::min(double(umax(p.sqrt_out_bits)), std::ldexp(std::sqrt(double(a)), p.sqrt_frac()));
    vs_real.add(double(o) - real);
    vs_lut.add(double(o) - double(lut[std::size_t(a)]));
    ASSERT_LE(std::fabs(double(o) - real), 0.5 + 0.0038 * real) << "a=" << a;
    if (strict) {
      ASSERT_GE(o, prev) << "sqrt must be non-decreasing, a=" << a;
    }
    prev = o;
  }
  print((std::string(name) + " vs real sqrt").c_str(), vs_real);
  print((std::string(name) + " vs sqrt LUT").c_str(), vs_lut);
  // Both are within their bounds of the real sqrt: 0.5 (LUT) + 0.5 + 0.0038 * top (approximation),
  // which is 1 LSB for an 8-bit output.
  EXPECT_LE(vs_lut.max_abs, std::floor(1.0 + 0.0038 * double(umax(p.sqrt_out_bits))));
}

TEST(PimSqrt, ExhaustiveCapsacc) { check_sqrt(capsacc(), "sqrt_rsqrt capsacc (12->8)", true); }
TEST(PimSqrt, ExhaustiveWide) { check_sqrt(wide(), "sqrt_rsqrt wide (20->16)", false); }

// The activation operators dispatch to the approximations when the params select them.
TEST(PimOperators, SoftmaxAndNormDispatch) {
  ActParams p = capsacc();
  const std::vector<std::uint32_t> exp_lut = build_exp_lut(p), sqrt_lut = build_sqrt_lut(p);
  Rng rng(24);
  for (int trial = 0; trial < 2000; ++trial) {
    const int n = int(rng.range(2, 32));
    std::int64_t x[32], ref[32], got[32];
    for (int i = 0; i < n; ++i) x[i] = rng.range(-128, 127);
    ActParams q = p;
    q.exp_pim = true;
    q.exp_recovery_q = trial % 2 ? pim::exp_recovery_q(p) : 0;
    q.divide_pim = trial % 3 == 0;
    softmax(q, exp_lut, x, n, got);
    // Reference: the same pipeline written out with the pim functions.
    std::int64_t mx = *std::max_element(x, x + n), sum = 0, e[32];
    for (int i = 0; i < n; ++i) {
      e[i] = pim::exp_shift(p, sat_u(round_shift(mx - x[i], 0), 8), q.exp_recovery_q);
      sum += e[i];
    }
    for (int i = 0; i < n; ++i)
      ref[i] = q.divide_pim ? pim::divide_recip(e[i], sum, 7, 127) : softmax_divide(e[i], sum, 7, 127);
    for (int i = 0; i < n; ++i) ASSERT_EQ(got[i], ref[i]);
    // Coefficients still sum to about 1 (each within 1 LSB of its share, plus the approximation).
    std::int64_t total = 0;
    for (int i = 0; i < n; ++i) total += got[i];
    EXPECT_NEAR(double(total), 128.0, 0.5 * n + 1.0);
  }
  ActParams s = p;
  s.sqrt_pim = true;
  std::int64_t v[3] = {48, 64, -20};
  const NormResult r = norm(s, sqrt_lut, v, 3, 2);
  EXPECT_EQ(r.norm, pim::sqrt_rsqrt(p, r.addr));
}

}  // namespace
}  // namespace capsgen::fx

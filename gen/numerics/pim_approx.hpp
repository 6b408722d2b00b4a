// PIM-CapsNet's LUT-free routing operators (Zhang et al., HPCA 2020, section 5.2.2), in integer
// arithmetic: the shift-based exp with its mean correction and accuracy-recovery multiply (Eq. 13-14),
// a reciprocal for the softmax divide and a square root (through the inverse square root) for the
// norm. Each is defined here once; fx::softmax and fx::norm call them when the preset selects them.
// docs/numerics.md ("PIM-CapsNet approximations") gives the formulas, costs and measured errors.
#pragma once

#include <cstdint>

namespace capsgen::fx {

struct ActParams;

namespace pim {

// ---- constants (all fixed-point, fraction bits in the name) ----
constexpr int kFrac = 16;                     // internal fraction bits of every approximation
constexpr std::int64_t kLog2eQ15 = 47274;     // round(log2(e) * 2^15)
constexpr std::int64_t kAvgQ16 = -3756;       // round((1/ln 2 - 3/2) * 2^16): mean of 2^f - 1 - f, f in [0,1)
constexpr std::int64_t kRecip0Q16 = 95951;    // round((2*sqrt(3) - 2) * 2^16): 1/M ~ c - M/2 on [1,2)
constexpr std::int64_t kRsqrtLoQ16 = 79738;   // 1/sqrt(M) ~ c - M/4 on [1,2) (minimax, 3.3%)
constexpr std::int64_t kRsqrtHiQ16 = 63930;   // 1/sqrt(M) ~ c - M/8 on [2,4) (minimax, 4.9%)

// Shift-based exp of the max-subtracted softmax, drop-in for the exp LUT: the same address a
// (unsigned, p.exp_in_bits bits, standing for d = max - x = a / 2^exp_addr_frac) and the same output
// format (unsigned exp_out_bits code with exp_out_bits fraction bits). Without recovery:
//   y  = -(a * kLog2eQ15) aligned to Q16 (round-half-up)      = -d*log2(e)
//   t  = y + kAvgQ16;  k = floor(t / 2^16);  f = t mod 2^16   (2^y ~ 2^k (1 + f) after the mean correction)
//   out = floor((2^16 + f) / 2^(16 - k - exp_out_bits)), saturated to exp_out_bits.
// With recovery (`recovery_q` != 0, format Q1.exp_out_bits): out = sat(round_shift(out * recovery_q, exp_out_bits)).
std::int64_t exp_shift(const ActParams& p, std::int64_t a, std::int64_t recovery_q);

// The recovery constant of a preset: 1 + the mean relative shortfall of exp_shift over its whole
// address range, sum(exact) / sum(approx) with exact = exp(-d) * 2^exp_out_bits, rounded to
// Q1.exp_out_bits. A preset constant (computed once, like a LUT's contents).
std::int64_t exp_recovery_q(const ActParams& p);

// Reciprocal of den >= 1: 1/den ~ r * 2^-(16 + n), r in Q16 in (0.46, 1].
//   n = floor(log2 den) (leading-zero count); M = den normalized to [2^16, 2^17) (left shift, or a
//   truncating right shift); r0 = kRecip0Q16 - M/2 (floor); one Newton step
//   e = floor((2^33 - M*r0) / 2^16); r = floor(r0 * e / 2^16).
struct Recip {
  std::int64_t r = 0;
  int n = 0;
};
Recip reciprocal(std::int64_t den);

// The softmax divide through the reciprocal: round-half-up of num * r / 2^(16 + n - frac),
// saturated to sat_max; den <= 0 gives 0. Drop-in for fx::softmax_divide.
std::int64_t divide_recip(std::int64_t num, std::int64_t den, int frac, std::int64_t sat_max);

// Inverse square root of a >= 1: 1/sqrt(a) ~ y * 2^-(16 + e), y in Q16.
//   n = floor(log2 a), e = floor(n/2); M = a * 2^(16 - 2e) in [2^16, 2^18) (truncating if 2e > 16);
//   y0 = kRsqrtLoQ16 - M/4 if M < 2^17 else kRsqrtHiQ16 - M/8; one Newton step
//   t = floor(y0^2 / 2^16); u = floor(M*t / 2^16); y = floor(y0 * (3*2^16 - u) / 2^17).
struct Rsqrt {
  std::int64_t y = 0;
  std::int64_t m = 0;  // the normalized M (Q16)
  int e = 0;
};
Rsqrt rsqrt(std::int64_t a);

// sqrt, drop-in for the sqrt LUT: address a (p.sqrt_in_bits) to round(sqrt(a) * 2^sqrt_frac) as
// round_shift(M * y, 32 - e - sqrt_frac) saturated to sqrt_out_bits; 0 for a = 0.
std::int64_t sqrt_rsqrt(const ActParams& p, std::int64_t a);

}  // namespace pim
}  // namespace capsgen::fx

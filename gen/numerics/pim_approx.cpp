#include "numerics/pim_approx.hpp"

#include <bit>
#include <cmath>
#include <stdexcept>

#include "numerics/activation.hpp"
#include "numerics/fixed.hpp"

namespace capsgen::fx::pim {
namespace {

// Shift by a signed amount: right (floor) for s > 0, left for s < 0.
std::int64_t shift_floor(std::int64_t v, int s) {
  if (s >= 63) return v < 0 ? -1 : 0;
  return s >= 0 ? (v >> s) : (v << -s);
}

// Round-half-up shift by a signed amount (left shifts are exact).
std::int64_t shift_round(std::int64_t v, int s) {
  if (s >= 62) return 0;
  return s >= 0 ? round_shift(v, s) : (v << -s);
}

// floor(log2 v) for v >= 1: the leading-zero count of a 64-bit word, subtracted from 63.
int floor_log2(std::int64_t v) { return 63 - std::countl_zero(static_cast<std::uint64_t>(v)); }

}  // namespace

std::int64_t exp_shift(const ActParams& p, std::int64_t a, std::int64_t recovery_q) {
  if (a < 0) throw std::invalid_argument("pim::exp_shift: negative address");
  const int E = p.exp_out_bits;
  // -d*log2(e) in Q16: a has exp_addr_frac fraction bits, the constant 15.
  const std::int64_t y = -shift_round(a * kLog2eQ15, p.exp_addr_frac() + 15 - kFrac);
  const std::int64_t t = y + kAvgQ16;
  const std::int64_t k = t >> kFrac;  // floor: the power of two
  const std::int64_t f = t - (k << kFrac);  // the fraction, in [0, 2^16)
  const std::int64_t s = kFrac - k - E;     // >= 1: k <= -1 because t < 0, and E <= 16
  std::int64_t out = s >= 62 ? 0 : ((std::int64_t{1} << kFrac) + f) >> s;
  out = sat_u(out, E);
  if (recovery_q != 0) out = sat_u(round_shift(out * recovery_q, E), E);
  return out;
}

std::int64_t exp_recovery_q(const ActParams& p) {
  double exact = 0, approx = 0;
  for (std::int64_t a = 0; a < (std::int64_t{1} << p.exp_in_bits); ++a) {
    exact += std::ldexp(std::exp(-std::ldexp(double(a), -p.exp_addr_frac())), p.exp_out_bits);
    approx += double(exp_shift(p, a, 0));
  }
  if (approx <= 0) return std::int64_t{1} << p.exp_out_bits;
  return std::llround(std::ldexp(exact / approx, p.exp_out_bits));
}

Recip reciprocal(std::int64_t den) {
  if (den < 1) throw std::invalid_argument("pim::reciprocal: den must be >= 1");
  Recip r;
  r.n = floor_log2(den);
  const std::int64_t m = shift_floor(den, r.n - kFrac);  // [2^16, 2^17): 1 <= M < 2
  const std::int64_t r0 = kRecip0Q16 - (m >> 1);
  const std::int64_t e = ((std::int64_t{1} << (2 * kFrac + 1)) - m * r0) >> kFrac;  // 2 - M*r0, Q16
  r.r = (r0 * e) >> kFrac;
  return r;
}

std::int64_t divide_recip(std::int64_t num, std::int64_t den, int frac, std::int64_t sat_max) {
  if (den <= 0) return 0;
  const Recip r = reciprocal(den);
  const std::int64_t q = shift_round(num * r.r, kFrac + r.n - frac);
  return q > sat_max ? sat_max : q;
}

Rsqrt rsqrt(std::int64_t a) {
  if (a < 1) throw std::invalid_argument("pim::rsqrt: a must be >= 1");
  Rsqrt r;
  r.e = floor_log2(a) / 2;
  r.m = shift_floor(a, 2 * r.e - kFrac);  // [2^16, 2^18): 1 <= M < 4
  const std::int64_t y0 = r.m < (std::int64_t{2} << kFrac) ? kRsqrtLoQ16 - (r.m >> 2) : kRsqrtHiQ16 - (r.m >> 3);
  const std::int64_t t = (y0 * y0) >> kFrac;
  const std::int64_t u = (r.m * t) >> kFrac;
  r.y = (y0 * ((std::int64_t{3} << kFrac) - u)) >> (kFrac + 1);
  return r;
}

std::int64_t sqrt_rsqrt(const ActParams& p, std::int64_t a) {
  if (a <= 0) return 0;
  const Rsqrt r = rsqrt(a);
  return sat_u(shift_round(r.m * r.y, 2 * kFrac - r.e - p.sqrt_frac()), p.sqrt_out_bits);
}

}  // namespace capsgen::fx::pim

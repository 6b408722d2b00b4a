#include "numerics/activation.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "numerics/fixed.hpp"
#include "numerics/pim_approx.hpp"

namespace capsgen::fx {

// sqrt(a) < 2^ceil(in/2): scaling by 2^(out - ceil(in/2)) uses the output range fully.
int ActParams::sqrt_frac() const { return sqrt_out_bits - (sqrt_in_bits + 1) / 2; }

int ActParams::norm_frac(int in_frac, int norm_shift) const {
  // norm = sqrt(sumsq) / 2^in_frac, sumsq ~ addr * 2^shift, code ~ sqrt(addr) * 2^sqrt_frac.
  return in_frac + sqrt_frac() - norm_shift / 2;
}

// exp(0) = 1 maps to 2^out (saturating to 2^out - 1): inputs are <= 0 after max subtraction.
int ActParams::exp_frac() const { return exp_out_bits; }

int ActParams::exp_addr_frac() const { return sm_in_frac - (act_bits - exp_in_bits); }

std::int64_t sign_extend(std::uint64_t pattern, int bits) {
  const std::uint64_t mask = (std::uint64_t{1} << bits) - 1;
  pattern &= mask;
  if ((pattern >> (bits - 1)) & 1u) return static_cast<std::int64_t>(pattern | ~mask);
  return static_cast<std::int64_t>(pattern);
}

std::uint32_t to_pattern(std::int64_t value, int bits) {
  return static_cast<std::uint32_t>(static_cast<std::uint64_t>(value) & ((std::uint64_t{1} << bits) - 1));
}

std::vector<std::uint32_t> build_sqrt_lut(const ActParams& p) {
  std::vector<std::uint32_t> lut(std::size_t{1} << p.sqrt_in_bits);
  const int sf = p.sqrt_frac();
  for (std::size_t a = 0; a < lut.size(); ++a) {
    const double v = std::ldexp(std::sqrt(static_cast<double>(a)), sf);
    lut[a] = static_cast<std::uint32_t>(sat_u(std::llround(v), p.sqrt_out_bits));
  }
  return lut;
}

std::vector<std::uint32_t> build_squash_lut(const ActParams& p) {
  const int elem_frac = p.sq_in_frac - (p.act_bits - p.sq_elem_bits);
  const int nf = p.norm_frac(p.sq_in_frac, p.sq_norm_shift) - (p.sqrt_out_bits - p.sq_norm_bits);
  if (p.sq_gain) {
    std::vector<std::uint32_t> lut(std::size_t{1} << p.sq_norm_bits);
    for (std::uint32_t m = 0; m < lut.size(); ++m) {
      const double n = std::ldexp(static_cast<double>(m), -nf);
      const double g = n / (1.0 + n * n);
      lut[m] = static_cast<std::uint32_t>(sat_u(std::llround(std::ldexp(g, p.squash_gain_frac())), p.sq_gain_bits));
    }
    return lut;
  }
  std::vector<std::uint32_t> lut(std::size_t{1} << (p.sq_elem_bits + p.sq_norm_bits));
  for (std::uint32_t e = 0; e < (1u << p.sq_elem_bits); ++e) {
    const double x = std::ldexp(static_cast<double>(sign_extend(e, p.sq_elem_bits)), -elem_frac);
    for (std::uint32_t m = 0; m < (1u << p.sq_norm_bits); ++m) {
      const double n = std::ldexp(static_cast<double>(m), -nf);
      const double f = x * n / (1.0 + n * n);
      const std::int64_t code = sat_s(std::llround(std::ldexp(f, p.squash_out_frac())), p.sq_out_bits);
      lut[(e << p.sq_norm_bits) | m] = to_pattern(code, p.sq_out_bits);
    }
  }
  return lut;
}

std::vector<std::uint32_t> build_exp_lut(const ActParams& p) {
  std::vector<std::uint32_t> lut(std::size_t{1} << p.exp_in_bits);
  for (std::uint32_t a = 0; a < lut.size(); ++a) {
    const double x = -std::ldexp(static_cast<double>(a), -p.exp_addr_frac());
    lut[a] = static_cast<std::uint32_t>(sat_u(std::llround(std::ldexp(std::exp(x), p.exp_frac())), p.exp_out_bits));
  }
  return lut;
}

NormResult norm(const ActParams& p, const std::vector<std::uint32_t>& sqrt_lut, const std::int64_t* x, int n,
                int shift) {
  if (shift < 0 || shift % 2 != 0) throw std::invalid_argument("fx::norm: shift must be even and >= 0");
  NormResult r;
  for (int i = 0; i < n; ++i) r.sumsq += x[i] * x[i];
  r.addr = sat_u(round_shift(r.sumsq, shift), p.sqrt_in_bits);
  r.norm = sqrt_unit(p, sqrt_lut, r.addr);
  return r;
}

void squash(const ActParams& p, const std::vector<std::uint32_t>& sqrt_lut, const std::vector<std::uint32_t>& squash_lut,
            const std::int64_t* x, int n, std::int64_t* out) {
  const NormResult nr = norm(p, sqrt_lut, x, n, p.sq_norm_shift);
  const std::int64_t m = sat_u(round_shift(nr.norm, p.sqrt_out_bits - p.sq_norm_bits), p.sq_norm_bits);
  if (p.sq_gain) {
    const std::int64_t g = static_cast<std::int64_t>(squash_lut.at(static_cast<std::size_t>(m)));
    for (int i = 0; i < n; ++i) out[i] = sat_s(round_shift(x[i] * g, p.squash_gain_shift()), p.sq_out_bits);
    return;
  }
  for (int i = 0; i < n; ++i) {
    const std::int64_t e = sat_s(round_shift(x[i], p.act_bits - p.sq_elem_bits), p.sq_elem_bits);
    const std::uint32_t addr = (to_pattern(e, p.sq_elem_bits) << p.sq_norm_bits) | static_cast<std::uint32_t>(m);
    out[i] = sign_extend(squash_lut.at(addr), p.sq_out_bits);
  }
}

std::int64_t exp_unit(const ActParams& p, const std::vector<std::uint32_t>& exp_lut, std::int64_t addr) {
  if (p.exp_pim) return pim::exp_shift(p, addr, p.exp_recovery_q);
  return exp_lut.at(static_cast<std::size_t>(addr));
}

std::int64_t sqrt_unit(const ActParams& p, const std::vector<std::uint32_t>& sqrt_lut, std::int64_t addr) {
  if (p.sqrt_pim) return pim::sqrt_rsqrt(p, addr);
  return sqrt_lut.at(static_cast<std::size_t>(addr));
}

std::int64_t softmax_divide(std::int64_t num, std::int64_t den, int frac, std::int64_t sat_max) {
  if (den <= 0) return 0;
  const std::int64_t q = ((num << frac) + den / 2) / den;
  return q > sat_max ? sat_max : q;
}

void softmax(const ActParams& p, const std::vector<std::uint32_t>& exp_lut, const std::int64_t* x, int n,
             std::int64_t* out) {
  std::int64_t mx = x[0];
  for (int i = 1; i < n; ++i) mx = std::max(mx, x[i]);
  std::int64_t sum = 0;
  std::vector<std::int64_t> e(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    // max - x is a non-negative difference of two act-bit codes (< 2^act); the LUT sees its top exp_in_bits.
    const std::int64_t a = sat_u(round_shift(mx - x[i], p.act_bits - p.exp_in_bits), p.exp_in_bits);
    e[static_cast<std::size_t>(i)] = exp_unit(p, exp_lut, a);
    sum += e[static_cast<std::size_t>(i)];
  }
  for (int i = 0; i < n; ++i)
    out[i] = p.divide_pim ? pim::divide_recip(e[static_cast<std::size_t>(i)], sum, p.coupling_frac(), smax(p.act_bits))
                          : softmax_divide(e[static_cast<std::size_t>(i)], sum, p.coupling_frac(), smax(p.act_bits));
}

}  // namespace capsgen::fx

// PIM-CapsNet's LUT-free units (numerics/pim_approx.hpp) as drop-ins for the activation unit's exp
// ROM and sqrt ROM: the same ports (clk_i, addr_i, data_o) and the same timing (data_o holds the
// value for the address of the previous cycle). The arithmetic before the output register is
// combinational; every width and constant comes from the preset and numerics/pim_approx.hpp.
#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "emit/activation.hpp"
#include "config/act_params.hpp"
#include "numerics/activation.hpp"
#include "numerics/pim_approx.hpp"

namespace capsgen::emit {
namespace {

namespace pim = fx::pim;

int bits_for(std::uint64_t v) {  // bits of an unsigned value (at least 1)
  int n = 1;
  while (n < 64 && (v >> n) != 0) ++n;
  return n;
}

// sat_u of an unsigned expression to `to` bits (zero extension when it is not wider).
Expr sat_u_expr(const Expr& v, int to) {
  if (v.width() <= to) return zext(v, to);
  return ternary(reduce_or(v.slice(v.width() - 1, to)), lit(to, (std::uint64_t{1} << to) - 1), v.slice(to - 1, 0));
}

}  // namespace

Module build_act_pim_exp(const AccelConfig& cfg) {
  const fx::ActParams p = act_params(cfg);
  const int EI = p.exp_in_bits, EO = p.exp_out_bits;
  const std::int64_t R = p.exp_recovery_q;
  const int s0 = p.exp_addr_frac() + 15 - pim::kFrac;  // alignment of a * log2(e) to Q16
  Module m(kActPimExpModule,
           fmt::format("Shift-based exp (PIM-CapsNet Eq. 13-14), fx::pim::exp_shift{}: drop-in for the exp ROM\n"
                       "(address {} bits = max - x with {} fraction bits, code {} bits), read synchronously: data_o\n"
                       "holds the value for the address of the previous cycle. P = round(a * log2(e) * 2^16) - Avg\n"
                       "(= -t); the power of two k = -ceil(P / 2^16) becomes a right shift of the 17-bit mantissa\n"
                       "1.f, f = (-P) mod 2^16.{}",
                       R != 0 ? " with accuracy recovery" : "", EI, p.exp_addr_frac(), EO,
                       R != 0 ? fmt::format(" Recovery: round(out * {} / 2^{}), saturated.", R, EO) : ""));
  const Expr clk = m.input("clk_i", 1, "clock");
  const Expr addr = m.input("addr_i", EI, "exp ROM address a (max - x)");
  const Expr data_o = m.output("data_o", EO, "exp code for the address of the previous cycle");
  (void)clk;
  m.lint_off("UNUSEDSIGNAL", "the floor shifts of the definition drop the low bits of products and rounded sums");
  // y = round(a * L / 2^s0): the magnitude of -d*log2(e) in Q16.
  const int pw = EI + 16;
  const Expr prod = m.wire("lg_prod", pw, "a * round(log2(e) * 2^15)");
  m.assign(prod, full_product(addr, lit(16, static_cast<std::uint64_t>(pim::kLog2eQ15))));
  Expr y = prod;
  int yw = pw;
  if (s0 > 0) {
    const Expr yr = m.wire("lg_rnd", pw + 1, "a * L + 2^(s0-1): round half up");
    m.assign(yr, zext(prod, pw + 1) + lit(pw + 1, std::uint64_t{1} << (s0 - 1)));
    yw = pw + 1 - s0;
    y = m.wire("lg_y", yw, fmt::format("d * log2(e) in Q16 (rounded shift by {})", s0));
    m.assign(y, yr.slice(pw, s0));
  } else if (s0 < 0) {
    yw = pw - s0;
    y = m.wire("lg_y", yw, fmt::format("d * log2(e) in Q16 (left shift by {})", -s0));
    m.assign(y, cat({prod, zero(-s0)}));
  }
  // P - 1 = y - Avg - 1 (Avg < 0): k = -ceil(P/2^16) = -(floor((P-1)/2^16) + 1), f = ~(P-1) mod 2^16.
  const std::uint64_t avg1 = static_cast<std::uint64_t>(-pim::kAvgQ16 - 1);
  const std::uint64_t pmax = ((std::uint64_t{1} << yw) - 1) + avg1;
  const int qw = std::max(bits_for(pmax), 17);
  const Expr pm1 = m.wire("sh_pm1", qw, "P - 1 = y - Avg - 1");
  m.assign(pm1, zext(y, qw) + lit(qw, avg1));
  const Expr mant = m.wire("sh_mant", 17, "mantissa 1.f, f = 2^16 - (P mod 2^16) (mod 2^16)");
  m.assign(mant, cat({bit(true), ~pm1.slice(15, 0)}));
  const Expr amt = m.wire("sh_amt", qw - 16, "-k - 1: right shift of the mantissa");
  m.assign(amt, pm1.slice(qw - 1, 16));
  // Logarithmic right shift of the 17-bit mantissa by amt (>= 17 clears it).
  Expr v = mant;
  const int stages = std::min(qw - 16, 5);
  for (int i = 0; i < stages; ++i) {
    const int sh = 1 << i;
    const Expr next = m.wire(fmt::format("sh_s{}", i), 17, fmt::format("after the shift by amt[{}] * {}", i, sh));
    const Expr shifted = sh >= 17 ? lit(17, 0) : cat({zero(sh), v.slice(16, sh)});
    m.assign(next, ternary(amt[i], shifted, v));
    v = next;
  }
  const Expr big = qw - 16 > 6 ? reduce_or(amt.slice(qw - 17, 5)) : qw - 16 == 6 ? amt[5] : bit(false);
  const Expr raw = m.wire("ex_raw", EO, fmt::format("exp_shift without recovery: (2^16 + f) >> (16 - k - {})", EO));
  m.assign(raw, ternary(big, lit(EO, 0), v.slice(16, 17 - EO)));
  Expr out = raw;
  if (R != 0) {
    const int rw = bits_for(static_cast<std::uint64_t>(R));
    const Expr rp = m.wire("rc_prod", EO + rw, fmt::format("raw * R, R = {} (Q1.{})", R, EO));
    m.assign(rp, full_product(raw, lit(rw, static_cast<std::uint64_t>(R))));
    const Expr rr = m.wire("rc_rnd", EO + rw + 1, "raw * R + 2^(E-1): round half up");
    m.assign(rr, zext(rp, EO + rw + 1) + lit(EO + rw + 1, std::uint64_t{1} << (EO - 1)));
    const Expr rs = m.wire("rc_shift", rw + 1, "round(raw * R / 2^E)");
    m.assign(rs, rr.slice(EO + rw, EO));
    out = m.wire("ex_rec", EO, "recovered, saturated");
    m.assign(out, sat_u_expr(rs, EO));
  }
  m.lint_on("UNUSEDSIGNAL");
  const Expr q = m.reg("data_q", EO, "registered output");
  m.always_ff({nb(q, out)});
  m.assign(data_o, q);
  return m;
}

Module build_act_pim_rsqrt(const AccelConfig& cfg) {
  const fx::ActParams p = act_params(cfg);
  const int SI = p.sqrt_in_bits, SO = p.sqrt_out_bits, sf = p.sqrt_frac();
  const int emax = (SI - 1) / 2;
  Module m(kActPimRsqrtModule,
           fmt::format("Square root through the inverse square root (PIM-CapsNet), fx::pim::sqrt_rsqrt: drop-in\n"
                       "for the sqrt ROM (address {} bits, norm code {} bits = round(sqrt(a) * 2^{})), read\n"
                       "synchronously: data_o holds the value for the address of the previous cycle.\n"
                       "e = floor(floor(log2 a) / 2) from the highest nonzero bit pair; M = a * 2^16 / 4^e in\n"
                       "[2^16, 2^18); y0 = {} - M/4 (M < 2^17) or {} - M/8; one Newton step t = y0^2 >> 16,\n"
                       "u = M t >> 16, y = y0 (3*2^16 - u) >> 17; out = sat(round(M y / 2^(32 - e - {}))); 0 for a = 0.",
                       SI, SO, sf, pim::kRsqrtLoQ16, pim::kRsqrtHiQ16, sf));
  const Expr clk = m.input("clk_i", 1, "clock");
  const Expr addr = m.input("addr_i", SI, "sqrt ROM address a");
  const Expr data_o = m.output("data_o", SO, "norm code for the address of the previous cycle");
  (void)clk;
  m.lint_off("UNUSEDSIGNAL", "the floor shifts of the definition drop the low bits of products and rounded sums, and rs_x pads a with two zero bits for the slice of the largest e");
  const int xw = SI + 18;
  const Expr x = m.wire("rs_x", xw, "a * 2^16, two zero bits on top");
  m.assign(x, cat({zero(2), addr, zero(16)}));
  // nz[e]: a >= 4^e (bits 2e and up not all zero), e >= 1.
  std::vector<Expr> nz(static_cast<std::size_t>(emax + 1), bit(true));
  for (int e = 1; e <= emax; ++e) {
    nz[e] = m.wire(fmt::format("rs_nz{}", e), 1, fmt::format("a >= 4^{}", e));
    m.assign(nz[e], reduce_or(addr.slice(SI - 1, 2 * e)));
  }
  // M = (a * 2^16) >> 2e for the largest e with a >= 4^e: a priority mux of fixed slices.
  Expr msel = x.slice(17, 0);
  for (int e = 1; e <= emax; ++e) msel = ternary(nz[e], x.slice(2 * e + 17, 2 * e), msel);
  const Expr M = m.wire("rs_m", 18, "normalized M in Q16, [2^16, 2^18) (0 for a = 0)");
  m.assign(M, msel);
  const Expr y0 = m.wire("rs_y0", 17, "linear seed of 1/sqrt(M) in Q16");
  m.assign(y0, ternary(M[17], lit(17, static_cast<std::uint64_t>(pim::kRsqrtHiQ16)) - zext(M.slice(17, 3), 17),
                       lit(17, static_cast<std::uint64_t>(pim::kRsqrtLoQ16)) - zext(M.slice(17, 2), 17)));
  const Expr y0sq = m.wire("rs_y0sq", 34, "y0^2");
  m.assign(y0sq, full_product(y0, y0));
  const Expr t = m.wire("rs_t", 18, "t = y0^2 >> 16");
  m.assign(t, y0sq.slice(33, 16));
  const Expr mt = m.wire("rs_mt", 36, "M * t");
  m.assign(mt, full_product(M, t));
  const Expr u = m.wire("rs_u", 20, "u = M t >> 16");
  m.assign(u, mt.slice(35, 16));
  const Expr w = m.wire("rs_w", 20, "3*2^16 - u (u < 3*2^16 for every M)");
  m.assign(w, lit(20, std::uint64_t{3} << 16) - u);
  const Expr yw = m.wire("rs_yw", 37, "y0 * (3*2^16 - u)");
  m.assign(yw, full_product(y0, w));
  const Expr y = m.wire("rs_y", 20, "y = y0 (3*2^16 - u) >> 17: 1/sqrt(M) in Q16");
  m.assign(y, yw.slice(36, 17));
  const Expr v = m.wire("rs_v", 38, "M * y");
  m.assign(v, full_product(M, y));
  // round(v / 2^s), s = 32 - e - sf >= 1: floor((floor(v / 2^(s-1)) + 1) / 2); floor(v / 2^(s-1)) is a
  // fixed slice per e, chosen by the same priority as M.
  const int lo_min = 31 - sf - emax;  // s - 1 for the largest e
  if (lo_min < 0) throw std::logic_error("build_act_pim_rsqrt: sqrt_frac too large");
  const int hw = 38 - lo_min;
  auto half = [&](int e) { return zext(v.slice(37, 31 - sf - e), hw); };
  Expr hsel = half(0);
  for (int e = 1; e <= emax; ++e) hsel = ternary(nz[e], half(e), hsel);
  const Expr h = m.wire("rs_h", hw, "floor(M y / 2^(31 - e - sf))");
  m.assign(h, hsel);
  const Expr hr = m.wire("rs_hr", hw + 1, "h + 1");
  m.assign(hr, zext(h, hw + 1) + lit(hw + 1, 1));
  const Expr r = m.wire("rs_round", hw, "round(M y / 2^(32 - e - sf)), half up");
  m.assign(r, hr.slice(hw, 1));
  m.lint_on("UNUSEDSIGNAL");
  const Expr q = m.reg("data_q", SO, "registered output");
  m.always_ff({nb(q, sat_u_expr(r, SO))});
  m.assign(data_o, q);
  return m;
}

}  // namespace capsgen::emit

// PIM-CapsNet's LUT-free units (numerics/pim_approx.hpp) as drop-ins for the activation unit's exp
// ROM and sqrt ROM: the same ports (clk_i, addr_i, data_o) and the same timing (data_o holds the
// value for the address of the previous cycle), the arithmetic before the output register
// combinational; and for its softmax divider: the same ports and latency, pipelined. Every width
// and constant comes from the preset and numerics/pim_approx.hpp.
#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "emit/activation.hpp"
#include "emit/activation_internal.hpp"
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
    m.assign(next, ternary(amt.width() == 1 ? amt : amt[i], shifted, v));  // a 1-bit wire has no bit select
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
  // With a negative sqrt_frac (a wide address into a narrow code) s - 1 may exceed v's 38 bits: then
  // that floor is 0.
  const int lo_min = 31 - sf - emax;  // s - 1 for the largest e
  if (lo_min < 0) throw std::logic_error("build_act_pim_rsqrt: sqrt_frac too large");
  const int hw = std::max(1, 38 - lo_min);
  auto half = [&](int e) { return 31 - sf - e > 37 ? lit(hw, 0) : zext(v.slice(37, 31 - sf - e), hw); };
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

namespace {

// The widths of the reciprocal divide: the divider's ports (an exp value, the vector's sum, the
// coupling coefficient) and the values inside.
struct RecipWidths {
  int num = 0;       // num_i: an exp value
  int den = 0;       // den_i: their sum
  int frac = 0;      // coupling coefficients are Q0.frac (frac = act - 1)
  int quot = 0;      // quot_o, as the divider's: frac + 1 bits
  int log2 = 0;      // bits of n = floor(log2 den), 0 .. den - 1
  int product = 0;   // num * r, r <= 2^16 (17 bits)
  int stages = 0;    // pipeline registers: the divider's latency (act)
};

RecipWidths recip_widths(const AccelConfig& cfg) {
  const ActGeometry g = act_geometry(cfg);
  const detail::DivideFormat f = detail::divide_format(cfg);
  RecipWidths w;
  w.num = f.num;
  w.den = f.den;
  w.frac = f.frac;
  w.quot = f.quot;
  w.log2 = std::max(1, clog2(w.den));
  w.product = w.num + 17;
  w.stages = g.div_stages;
  // The rounding shift 16 + n - frac is then >= 1 for every n (act <= 16 by validation).
  if (w.frac > 15 || w.stages < 2) throw std::logic_error("build_act_pim_recip: widths outside the validated ranges");
  return w;
}

// The pipeline of the reciprocal divide: values cross a step boundary through a register (a stage)
// or, where the divider's latency leaves fewer stages than steps, as they are. Valid flags have a
// reset, data registers none (only stages marked valid are used).
class RecipPipeline {
 public:
  explicit RecipPipeline(Module& m) : m_(m) {}
  // `v` after the boundary: a register named s<stage>_<what>_q when `registered`, else `v` itself.
  Expr carry(const Expr& v, int stage, const std::string& what, bool registered, const std::string& comment = "") {
    if (!registered) return v;
    const Expr q = m_.reg(fmt::format("s{}_{}_q", stage, what), v.width(), comment);
    data_.push_back(nb(q, v));
    return q;
  }
  Expr carry_valid(const Expr& v, int stage, bool registered) {
    if (!registered) return v;
    const Expr q = m_.reg(fmt::format("s{}_valid_q", stage), 1);
    valid_reset_.push_back(nb(q, bit(false)));
    valid_.push_back(nb(q, v));
    valids_.push_back(q);
    return q;
  }
  void build() {
    m_.blank();
    m_.comment("Pipeline registers (data without reset: only stages marked valid are used).");
    m_.always_ff(data_);
    m_.always_ff_next(valid_reset_, valid_);
  }
  // Any stage holds a division.
  Expr busy() const {
    Expr any = valids_.front();
    for (std::size_t i = 1; i < valids_.size(); ++i) any = any | valids_[i];
    return any;
  }

 private:
  Module& m_;
  Stmts data_, valid_reset_, valid_;
  std::vector<Expr> valids_;
};

// What travels beside the arithmetic from stage to stage.
struct RecipTags {
  Expr valid, last, zero, num, n;
};

RecipTags carry_tags(RecipPipeline& pipe, const RecipTags& t, int stage, bool registered) {
  return {pipe.carry_valid(t.valid, stage, registered), pipe.carry(t.last, stage, "last", registered),
          pipe.carry(t.zero, stage, "zero", registered, "den == 0"), pipe.carry(t.num, stage, "num", registered),
          pipe.carry(t.n, stage, "n", registered, "floor(log2 den)")};
}

// Step 1: n = floor(log2 den) (a priority encoder: the leading-zero count) and M = den normalized to
// [2^16, 2^17): (den * 2^16) >> n, a truncating right shift for n > 16.
std::pair<Expr, Expr> recip_normalize(Module& m, const RecipWidths& w, const Expr& den) {
  std::vector<std::pair<Expr, Expr>> cases;
  for (int k = w.den - 1; k >= 1; --k) cases.emplace_back(den[k], lit(w.log2, static_cast<std::uint64_t>(k)));
  const Expr n = m.wire("rp_n", w.log2, "floor(log2 den): the highest set bit (0 for den <= 1)");
  m.assign(n, ternary_chain(cases, lit(w.log2, 0)));
  const Expr x = m.wire("rp_x", w.den + 16, "(den * 2^16) >> n");
  m.assign(x, shr(cat({den, zero(16)}), n));
  const Expr mant = m.wire("rp_m", 17, "M = den / 2^n in Q16, [2^16, 2^17) (0 for den = 0)");
  m.assign(mant, x.slice(16, 0));
  return {n, mant};
}

// Step 2: the seed r0 = c - M/2 and the Newton step's factor e = (2^33 - M r0) >> 16 (0 < M r0 < 2^33).
std::pair<Expr, Expr> recip_seed(Module& m, const Expr& mant) {
  const Expr r0 = m.wire("rp_r0", 17, fmt::format("r0 = {} - M/2: the linear seed of 1/M in Q16", pim::kRecip0Q16));
  m.assign(r0, lit(17, static_cast<std::uint64_t>(pim::kRecip0Q16)) - zext(mant.slice(16, 1), 17));
  const Expr mr = m.wire("rp_mr0", 34, "M * r0");
  m.assign(mr, full_product(mant, r0));
  const Expr two = m.wire("rp_2mr", 34, "2^33 - M r0 (2 - M r0 in Q32)");
  m.assign(two, lit(34, std::uint64_t{1} << 33) - mr);
  const Expr e = m.wire("rp_e", 17, "e = (2^33 - M r0) >> 16");
  m.assign(e, two.slice(32, 16));
  return {r0, e};
}

// Step 3: r = (r0 e) >> 16, 1/M in Q16 (<= 2^16).
Expr recip_newton(Module& m, const Expr& r0, const Expr& e) {
  const Expr re = m.wire("rp_r0e", 34, "r0 * e");
  m.assign(re, full_product(r0, e));
  const Expr r = m.wire("rp_r", 17, "r = r0 e >> 16: 1/M in Q16");
  m.assign(r, re.slice(32, 16));
  return r;
}

// Step 4: the coefficient round(num r / 2^(16 + n - frac)), saturated to 2^frac - 1; 0 for den = 0.
// The rounding shift s >= 1 is floor((floor(q / 2^(s-1)) + 1) / 2), the floor a right shift by n
// and a fixed slice.
Expr recip_quotient(Module& m, const RecipWidths& w, const Expr& num, const Expr& r, const Expr& n, const Expr& zero_den) {
  const Expr q = m.wire("rp_q", w.product, "num * r");
  m.assign(q, full_product(num, r));
  const Expr qn = m.wire("rp_qn", w.product, "(num * r) >> n");
  m.assign(qn, shr(q, n));
  const int lo = 15 - w.frac;  // s - 1 - n
  const int hw = w.product - lo;
  const Expr h = m.wire("rp_h", hw, fmt::format("floor(num r / 2^(n + {})): s - 1 = 16 + n - {} - 1", lo, w.frac));
  m.assign(h, qn.slice(w.product - 1, lo));
  const Expr hr = m.wire("rp_hr", hw + 1, "h + 1");
  m.assign(hr, zext(h, hw + 1) + lit(hw + 1, 1));
  const Expr rounded = m.wire("rp_round", hw, "round(num r / 2^(16 + n - frac)), half up");
  m.assign(rounded, hr.slice(hw, 1));
  const Expr quot = m.wire("rp_quot", w.quot, fmt::format("saturated to {}; 0 for den = 0", (1 << w.frac) - 1));
  m.assign(quot, ternary(zero_den, lit(w.quot, 0),
                         ternary(reduce_or(rounded.slice(hw - 1, w.frac)), lit(w.quot, (std::uint64_t{1} << w.frac) - 1),
                                 zext(rounded.slice(w.frac - 1, 0), w.quot))));
  return quot;
}

}  // namespace

Module build_act_pim_recip(const AccelConfig& cfg) {
  const RecipWidths w = recip_widths(cfg);
  // Registers after steps 1, 2, 3 and 4 (4 always): fewer than four stages merge step 1 into step 2,
  // then step 3 into step 4. Stages beyond four delay the result.
  const bool after[5] = {false, w.stages >= 4, true, w.stages >= 3, true};
  const int delays = w.stages - (int(after[1]) + int(after[3]) + 2);
  Module m(kActPimRecipModule,
           fmt::format("Softmax divide through the reciprocal (PIM-CapsNet), fx::pim::divide_recip: drop-in for the\n"
                       "divider (same ports, a division per cycle, out_* in cycle t + {0} for in_* in cycle t).\n"
                       "n = floor(log2 den) (leading-zero count), M = (den * 2^16) >> n in [2^16, 2^17);\n"
                       "r0 = {1} - M/2, one Newton step e = (2^33 - M r0) >> 16, r = r0 e >> 16 (1/den ~ r / 2^(16+n));\n"
                       "quot = min({2}, round(num r / 2^(16 + n - {3}))); den == 0 -> 0. {0} stages.",
                       w.stages, pim::kRecip0Q16, (1 << w.frac) - 1, w.frac));
  const auto [in_valid, in_last, num, den, out_valid, out_last, quot_o, busy] =
      detail::declare_divider_ports(m, detail::divide_format(cfg));
  m.lint_off("UNUSEDSIGNAL", "the floor shifts of the definition drop the low bits of products; rp_x's and the\n"
                             "products' top bits are zero for den > 0");
  RecipPipeline pipe(m);
  const Expr zero_den = m.wire("rp_zero", 1, "den == 0");
  m.assign(zero_den, den == lit(w.den, 0));
  auto [n, mant] = recip_normalize(m, w, den);
  RecipTags t = carry_tags(pipe, {in_valid, in_last, zero_den, num, n}, 1, after[1]);
  mant = pipe.carry(mant, 1, "m", after[1]);
  auto [r0, e] = recip_seed(m, mant);
  t = carry_tags(pipe, t, 2, after[2]);
  r0 = pipe.carry(r0, 2, "r0", after[2]);
  e = pipe.carry(e, 2, "e", after[2]);
  const Expr r_full = recip_newton(m, r0, e);
  t = carry_tags(pipe, t, 3, after[3]);
  const Expr r = pipe.carry(r_full, 3, "r", after[3]);
  const Expr quot_full = recip_quotient(m, w, t.num, r, t.n, t.zero);
  Expr valid = pipe.carry_valid(t.valid, 4, true);
  Expr last = pipe.carry(t.last, 4, "last", true);
  Expr quot = pipe.carry(quot_full, 4, "quot", true);
  for (int d = 0; d < delays; ++d) {
    valid = pipe.carry_valid(valid, 5 + d, true);
    last = pipe.carry(last, 5 + d, "last", true);
    quot = pipe.carry(quot, 5 + d, "quot", true, "delay to the divider's latency");
  }
  m.lint_on("UNUSEDSIGNAL");
  pipe.build();
  m.blank();
  m.assign(out_valid, valid);
  m.assign(out_last, last);
  m.assign(quot_o, quot);
  m.assign(busy, pipe.busy());
  return m;
}

}  // namespace capsgen::emit

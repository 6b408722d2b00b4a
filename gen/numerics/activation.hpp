// Bit-exact emulators of the activation unit's operators (ReLU, Norm, Squash, Softmax) and the
// builders of their LUT ROMs. The golden model computes with these; the RTL emitter writes its
// ROM contents from the same builders but implements the surrounding arithmetic on its own.
// docs/numerics.md gives the formulas, formats and error bounds.
#pragma once

#include <cstdint>
#include <vector>

namespace capsgen::fx {

// Widths and fixed formats of the activation unit, taken from one preset.
struct ActParams {
  int act_bits = 8;        // width of every activation value (signed)
  int sqrt_in_bits = 12;   // sqrt LUT address
  int sqrt_out_bits = 8;   // sqrt LUT output = norm code (unsigned)
  bool sq_gain = false;    // squash kind: false = 2-D table (CapsAcc), true = gain LUT x element
  int sq_elem_bits = 6;    // squash LUT element address (table kind)
  int sq_gain_bits = 8;    // gain LUT output width, unsigned Q0.(sq_gain_bits+1) (gain kind)
  int sq_norm_bits = 5;    // squash LUT norm address
  int sq_out_bits = 8;     // squash output, Q0.(sq_out_bits-1)
  int sq_in_frac = 5;      // fraction bits of the squash input s
  int sq_norm_shift = 2;   // rounding shift of the sum of squares before the sqrt LUT (even)
  int exp_in_bits = 8;     // exp LUT address
  int exp_out_bits = 8;    // exp LUT output (unsigned)
  int sm_in_frac = 5;      // fraction bits of the softmax input (routing logits b)
  // PIM-CapsNet approximations (numerics/pim_approx.hpp) in place of the LUT units / the divider:
  bool exp_pim = false;          // exp through pim::exp_shift instead of the exp LUT
  std::int64_t exp_recovery_q = 0;  // exp_pim: accuracy-recovery constant (Q1.exp_out_bits), 0 = none
  bool divide_pim = false;       // softmax divide through pim::divide_recip instead of the divider
  bool sqrt_pim = false;         // norm sqrt through pim::sqrt_rsqrt instead of the sqrt LUT

  // Derived formats (see docs/numerics.md).
  int sqrt_frac() const;        // fraction bits of the sqrt LUT output relative to sqrt(address)
  int norm_frac(int in_frac, int norm_shift) const;  // fraction bits of the norm code
  int squash_out_frac() const { return sq_out_bits - 1; }
  int squash_gain_frac() const { return sq_gain_bits + 1; }  // g <= 1/2: one more fraction bit than width
  // Gain kind: out = round(x * g >> squash_gain_shift()), x Q.sq_in_frac, g Q0.gain_frac, out Q0.out_frac.
  int squash_gain_shift() const { return sq_in_frac + squash_gain_frac() - squash_out_frac(); }
  int squash_addr_bits() const { return sq_gain ? sq_norm_bits : sq_elem_bits + sq_norm_bits; }
  int squash_data_bits() const { return sq_gain ? sq_gain_bits : sq_out_bits; }
  int exp_frac() const;         // fraction bits of the exp LUT output (== exp_out_bits)
  int exp_addr_frac() const;    // fraction bits of the exp LUT address (max - x, unsigned)
  int coupling_frac() const { return act_bits - 1; }  // softmax output c, Q0.(act_bits-1)
};

// ---- LUT builders (ROM contents, address -> value) ----

// sqrt LUT: out[a] = min(2^out_bits - 1, round(sqrt(a) * 2^sqrt_frac)), a in [0, 2^in_bits).
std::vector<std::uint32_t> build_sqrt_lut(const ActParams& p);

// Squash LUT (squash_addr_bits() -> squash_data_bits()).
// Table kind: address = (element_code << sq_norm_bits) | norm_code, element_code as a
// sq_elem_bits two's-complement pattern. Value: Q0.(out-1) code of x*n/(1+n^2), saturated, with
// x = element/2^elem_frac and n = norm/2^norm_frac as docs/numerics.md derives them from the
// preset. Stored as the out_bits two's-complement pattern.
// Gain kind: address = norm_code; value: the unsigned Q0.(gain_bits+1) code of g = n/(1+n^2),
// rounded and saturated to gain_bits.
std::vector<std::uint32_t> build_squash_lut(const ActParams& p);

// exp LUT for the max-subtracted softmax: address a (unsigned, exp_in_bits) stands for the
// non-negative difference d = max - x = a / 2^exp_addr_frac; out = min(2^out - 1, round(exp(-d) * 2^out)).
std::vector<std::uint32_t> build_exp_lut(const ActParams& p);

// ---- Operator emulators ----

// ReLU on an activation code.
inline std::int64_t relu(std::int64_t x) { return x < 0 ? 0 : x; }

// Norm unit: sumsq = sum x^2 (exact), addr = sat_u(round_shift(sumsq, shift), sqrt_in_bits),
// result = sqrt_unit(addr) (the sqrt LUT, or pim::sqrt_rsqrt). `shift` must be even.
struct NormResult {
  std::int64_t sumsq = 0;
  std::int64_t addr = 0;
  std::int64_t norm = 0;  // sqrt_out_bits unsigned code
};
NormResult norm(const ActParams& p, const std::vector<std::uint32_t>& sqrt_lut,
                const std::int64_t* x, int n, int shift);

// Squash unit on one capsule (n elements, format Q.sq_in_frac of act_bits):
// norm with sq_norm_shift, m = sat_u(round_shift(norm, sqrt_out_bits - norm_bits), norm_bits), then
// per element, table kind: out = squash_lut[(e << norm_bits) | m] with
// e = sat_s(round_shift(x, act_bits - elem_bits), elem_bits); gain kind:
// out = sat_s(round_shift(x * squash_lut[m], squash_gain_shift()), sq_out_bits).
// Output codes are Q0.(sq_out_bits-1).
void squash(const ActParams& p, const std::vector<std::uint32_t>& sqrt_lut,
            const std::vector<std::uint32_t>& squash_lut, const std::int64_t* x, int n, std::int64_t* out);

// The exp unit on one address (exp LUT, or pim::exp_shift when p.exp_pim).
std::int64_t exp_unit(const ActParams& p, const std::vector<std::uint32_t>& exp_lut, std::int64_t addr);

// The sqrt unit on one address (sqrt LUT, or pim::sqrt_rsqrt when p.sqrt_pim).
std::int64_t sqrt_unit(const ActParams& p, const std::vector<std::uint32_t>& sqrt_lut, std::int64_t addr);

// Softmax unit on n logits (format Q.sm_in_frac of act_bits), with max subtraction:
// m = max x, e_k = exp_lut[sat_u(round_shift(m - x_k, act - exp_in_bits), exp_in_bits)],
// sum = sum e_k (>= exp_lut[0] > 0), c_k = min(2^(act-1) - 1, floor((e_k * 2^(act-1) + floor(sum/2)) / sum)).
// exp_unit / pim::divide_recip replace the LUT / the divider when the preset selects them.
void softmax(const ActParams& p, const std::vector<std::uint32_t>& exp_lut, const std::int64_t* x, int n,
             std::int64_t* out);

// The divider of the softmax unit on its own: round-half-up quotient of num * 2^frac / den,
// saturated to `sat_max`; den == 0 gives 0.
std::int64_t softmax_divide(std::int64_t num, std::int64_t den, int frac, std::int64_t sat_max);

// Helpers to view LUT contents as signed values / to form addresses.
std::int64_t sign_extend(std::uint64_t pattern, int bits);
std::uint32_t to_pattern(std::int64_t value, int bits);

}  // namespace capsgen::fx

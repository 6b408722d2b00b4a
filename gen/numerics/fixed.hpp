// Fixed-point primitives: the one definition of rounding, saturation and accumulation order.
// docs/numerics.md explains every choice; the golden model and all RTL block tests use these.
#pragma once

#include <cstdint>
#include <stdexcept>

namespace capsgen::fx {

// Largest / smallest value of a signed two's-complement number of `bits` bits.
constexpr std::int64_t smax(int bits) { return (std::int64_t{1} << (bits - 1)) - 1; }
constexpr std::int64_t smin(int bits) { return -(std::int64_t{1} << (bits - 1)); }
// Largest value of an unsigned number of `bits` bits.
constexpr std::int64_t umax(int bits) { return (std::int64_t{1} << bits) - 1; }

// Clamp to the signed / unsigned range of `bits` bits.
constexpr std::int64_t sat_s(std::int64_t v, int bits) {
  return v > smax(bits) ? smax(bits) : (v < smin(bits) ? smin(bits) : v);
}
constexpr std::int64_t sat_u(std::int64_t v, int bits) {
  return v > umax(bits) ? umax(bits) : (v < 0 ? 0 : v);
}
constexpr bool fits_s(std::int64_t v, int bits) { return v >= smin(bits) && v <= smax(bits); }

// Two's-complement wrap to `bits` bits (what a plain `bits`-wide adder does).
constexpr std::int64_t wrap_s(std::int64_t v, int bits) {
  const std::uint64_t mask = (bits >= 64) ? ~std::uint64_t{0} : ((std::uint64_t{1} << bits) - 1);
  std::uint64_t u = static_cast<std::uint64_t>(v) & mask;
  if (bits < 64 && (u >> (bits - 1)) & 1u) u |= ~mask;
  return static_cast<std::int64_t>(u);
}

// Arithmetic right shift by `shift` >= 0 with round-half-up (ties toward +infinity):
//   floor((v + 2^(shift-1)) / 2^shift).
// In hardware: add the constant 2^(shift-1), then drop `shift` bits (arithmetic shift).
constexpr std::int64_t round_shift(std::int64_t v, int shift) {
  if (shift <= 0) return v;
  return (v + (std::int64_t{1} << (shift - 1))) >> shift;  // >> on int64 is arithmetic (C++20)
}

// The 25->8-bit reduction of CapsAcc: round-half-up right shift, then saturate to `out_bits`.
constexpr std::int64_t reduce(std::int64_t acc, int shift, int out_bits) {
  return sat_s(round_shift(acc, shift), out_bits);
}

// Saturating add of two `bits`-wide signed numbers (the accumulator adder).
constexpr std::int64_t sat_add(std::int64_t a, std::int64_t b, int bits) { return sat_s(a + b, bits); }

// The accumulation contract (docs/numerics.md, "Reduction order"): a dot product of length K is
// cut into chunks of `chunk` consecutive terms (chunk = array rows). Inside a chunk the sum is
// exact (the PE column adder chain; the config guarantees it fits psum bits). Chunk sums are added
// to the accumulator, which starts at the bias, in increasing chunk order with saturation to
// psum_bits after every chunk.
class ChunkedAccumulator {
 public:
  ChunkedAccumulator(int chunk, int psum_bits, std::int64_t init = 0)
      : chunk_(chunk), psum_bits_(psum_bits), acc_(sat_s(init, psum_bits)) {
    if (chunk <= 0) throw std::invalid_argument("ChunkedAccumulator: chunk must be > 0");
  }
  void add_term(std::int64_t product) {
    part_ += product;
    if (++in_chunk_ == chunk_) flush();
  }
  // Closes a partial chunk (end of the reduction) and returns the saturated accumulator.
  std::int64_t finish() {
    if (in_chunk_ > 0) flush();
    return acc_;
  }
  bool saturated() const { return saturated_; }

 private:
  void flush() {
    const std::int64_t sum = acc_ + part_;
    if (!fits_s(sum, psum_bits_)) saturated_ = true;
    acc_ = sat_s(sum, psum_bits_);
    part_ = 0;
    in_chunk_ = 0;
  }
  int chunk_;
  int psum_bits_;
  std::int64_t acc_;
  std::int64_t part_ = 0;
  int in_chunk_ = 0;
  bool saturated_ = false;
};

// Sum of n codes of different formats (code k has fracs[k] fraction bits), requantized to
// out_frac and `bits` with one rounding: the codes are aligned exactly to F = max(fracs, out_frac)
// by left shifts, summed, then reduced with round_shift(sum, F - out_frac) and saturated. With
// n = 1 it requantizes one code; with n = 2 it is the skip connection's capsule add (docs/numerics.md).
inline std::int64_t align_sum(const std::int64_t* codes, const int* fracs, int n, int out_frac, int bits) {
  int F = out_frac;
  for (int k = 0; k < n; ++k) F = fracs[k] > F ? fracs[k] : F;
  std::int64_t sum = 0;
  for (int k = 0; k < n; ++k) sum += codes[k] * (std::int64_t{1} << (F - fracs[k]));
  return sat_s(round_shift(sum, F - out_frac), bits);
}

// Round-to-nearest (ties to even) quantization of a real value to `frac` fraction bits,
// saturated to `bits`. Used only for importing float weights and inputs.
std::int64_t quantize(double value, int frac, int bits);
double dequantize(std::int64_t code, int frac);

}  // namespace capsgen::fx

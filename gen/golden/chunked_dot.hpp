// The accumulation contract of docs/numerics.md ("Accumulation order") as the golden model's scalar
// dot product, and the output reduction. The fast convolution kernel (conv_kernel.hpp) must agree
// with these bit for bit, counts included.
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/bits.hpp"
#include "golden/stats.hpp"
#include "numerics/fixed.hpp"

namespace capsgen {

// Dot product under the accumulation contract (fx::ChunkedAccumulator): chunks of `chunk` terms
// summed exactly, then added to the accumulator (which starts at `init`) with saturation.
// Written out here rather than calling ChunkedAccumulator per term, because it runs ~2e8 times per
// full CapsNet inference; tests check both agree. T is the code type, P the chunk-sum type: the
// int16/int32 instance lets the compiler vectorize the chunk sums (pmaddwd).
template <typename T, typename P>
inline std::int64_t dot_chunked(const T* a, const T* b, int n, int chunk, int psum_bits, std::int64_t init,
                                GoldenStats& st) {
  std::int64_t acc = fx::sat_s(init, psum_bits);
  for (int base = 0; base < n; base += chunk) {
    const int len = std::min(n - base, chunk);
    P part = 0;
    for (int k = 0; k < len; ++k) part += P(a[base + k]) * P(b[base + k]);
    const std::int64_t sum = acc + part;
    if (!fx::fits_s(sum, psum_bits)) ++st.psum_saturations;
    acc = fx::sat_s(sum, psum_bits);
  }
  st.macs += n;
  return acc;
}

inline std::int64_t dot_chunked(const std::int32_t* a, const std::int32_t* b, int n, int chunk, int psum_bits,
                                std::int64_t init, GoldenStats& st) {
  return dot_chunked<std::int32_t, std::int64_t>(a, b, n, chunk, psum_bits, init, st);
}

// Codes fit int16 and a chunk sum fits 31 bits: |a*b| <= 2^(d+w-2), a chunk of `rows` terms adds
// ceil(log2(rows)) bits. Then int16 products summed in int32 are exact.
inline bool fits_fast_path(int data_bits, int weight_bits, int rows) {
  const int prod_bits = data_bits + weight_bits - 1;
  const int chunk_bits = clog2(rows);
  return data_bits <= 16 && weight_bits <= 16 && prod_bits + chunk_bits <= 31;
}

// Round-half-up shift and saturation of an accumulator to an output code, counting clips.
inline std::int32_t reduce_out(std::int64_t acc, int shift, int bits, GoldenStats& st) {
  const std::int64_t r = fx::round_shift(acc, shift);
  if (!fx::fits_s(r, bits)) ++st.output_saturations;
  return std::int32_t(fx::sat_s(r, bits));
}

}  // namespace capsgen

// Convolution under the accumulation contract (chunked_dot.hpp), in two implementations that agree
// bit for bit, counts included (docs/numerics.md, "Fast convolution kernel"):
//  - Scalar: one dot_chunked() per output, the reference; any code width.
//  - Fast: weights packed as [channel block][chunk][term pair][8 channels][2] int16, so that the
//    8 int32 lanes of a vector run over output channels; each lane sums a chunk exactly in int32
//    (madd of int16 pairs), then adds it to its accumulator with saturation and counts the
//    saturating additions. Only when fits_fast_path(); AVX2 when the CPU has it (run-time check),
//    otherwise the same blocked loops in plain C++.
// Output positions are split over `threads` workers; results do not depend on the split.
#pragma once

#include <cstdint>
#include <vector>

#include "core/tensor.hpp"
#include "golden/stats.hpp"

namespace capsgen {

struct ConvShape {
  int in_channels = 0, in_height = 0, in_width = 0;
  int kernel_h = 1, kernel_w = 1, stride = 1, padding = 0;
  int out_channels = 0, out_height = 0, out_width = 0;
  int reduction() const { return in_channels * kernel_h * kernel_w; }  // terms per output
  int positions() const { return out_height * out_width; }
};

// The accumulation contract's parameters and the output reduction of one layer.
struct ChunkContract {
  int rows = 16;       // terms per chunk (array rows)
  int psum_bits = 25;  // saturating accumulator width
  int out_bits = 8;    // output code width after reduce_out
  int shift = 0;       // reduce_out right shift
  int data_bits = 8;   // input code width
  int weight_bits = 8; // weight code width
};

enum class ConvPath {
  Auto,     // Fast with the best instruction set the CPU has, Scalar outside the fast path
  Scalar,   // the reference: dot_chunked() per output
  Generic,  // the fast kernel's blocked loops in plain C++
  Avx2,     // the fast kernel with AVX2 intrinsics (throws when the CPU lacks AVX2)
};

bool cpu_has_avx2();

// Weights (and bias) of one convolution in the fast kernel's layout; packed once, used by many runs.
struct PackedConvWeights {
  int out_channels = 0, reduction = 0, rows = 0;
  int chunks = 0, pairs_per_chunk = 0, channel_blocks = 0;  // channel_blocks: even, 8 channels each
  std::vector<std::int16_t> codes;  // [channel_block][chunk][pair][8][2], zero-padded
  std::vector<std::int64_t> init;   // [channel_blocks*8] bias saturated to psum_bits (0 if none)
};

// weight: [K, ...] codes with R = size/K terms per channel in reduction order; bias: K accumulator
// codes or empty. Requires fits_fast_path().
PackedConvWeights pack_conv_weights(const IntTensor& weight, const std::vector<std::int64_t>& bias,
                                    const ChunkContract& cc);

// Output [K, Ho, Wo] of out_bits codes (no activation). Input [C, H, W]; reduction index order
// r = (c*KH + ky)*KW + kx; zero padding contributes zero terms. `packed` (optional) must come from
// pack_conv_weights() of the same weight, bias and contract.
IntTensor conv_chunked(const ConvShape& shape, const ChunkContract& cc, const IntTensor& weight,
                       const std::vector<std::int64_t>& bias, const IntTensor& in, GoldenStats& st,
                       int threads = 1, ConvPath path = ConvPath::Auto, const PackedConvWeights* packed = nullptr);

// Weights W[i][o][t] of I matrix-vector products (O outputs of `depth` terms each), transposed to
// [i][t][o] int16 so that vector lanes run over the outputs o. Requires fits_fast_path().
struct PackedMatvecWeights {
  int inputs = 0, outputs = 0, depth = 0;
  std::vector<std::int16_t> codes;  // [inputs][depth][outputs]
};
PackedMatvecWeights pack_matvec_weights(const IntTensor& weight, int inputs, int outputs, int depth);

// out[i*O + o] = reduce_out(W[i][o] . x[i]) under the accumulation contract (accumulators start at
// 0), as dot_chunked() per output would give it, counts included; x is [I, depth]. The capsule
// prediction vectors u_hat (ClassCaps). Inputs i are split over `threads` workers.
void chunked_matvecs(const PackedMatvecWeights& pw, const IntTensor& x, const ChunkContract& cc, IntTensor& out,
                     GoldenStats& st, int threads = 1);

}  // namespace capsgen

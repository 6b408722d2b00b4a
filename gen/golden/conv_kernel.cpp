#include "golden/conv_kernel.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <type_traits>

#include "golden/chunked_dot.hpp"
#include "golden/parallel.hpp"

namespace capsgen {
namespace {

constexpr int kLanes = 8;                         // int32 lanes of a 256-bit vector: channels per block
constexpr int kTileChannels = 2 * kLanes;         // channels per micro-kernel call (two blocks)
constexpr int kTilePositions = 4;                 // output positions per micro-kernel call
constexpr int kTileAccs = kTileChannels * kTilePositions;
constexpr int kTileTerms = 512;                   // reduction terms per cache tile (16 KiB of weights)

// The padded reduction layout shared by packed weights and patches: chunk c takes
// 2*pairs_per_chunk slots, term t of the chunk sits at slot t, the slots after the chunk's last
// term hold zero. So a term pair never straddles two chunks, whatever `rows` is.
struct PairLayout {
  int rows, chunks, pairs_per_chunk;
  int chunk_slots() const { return 2 * pairs_per_chunk; }
  int slots() const { return chunks * chunk_slots(); }
};

PairLayout pair_layout(int reduction, int rows) {
  return {rows, (reduction + rows - 1) / rows, (rows + 1) / 2};
}

// Per reduction term r = (c*KH + ky)*KW + kx: its slot in the pair layout and its input offset
// from the window's top-left element.
struct PatchMap {
  std::vector<int> slot, offset;
  bool identity = true;  // slot[r] == r (even rows): windows copy row by row
};

PatchMap patch_map(const ConvShape& s, const PairLayout& lay) {
  PatchMap m;
  for (int c = 0; c < s.in_channels; ++c)
    for (int ky = 0; ky < s.kernel_h; ++ky)
      for (int kx = 0; kx < s.kernel_w; ++kx) {
        const int r = int(m.slot.size());
        m.slot.push_back(r / lay.rows * lay.chunk_slots() + r % lay.rows);
        m.identity = m.identity && m.slot.back() == r;
        m.offset.push_back((c * s.in_height + ky) * s.in_width + kx);
      }
  return m;
}

// Zero-padded input patch of output position (y, x) in the pair layout.
void gather_patch(const ConvShape& s, const PatchMap& m, const IntTensor& in, int y, int x, std::int16_t* patch) {
  const int y0 = y * s.stride - s.padding, x0 = x * s.stride - s.padding;
  const int terms = int(m.slot.size());
  if (y0 >= 0 && x0 >= 0 && y0 + s.kernel_h <= s.in_height && x0 + s.kernel_w <= s.in_width) {
    const std::int32_t* corner = in.data.data() + std::size_t(y0) * s.in_width + std::size_t(x0);
    if (m.identity) {
      for (int row = 0; row < s.in_channels * s.kernel_h; ++row, patch += s.kernel_w)
        for (int kx = 0; kx < s.kernel_w; ++kx) patch[kx] = std::int16_t(corner[m.offset[std::size_t(row * s.kernel_w)] + kx]);
      return;
    }
    for (int r = 0; r < terms; ++r) patch[m.slot[std::size_t(r)]] = std::int16_t(corner[m.offset[std::size_t(r)]]);
    return;
  }
  int r = 0;
  for (int c = 0; c < s.in_channels; ++c)
    for (int ky = 0; ky < s.kernel_h; ++ky)
      for (int kx = 0; kx < s.kernel_w; ++kx, ++r) {
        const int iy = y0 + ky, ix = x0 + kx;
        if (iy >= 0 && iy < s.in_height && ix >= 0 && ix < s.in_width)
          patch[m.slot[std::size_t(r)]] = std::int16_t(in[(std::size_t(c) * s.in_height + iy) * s.in_width + ix]);
      }
}

// Adds one chunk sum to an accumulator with saturation; returns 1 when it saturated.
template <typename Acc>
inline int add_chunk(Acc& acc, std::int32_t part, std::int64_t lo, std::int64_t hi) {
  const std::int64_t sum = std::int64_t(acc) + part;
  acc = Acc(std::clamp(sum, lo, hi));
  return sum < lo || sum > hi;
}

// Micro-kernel, plain C++: `chunks` chunks of kTilePositions patches x kTileChannels channels.
// w: block pair's weights at the first chunk (second block `block_stride` further); x: the patches
// at the first chunk; acc: [position][channel]. Returns the saturating additions.
template <typename Acc>
long long tile_generic(const std::int16_t* w, std::size_t block_stride, const std::int16_t* const* x, int chunks,
                       int ppc, Acc* acc, std::int64_t lo, std::int64_t hi) {
  long long saturations = 0;
  for (int c = 0; c < chunks; ++c) {
    std::int32_t part[kTilePositions][kTileChannels] = {};
    for (int q = 0; q < ppc; ++q)
      for (int p = 0; p < kTilePositions; ++p) {
        const std::int32_t x0 = x[p][c * 2 * ppc + 2 * q], x1 = x[p][c * 2 * ppc + 2 * q + 1];
        for (int l = 0; l < kTileChannels; ++l) {
          const std::int16_t* wl = w + (l / kLanes) * block_stride + (std::size_t(c) * ppc + q) * 2 * kLanes + (l % kLanes) * 2;
          part[p][l] += wl[0] * x0 + wl[1] * x1;
        }
      }
    for (int p = 0; p < kTilePositions; ++p)
      for (int l = 0; l < kTileChannels; ++l) saturations += add_chunk(acc[p * kTileChannels + l], part[p][l], lo, hi);
  }
  return saturations;
}

// Saturating add of 8 chunk sums to 8 int32 accumulators; saturating lanes decrement `count`.
__attribute__((target("avx2"))) inline __m256i add_chunk_avx2(std::int32_t* acc, __m256i part, __m256i lo, __m256i hi,
                                                              __m256i count) {
  const __m256i sum = _mm256_add_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(acc)), part);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc), _mm256_min_epi32(_mm256_max_epi32(sum, lo), hi));
  const __m256i clipped = _mm256_or_si256(_mm256_cmpgt_epi32(sum, hi), _mm256_cmpgt_epi32(lo, sum));
  return _mm256_add_epi32(count, clipped);  // clipped lanes are -1
}

// The micro-kernel of tile_generic with AVX2: per term pair, one madd per (position, block).
// Int32 accumulators (psum_bits <= 31: acc + chunk sum fits int32) update in vectors; int64 ones
// (wider psum) lane by lane.
template <typename Acc>
__attribute__((target("avx2"))) long long tile_avx2(const std::int16_t* w, std::size_t block_stride,
                                                    const std::int16_t* const* x, int chunks, int ppc, Acc* acc,
                                                    std::int64_t lo, std::int64_t hi) {
  const __m256i vlo = _mm256_set1_epi32(std::int32_t(std::max<std::int64_t>(lo, INT32_MIN)));
  const __m256i vhi = _mm256_set1_epi32(std::int32_t(std::min<std::int64_t>(hi, INT32_MAX)));
  __m256i count = _mm256_setzero_si256();
  long long saturations = 0;
  const std::int16_t* w0 = w;
  const std::int16_t* w1 = w + block_stride;
  for (int c = 0; c < chunks; ++c) {
    __m256i part[kTilePositions][2];
    for (auto& pp : part) pp[0] = pp[1] = _mm256_setzero_si256();
    const int base = c * 2 * ppc;
    for (int q = 0; q < ppc; ++q) {
      const __m256i a0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w0 + q * 2 * kLanes));
      const __m256i a1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w1 + q * 2 * kLanes));
      for (int p = 0; p < kTilePositions; ++p) {
        std::int32_t pair;
        std::memcpy(&pair, x[p] + base + 2 * q, sizeof pair);
        const __m256i b = _mm256_set1_epi32(pair);
        part[p][0] = _mm256_add_epi32(part[p][0], _mm256_madd_epi16(a0, b));
        part[p][1] = _mm256_add_epi32(part[p][1], _mm256_madd_epi16(a1, b));
      }
    }
    for (int p = 0; p < kTilePositions; ++p)
      for (int h = 0; h < 2; ++h) {
        Acc* a = acc + p * kTileChannels + h * kLanes;
        if constexpr (std::is_same_v<Acc, std::int32_t>) {
          count = add_chunk_avx2(a, part[p][h], vlo, vhi, count);
        } else {
          alignas(32) std::int32_t lanes[kLanes];
          _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), part[p][h]);
          for (int l = 0; l < kLanes; ++l) saturations += add_chunk(a[l], lanes[l], lo, hi);
        }
      }
    w0 += 2 * kLanes * ppc;
    w1 += 2 * kLanes * ppc;
  }
  alignas(32) std::int32_t lanes[kLanes];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), count);
  for (const std::int32_t n : lanes) saturations -= n;
  return saturations;
}

// Output positions [begin, end) with the fast kernel: patches, then for each cache tile of chunks,
// each 16-channel tile and each group of 4 positions, one micro-kernel call; then reduce_out.
template <typename Acc>
void conv_positions_fast(const ConvShape& s, const ChunkContract& cc, const PackedConvWeights& pw, const IntTensor& in,
                         bool avx2, int begin, int end, IntTensor& out, GoldenStats& st) {
  const PairLayout lay{cc.rows, pw.chunks, pw.pairs_per_chunk};
  const int n = end - begin, groups = (n + kTilePositions - 1) / kTilePositions;
  const int channel_tiles = pw.channel_blocks / 2, ppc = pw.pairs_per_chunk;
  const std::size_t slots = std::size_t(lay.slots());
  std::vector<std::int16_t> patches(std::size_t(groups) * kTilePositions * slots, 0);
  const PatchMap map = patch_map(s, lay);
  for (int i = 0; i < n; ++i)
    gather_patch(s, map, in, (begin + i) / s.out_width, (begin + i) % s.out_width, &patches[std::size_t(i) * slots]);
  // Accumulators [group][channel tile][position][channel], starting at the saturated bias.
  std::vector<Acc> acc(std::size_t(groups) * channel_tiles * kTileAccs);
  for (std::size_t t = 0; t < acc.size(); t += kTileAccs)
    for (int p = 0; p < kTilePositions; ++p)
      for (int l = 0; l < kTileChannels; ++l)
        acc[t + std::size_t(p * kTileChannels + l)] =
            Acc(pw.init[(t / kTileAccs) % std::size_t(channel_tiles) * kTileChannels + std::size_t(l)]);
  const std::int64_t lo = fx::smin(cc.psum_bits), hi = fx::smax(cc.psum_bits);
  const std::size_t block_stride = std::size_t(pw.chunks) * ppc * 2 * kLanes;
  const int chunks_per_tile = std::max(1, kTileTerms / lay.chunk_slots());
  long long saturations = 0;
  for (int c0 = 0; c0 < pw.chunks; c0 += chunks_per_tile) {
    const int chunks = std::min(chunks_per_tile, pw.chunks - c0);
    for (int ct = 0; ct < channel_tiles; ++ct) {
      const std::int16_t* w = pw.codes.data() + 2 * std::size_t(ct) * block_stride + std::size_t(c0) * ppc * 2 * kLanes;
      for (int g = 0; g < groups; ++g) {
        const std::int16_t* x[kTilePositions];
        for (int p = 0; p < kTilePositions; ++p)
          x[p] = &patches[std::size_t(g * kTilePositions + p) * slots + std::size_t(c0) * lay.chunk_slots()];
        Acc* a = &acc[(std::size_t(g) * channel_tiles + ct) * kTileAccs];
        saturations += avx2 ? tile_avx2(w, block_stride, x, chunks, ppc, a, lo, hi)
                            : tile_generic(w, block_stride, x, chunks, ppc, a, lo, hi);
      }
    }
  }
  st.psum_saturations += saturations;
  st.macs += static_cast<long long>(n) * s.out_channels * s.reduction();
  const std::size_t P = std::size_t(s.positions());
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < s.out_channels; ++k) {
      const std::size_t t = (std::size_t(i / kTilePositions) * channel_tiles + std::size_t(k / kTileChannels)) * kTileAccs;
      const Acc a = acc[t + std::size_t((i % kTilePositions) * kTileChannels + k % kTileChannels)];
      out[std::size_t(k) * P + std::size_t(begin + i)] = reduce_out(a, cc.shift, cc.out_bits, st);
    }
}

// Output positions [begin, end) with the scalar reference: one dot_chunked() per output.
template <typename T, typename P>
void conv_positions_scalar(const ConvShape& s, const ChunkContract& cc, const std::vector<T>& w,
                           const std::vector<std::int64_t>& bias, const IntTensor& in, int begin, int end,
                           IntTensor& out, GoldenStats& st) {
  const int R = s.reduction();
  std::vector<T> patch(static_cast<std::size_t>(R));
  for (int pos = begin; pos < end; ++pos) {
    const int y = pos / s.out_width, x = pos % s.out_width;
    std::size_t r = 0;
    for (int c = 0; c < s.in_channels; ++c)
      for (int ky = 0; ky < s.kernel_h; ++ky)
        for (int kx = 0; kx < s.kernel_w; ++kx) {
          const int iy = y * s.stride + ky - s.padding, ix = x * s.stride + kx - s.padding;
          const bool inside = iy >= 0 && iy < s.in_height && ix >= 0 && ix < s.in_width;
          patch[r++] = inside ? T(in[(std::size_t(c) * s.in_height + iy) * s.in_width + ix]) : T(0);
        }
    for (int k = 0; k < s.out_channels; ++k) {
      const std::int64_t init = bias.empty() ? 0 : bias[std::size_t(k)];
      const std::int64_t acc =
          dot_chunked<T, P>(patch.data(), &w[std::size_t(k) * R], R, cc.rows, cc.psum_bits, init, st);
      out[std::size_t(k) * s.positions() + std::size_t(pos)] = reduce_out(acc, cc.shift, cc.out_bits, st);
    }
  }
}

template <typename T, typename P>
void conv_scalar(const ConvShape& s, const ChunkContract& cc, const IntTensor& weight,
                 const std::vector<std::int64_t>& bias, const IntTensor& in, int threads, IntTensor& out,
                 GoldenStats& st) {
  const std::vector<T> w(weight.data.begin(), weight.data.end());
  parallel_ranges(s.positions(), threads, st, [&](int b, int e, GoldenStats& ws) {
    conv_positions_scalar<T, P>(s, cc, w, bias, in, b, e, out, ws);
  });
}

// part[o] += w[o] * x for n outputs (GCC vectorizes it; AVX2 clone chosen at load time).
__attribute__((target_clones("avx2", "default"))) void add_products(const std::int16_t* w, std::int32_t x, int n,
                                                                    std::int32_t* part) {
  for (int o = 0; o < n; ++o) part[o] += std::int32_t(w[o]) * x;
}

// acc[o] = sat(acc[o] + part[o]) for n int32 accumulators (psum_bits <= 31); returns the clips.
__attribute__((target_clones("avx2", "default"))) int add_chunks32(std::int32_t* acc, const std::int32_t* part, int n,
                                                                   std::int32_t lo, std::int32_t hi) {
  int clipped = 0;
  for (int o = 0; o < n; ++o) {
    const std::int32_t sum = acc[o] + part[o];
    clipped += (sum < lo) | (sum > hi);
    acc[o] = std::min(std::max(sum, lo), hi);
  }
  return clipped;
}

template <typename Acc>
long long add_chunks(Acc* acc, const std::int32_t* part, int n, std::int64_t lo, std::int64_t hi) {
  if constexpr (std::is_same_v<Acc, std::int32_t>) {
    return add_chunks32(acc, part, n, std::int32_t(lo), std::int32_t(hi));
  } else {
    long long clipped = 0;
    for (int o = 0; o < n; ++o) clipped += add_chunk(acc[o], part[o], lo, hi);
    return clipped;
  }
}

// Matrix-vector products of inputs [begin, end): per chunk of terms, the exact chunk sums of all
// outputs, then one saturating accumulate per output.
template <typename Acc>
void matvecs(const PackedMatvecWeights& pw, const IntTensor& x, const ChunkContract& cc, int begin, int end,
             IntTensor& out, GoldenStats& st) {
  const int O = pw.outputs, depth = pw.depth;
  const std::int64_t lo = fx::smin(cc.psum_bits), hi = fx::smax(cc.psum_bits);
  std::vector<Acc> acc(static_cast<std::size_t>(O));
  std::vector<std::int32_t> part(static_cast<std::size_t>(O));
  for (int i = begin; i < end; ++i) {
    std::fill(acc.begin(), acc.end(), Acc(0));
    for (int base = 0; base < depth; base += cc.rows) {
      std::fill(part.begin(), part.end(), 0);
      for (int t = base; t < std::min(depth, base + cc.rows); ++t)
        add_products(&pw.codes[(std::size_t(i) * depth + std::size_t(t)) * std::size_t(O)],
                     x[std::size_t(i) * depth + std::size_t(t)], O, part.data());
      st.psum_saturations += add_chunks(acc.data(), part.data(), O, lo, hi);
    }
    for (int o = 0; o < O; ++o)
      out[std::size_t(i) * O + std::size_t(o)] = reduce_out(acc[std::size_t(o)], cc.shift, cc.out_bits, st);
  }
  st.macs += static_cast<long long>(end - begin) * O * depth;
}

}  // namespace

PackedMatvecWeights pack_matvec_weights(const IntTensor& weight, int inputs, int outputs, int depth) {
  if (weight.size() != std::size_t(inputs) * std::size_t(outputs) * std::size_t(depth))
    throw std::logic_error("pack_matvec_weights: weight size mismatch");
  PackedMatvecWeights pw{inputs, outputs, depth, std::vector<std::int16_t>(weight.size())};
  for (std::size_t i = 0; i < std::size_t(inputs); ++i)
    for (std::size_t o = 0; o < std::size_t(outputs); ++o)
      for (std::size_t t = 0; t < std::size_t(depth); ++t)
        pw.codes[(i * depth + t) * outputs + o] = std::int16_t(weight[(i * outputs + o) * depth + t]);
  return pw;
}

void chunked_matvecs(const PackedMatvecWeights& pw, const IntTensor& x, const ChunkContract& cc, IntTensor& out,
                     GoldenStats& st, int threads) {
  if (!fits_fast_path(cc.data_bits, cc.weight_bits, cc.rows))
    throw std::logic_error("chunked_matvecs: codes too wide for the fast kernel");
  parallel_ranges(pw.inputs, threads, st, [&](int b, int e, GoldenStats& ws) {
    if (cc.psum_bits <= 31) matvecs<std::int32_t>(pw, x, cc, b, e, out, ws);
    else matvecs<std::int64_t>(pw, x, cc, b, e, out, ws);
  });
}

bool cpu_has_avx2() {
  static const bool has = __builtin_cpu_supports("avx2");
  return has;
}

PackedConvWeights pack_conv_weights(const IntTensor& weight, const std::vector<std::int64_t>& bias,
                                    const ChunkContract& cc) {
  if (!fits_fast_path(cc.data_bits, cc.weight_bits, cc.rows))
    throw std::logic_error("pack_conv_weights: codes too wide for the fast kernel");
  PackedConvWeights pw;
  pw.out_channels = int(weight.shape.at(0));
  pw.reduction = int(weight.size() / std::size_t(pw.out_channels));
  pw.rows = cc.rows;
  const PairLayout lay = pair_layout(pw.reduction, cc.rows);
  pw.chunks = lay.chunks;
  pw.pairs_per_chunk = lay.pairs_per_chunk;
  pw.channel_blocks = 2 * ((pw.out_channels + kTileChannels - 1) / kTileChannels);
  const std::size_t block_size = std::size_t(lay.slots()) * kLanes;
  pw.codes.assign(block_size * std::size_t(pw.channel_blocks), 0);
  pw.init.assign(std::size_t(pw.channel_blocks) * kLanes, 0);
  for (int k = 0; k < pw.out_channels && !bias.empty(); ++k)
    pw.init[std::size_t(k)] = fx::sat_s(bias[std::size_t(k)], cc.psum_bits);
  // Block by block, term by term: the writes are sequential, the reads 8 streams of weight rows.
  for (int kb = 0; kb * kLanes < pw.out_channels; ++kb) {
    std::int16_t* block = &pw.codes[std::size_t(kb) * block_size];
    const int lanes = std::min(kLanes, pw.out_channels - kb * kLanes);
    for (int r = 0, slot = 0; r < pw.reduction; ++r) {
      std::int16_t* pair = block + std::size_t(slot / 2) * 2 * kLanes + std::size_t(slot % 2);
      for (int l = 0; l < lanes; ++l)
        pair[2 * l] = std::int16_t(weight[std::size_t(kb * kLanes + l) * pw.reduction + std::size_t(r)]);
      slot = (r + 1) % cc.rows == 0 ? (r + 1) / cc.rows * lay.chunk_slots() : slot + 1;
    }
  }
  return pw;
}

IntTensor conv_chunked(const ConvShape& s, const ChunkContract& cc, const IntTensor& weight,
                       const std::vector<std::int64_t>& bias, const IntTensor& in, GoldenStats& st, int threads,
                       ConvPath path, const PackedConvWeights* packed) {
  if (weight.size() != std::size_t(s.out_channels) * std::size_t(s.reduction()))
    throw std::logic_error("conv_chunked: weight size does not match the convolution");
  IntTensor out({std::size_t(s.out_channels), std::size_t(s.out_height), std::size_t(s.out_width)});
  const bool fast_fits = fits_fast_path(cc.data_bits, cc.weight_bits, cc.rows);
  if (path == ConvPath::Auto) path = !fast_fits ? ConvPath::Scalar : cpu_has_avx2() ? ConvPath::Avx2 : ConvPath::Generic;
  if (path == ConvPath::Scalar) {
    if (fast_fits) conv_scalar<std::int16_t, std::int32_t>(s, cc, weight, bias, in, threads, out, st);
    else conv_scalar<std::int32_t, std::int64_t>(s, cc, weight, bias, in, threads, out, st);
    return out;
  }
  if (path == ConvPath::Avx2 && !cpu_has_avx2()) throw std::runtime_error("conv_chunked: the CPU has no AVX2");
  PackedConvWeights local;
  if (!packed) local = pack_conv_weights(weight, bias, cc);
  const PackedConvWeights& pw = packed ? *packed : local;
  const bool avx2 = path == ConvPath::Avx2;
  parallel_ranges(s.positions(), threads, st, [&](int b, int e, GoldenStats& ws) {
    if (cc.psum_bits <= 31) conv_positions_fast<std::int32_t>(s, cc, pw, in, avx2, b, e, out, ws);
    else conv_positions_fast<std::int64_t>(s, cc, pw, in, avx2, b, e, out, ws);
  });
  return out;
}

}  // namespace capsgen

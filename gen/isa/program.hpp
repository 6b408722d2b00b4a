// The accelerator's program: a list of descriptors the controller executes (docs/accelerator.md).
// The compiler (gen/compiler) encodes them; the functional executor (gen/compiler/executor) and,
// later, the controller RTL decode them. Nothing here knows about CapsNet layers: a descriptor says
// which memory regions feed the array, in which loop order, through which activation.
//
// Addresses are element indices into the accelerator's address space (one element = one code of
// its tensor's width); the memory system maps them onto DRAM and scratchpad banks.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace capsgen::isa {

// Where the stationary tiles come from. Tile (b, k, n), element (r, c) lives at
//   base + b*s_b + k*s_k + n*s_n + r*s_r + c*s_c
// and is zero when k*rows + r >= r_total or n*cols + c >= n_total.
// With diag_groups = G > 1 the rows are split into G groups of rows/G and column c only sees
// group c (block-diagonal tile), whose element r' (0 <= r' < rows/G) is read at base + b*s_b + r'*s_r.
struct TileSource {
  std::int64_t base = 0, s_b = 0, s_k = 0, s_n = 0, s_r = 0, s_c = 0;
  int diag_groups = 1;
};

// Where the data vectors come from. Vector (b, m) for chunk k, element r (reduction index
// R = k*rows + r, zero when R >= r_total):
//  - kAffine:   base + b*s_b + m*s_m + k*s_k + r*s_r
//  - kConv:     im2col of a [channels, height, width] feature map at base + b*s_b: m = y*out_w + x,
//               r_offset + R = (c*kernel_h + ky)*kernel_w + kx, zero outside the map (padding).
//               r_offset > 0 starts the reduction inside the window: a part of a split reduction
//               (docs/memory-system.md 3.1). `band`: the map is a band of rows of a padded map that
//               starts below its top (a part of a convolution, docs/memory-system.md): there are no
//               zero rows above it, input row iy = y*stride + ky; `padding` still pads the columns
//               and the rows below the band's last.
struct DataSource {
  enum class Kind { kAffine, kConv };
  Kind kind = Kind::kAffine;
  std::int64_t base = 0, s_b = 0, s_m = 0, s_k = 0, s_r = 0;
  int channels = 0, height = 0, width = 0, kernel_h = 0, kernel_w = 0, stride = 1, padding = 0, out_w = 0;
  int r_offset = 0;  // kConv
  bool band = false;  // kConv
};

// How each accumulator starts: at zero, at a per-output-column value (bias, psum-width codes at
// base + o for output column o), or at a per-output value read from memory and shifted left
// (routing logits: b << shift at base + b*s_b + m*s_m).
struct AccInit {
  enum class Kind { kZero, kPerColumn, kPerOutput };
  Kind kind = Kind::kZero;
  std::int64_t base = 0, s_b = 0, s_m = 0;
  int shift = 0;
};

// Where outputs go. Output (b, m, o), o = n*cols + c < n_total, is written to
//   base + b*s_b + m*s_m + (o / o_div)*s_o1 + (o % o_div)*s_o2      (o_div >= 1)
// With select_mod = J > 0 only column o == m % J is written, at base + b*s_b + m*s_m.
struct OutTarget {
  std::int64_t base = 0, s_b = 0, s_m = 0, s_o1 = 0, s_o2 = 0;
  int o_div = 1;
  int select_mod = 0;
};

// One pass of matrix work through the array: for b < batch, for each block of at most m_block
// vectors, for k < k_chunks, for n < n_tiles: load tile (b,k,n), stream the block's vectors.
// After the last chunk each output goes through the reduction (round-half-up shift, saturate to
// act bits) and optional ReLU, then to `out`.
struct Gemm {
  std::string name;
  int batch = 1;
  int m_total = 1;  // vectors per batch item
  int m_block = 1;  // vectors whose partial sums stay in the accumulators (<= accumulator depth)
  int k_chunks = 1;
  int n_tiles = 1;
  int r_total = 0;  // reduction length (valid rows over all chunks)
  int n_total = 0;  // output columns over all tiles
  TileSource tile;
  DataSource data;
  AccInit init;
  OutTarget out;
  int shift = 0;
  bool relu = false;
  // A reduction split into parts that run back to back (docs/memory-system.md section 3): the partial
  // sums stay in the accumulators between them. acc_continue: chunk 0 adds onto the sums the previous
  // Gemm left in the accumulators (init is not read; it must be kZero); acc_hold: nothing is written,
  // the sums stay for the next Gemm. Either needs one block (batch 1, m_total <= m_block), the same
  // shape (m_total, n_tiles) as the part it continues. Bit-exact with the whole reduction, because the
  // accumulators saturate after every chunk in both.
  bool acc_continue = false, acc_hold = false;
};

// A vector pass through the activation units alone (one vector per unit, cols units in parallel):
// `count` vectors of `n` elements, element e of vector v read at in_base + v*in_s_v + e*in_s_e.
// Squash and Softmax write n elements (out_base + v*out_s_v + e*out_s_e); Norm writes one norm
// code per vector (out_base + v*out_s_v).
struct Activate {
  enum class Func { kSquash, kSoftmax, kNorm };
  std::string name;
  Func func = Func::kSquash;
  int count = 0, n = 0;
  std::int64_t in_base = 0, in_s_v = 0, in_s_e = 1;
  std::int64_t out_base = 0, out_s_v = 0, out_s_e = 1;
  int norm_shift = 0;  // kNorm (squash uses the preset's)
};

// Writes `value` to `count` elements starting at base with stride (e.g. the first routing
// iteration's coupling coefficients, CapsAcc's shortcut).
struct Fill {
  std::string name;
  std::int64_t base = 0, count = 0, stride = 1;
  std::int64_t value = 0;
  int period = 0;                     // > 0: value_table[i % period] instead of value
  std::vector<std::int64_t> table;
};

using Instr = std::variant<Gemm, Activate, Fill>;

// A named tensor in the address space (the memory image and the testbench's comparisons use it).
struct Region {
  std::string name;       // e.g. "conv1.weight", "primary.out", "classcaps.iter1.c"
  std::int64_t base = 0;  // element address
  std::vector<std::size_t> shape;
  int bits = 8;           // code width (8 for activations and weights, psum for biases)
  // Tiled stationary operand (tile_rows > 0): the tensor's first dimension is the output index o
  // (K outputs), the others flattened are the reduction index R. It is stored tile-major, the order
  // the tile reader loads it (docs/accelerator.md 8.1): element (o, R) with R = k*tile_rows + r and
  // o = n*tile_cols + c lives at base + ((k*n_tiles + n)*tile_rows + r)*tile_cols + c, and the
  // padding of the last chunk and tile holds zeros. A tile row is then tile_cols consecutive
  // elements (one wide scratchpad access).
  int tile_rows = 0, tile_cols = 0;
  // Batched matrices stored transposed (not tiled): element [i][o][e] (i the first dimension, e the
  // last, o the ones between flattened: O of them) lives at base + (i*E + e)*O + o, so that a
  // stationary tile of matrix i with rows e and columns o has contiguous rows (the class-capsule
  // prediction with W_i stationary).
  bool minor_transposed = false;

  std::int64_t outputs() const;    // K (tiled)
  std::int64_t reduction() const;  // R (tiled)
  std::int64_t k_chunks() const;   // ceil(R / tile_rows) (tiled)
  std::int64_t n_tiles() const;    // ceil(K / tile_cols) (tiled)
  std::int64_t stored_size() const;  // elements the region occupies
  // Address offset of tensor element `flat` (row-major index into shape).
  std::int64_t offset_of(std::int64_t flat) const;
};

struct Program {
  std::string network, preset;
  std::vector<Instr> instrs;
  std::vector<Region> regions;
  std::int64_t size = 0;  // elements in the address space
  int inputs = 1;         // input images: region input, or input.k<N> each (compiler's routing batch)
  // Operands the compiler makes up (not weights of the network, e.g. the scaled identity tiles of a
  // capsule add): codes of a region, in the order of its shape, that the memory image holds.
  struct Constant {
    std::string region;
    std::vector<std::int32_t> values;
  };
  std::vector<Constant> constants;

  const Region* region(const std::string& name) const;
  // The operation an instruction belongs to (its name up to the first '/').
  static std::string op_name(const Instr& in);
};

const std::string& instr_name(const Instr& in);

}  // namespace capsgen::isa

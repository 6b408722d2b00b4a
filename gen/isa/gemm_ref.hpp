// The one reference of what a Gemm descriptor computes (gen/isa/program.hpp), bit for bit: the
// functional executor (gen/compiler/executor.cpp) runs programs through it and the compute-engine
// block test (tb/engine_tb.cpp) checks capsgen_engine against it. It depends only on the
// descriptor and gen/numerics, so the testbenches compile it without the compiler.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "isa/program.hpp"
#include "numerics/activation.hpp"

namespace capsgen::isa {

// The array and the widths a Gemm runs on.
struct GemmShape {
  int rows = 1, cols = 1;
  int psum_bits = 25;  // accumulator width (saturation after every chunk)
  int act_bits = 8;    // output width (round-half-up shift, saturate)
};

struct GemmCounters {
  long long vectors = 0;           // data vectors streamed (per tile)
  long long psum_saturations = 0;  // chunk additions that saturated
  long long writes = 0;            // outputs written
};

using ReadFn = std::function<std::int64_t(std::int64_t)>;
using WriteFn = std::function<void(std::int64_t, std::int64_t)>;

// Runs g: for b < batch, for each block of at most m_block vectors, for k < k_chunks, for n < n_tiles:
// tile (b, k, n) against the block's vectors; accumulators start at the AccInit value on chunk 0 and
// saturate to psum_bits after every chunk (acc_continue: chunk 0 adds onto *acc's sums instead); after
// the last chunk each output is reduced (shift,
// saturate to act_bits), optionally ReLU'd, and written through `write` in the order the hardware
// writes it: block by block, then per tile n, per vector of the block, per column (output o = n*cols + c);
// with acc_hold nothing is written.
// The engine's accumulators between Gemms: the last block's sums (index (mi*n_tiles + n)*cols + c),
// what Gemm::acc_continue starts from and Gemm::acc_hold leaves.
struct AccState {
  std::vector<std::int64_t> sums;
};

// `acc` (may be null when g neither continues nor holds) carries the accumulators from one Gemm to
// the next: after every Gemm it holds its last block's sums. Throws std::logic_error for acc_continue
// without a state of the block's size.
void run_gemm_reference(const Gemm& g, const GemmShape& s, const ReadFn& read, const WriteFn& write,
                        GemmCounters* counters = nullptr, AccState* acc = nullptr);

// The activation units' LUTs for an ActParams (fx::build_*_lut).
struct ActTables {
  fx::ActParams params;
  std::vector<std::uint32_t> sqrt_lut, squash_lut, exp_lut;
  explicit ActTables(const fx::ActParams& p);
};

// Runs an Activate pass: for each of `count` vectors of n elements, squash or softmax (n results, in
// element order) or norm (one code); writes in the order the hardware writes them (vector, element).
void run_activate_reference(const Activate& a, const ActTables& t, const ReadFn& read, const WriteFn& write);

// Runs a Fill: element e < count at base + e*stride gets value (or table[e % period]).
void run_fill_reference(const Fill& f, const WriteFn& write);

}  // namespace capsgen::isa

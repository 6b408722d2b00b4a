// The data-vector element semantics of a Gemm, in one place: which element each array row receives
// (gen/compiler/executor.cpp reads memory through it), the element sequence the gather unit walks
// (tb/gather_tb.cpp compares capsgen_gather against it), and the encoding of a Gemm's data source
// into the gather unit's descriptor (docs/rtl-gather.md), including the derived fields that let the
// hardware avoid multipliers.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "isa/program.hpp"

namespace capsgen::isa {

// Address of element r (0 <= r < rows) of data vector (b, m) in chunk k, as program.hpp specifies
// DataSource; nullopt when the element is zero (outside the reduction, conv padding, or a diag row
// outside the groups). With tile.diag_groups = G > 1, row r belongs to group r / (rows / G) and is
// element r % (rows / G) of that group: it is the (group * r_total + element)-th element of the
// packed vector in chunk 0 (k is ignored), zero when group >= G or element >= r_total.
std::optional<std::int64_t> data_element_address(const Gemm& g, int rows, int b, int m, int k, int r);

// One element of the gather sequence.
struct GatherElement {
  std::int64_t addr = 0;    // element address (0 when zero)
  bool zero = false;        // the element is 0 (no memory read)
  int row = 0;              // r
  int vec = 0;              // index of the vector within its block
  int chunk = 0;            // k
  bool vec_last = false;    // r == rows - 1
  bool chunk_last = false;  // last element of the block's chunk (last row of the block's last vector)
  bool last = false;        // last element of the Gemm
};

// Number of elements the array consumes for one Gemm: batch x m_total x k_chunks x rows; 0 when
// batch, m_total, m_block or k_chunks is <= 0.
std::int64_t gather_element_count(const Gemm& g, int rows);

// The whole sequence, in the order the array consumes it: for b < batch, for each block of at most
// m_block vectors (m0 = 0, m_block, ...), for k < k_chunks, for each vector m of the block, for
// r < rows: element r of vector (b, m) in chunk k. Empty when gather_element_count() is 0.
std::vector<GatherElement> gather_sequence(const Gemm& g, int rows);

// The descriptor of capsgen_gather (docs/rtl-gather.md): the Gemm's counts and data source, with
// addresses and strides as 32-bit two's complement values (the unit computes modulo 2^32), and the
// derived fields the encoder computes so that the hardware needs no multiplier:
//   s_g     = r_total * s_r                                (diag: one group further)
//   pad_off = -(pad_top * width + padding)                  (conv: address offset of iy = -pad_top,
//                                                            ix = -padding; pad_top = band ? 0 : padding)
//   ky_step = width - (kernel_w - 1)                        (conv: kx wraps, ky + 1)
//   c_step  = height*width - (kernel_h - 1)*width - (kernel_w - 1)   (conv: kx and ky wrap, c + 1)
//   y_step  = stride*width - (out_w - 1)*stride             (conv: x wraps, y + 1)
// Derived fields are 0 where their mode does not use them.
struct GatherDescriptor {
  bool conv = false;
  std::uint16_t batch = 0, m_total = 0, m_block = 0, k_chunks = 0, r_total = 0;
  std::uint32_t base = 0, s_b = 0, s_m = 0, s_k = 0, s_r = 0;
  std::uint16_t groups = 1, group_rows = 0;  // diag (groups > 1, affine only); group_rows = rows / groups
  std::uint32_t s_g = 0;
  std::uint16_t height = 0, width = 0, kernel_h = 0, kernel_w = 0, stride = 0, padding = 0, out_w = 0;
  std::uint32_t pad_off = 0, ky_step = 0, c_step = 0, y_step = 0;
  // conv, a reduction part that starts inside the window (DataSource::r_offset = ky0*kernel_w + kx0):
  // the window position of the first element (base is moved to it: base + ky0*width + kx0).
  std::uint8_t kx0 = 0, ky0 = 0;
  // conv: the map is a band that starts below the padded map's top (DataSource::band): no zero rows
  // above it, the first input row is iy = 0 instead of -padding.
  bool band = false;
};

// Bits of kx0 and ky0 (a part may start inside windows of up to 2^kGatherStartBits rows and columns).
inline constexpr int kGatherStartBits = 7;

// Bits of the signed input coordinates iy, ix the unit tracks.
inline constexpr int kGatherCoordBits = 18;

// Encodes g's data source for an array of `rows` rows. Throws std::invalid_argument when the Gemm
// does not fit the unit: a count outside [0, 65535], diag with a conv source or G > rows, a conv
// source with a zero kernel, stride, out_w, height or width, input coordinates outside the signed
// kGatherCoordBits-bit range, or a reduction offset outside the first window or with a start position
// beyond kGatherStartBits bits.
GatherDescriptor encode_gather(const Gemm& g, int rows);

}  // namespace capsgen::isa

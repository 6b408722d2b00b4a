// Gather address generator (docs/rtl-gather.md): capsgen_gather walks the data-vector elements of
// one Gemm descriptor in the order the array consumes them (for b, for each block of at most m_block
// vectors, for chunk k, for each vector of the block, for row r) and gives, one element per cycle
// (valid/ready), either its address or that it is zero (outside the reduction, conv padding, diag
// row outside the groups). Affine, conv (im2col with stride and padding) and diag-group mappings;
// counters and adders only. The element semantics are gen/isa/gather.hpp's; the descriptor and its
// derived fields are encoded by isa::encode_gather.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "config/accel_config.hpp"
#include "emit/design.hpp"

namespace capsgen::emit {

inline constexpr const char* kGatherModule = "capsgen_gather";
inline constexpr int kGatherCountBits = 16;  // batch, m_total, m_block, k_chunks, r_total, conv sizes
inline constexpr int kGatherAddrBits = 32;   // element addresses and strides (two's complement, mod 2^32)
inline constexpr int kGatherCoordWidth = 18; // signed input coordinates iy, ix (= isa::kGatherCoordBits)

// Bits of elem_row_o: max(1, clog2(rows)).
int gather_row_bits(const AccelConfig& cfg);
// The descriptor fields of the gather unit (ports desc_<field>_i), in port order.
const std::vector<std::string>& gather_descriptor_fields();
// Declares each field with `declare(field, width, comment)`, in gather_descriptor_fields() order, and
// returns the handles: capsgen_gather's inputs desc_<field>_i, the compute engine's wires (sliced out
// of its packed descriptor and passed on to the gather unit).
using DescriptorFieldDeclarer = std::function<Expr(const std::string& field, const Dim& width, const std::string& comment)>;
std::vector<Expr> declare_gather_descriptor_fields(const DescriptorFieldDeclarer& declare);
Module build_gather(const AccelConfig& cfg);
void emit_gather(const AccelConfig& cfg, Design& design);

}  // namespace capsgen::emit

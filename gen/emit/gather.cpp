#include "emit/gather.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <utility>
#include <vector>

#include "emit/activation_internal.hpp"
#include "isa/gather.hpp"

namespace capsgen::emit {

using detail::lit;
using detail::zext;

int gather_row_bits(const AccelConfig& cfg) { return std::max(1, clog2(cfg.array.rows)); }

const std::vector<std::string>& gather_descriptor_fields() {
  static const std::vector<std::string> f = {"conv", "batch", "m_total", "m_block", "k_chunks", "r_total", "base",
                                             "s_b", "s_m", "s_k", "s_r", "groups", "group_rows", "s_g", "height",
                                             "width", "kernel_h", "kernel_w", "stride", "padding", "out_w", "pad_off",
                                             "ky_step", "c_step", "y_step", "kx0", "ky0", "band"};
  return f;
}

void gather_descriptor_ports(Module& m) {
  const std::string C = str(kGatherCountBits), A = str(kGatherAddrBits);
  m.input("desc_conv_i", "1", "0: affine (diag when desc_groups_i > 1), 1: conv (im2col)")
      .input("desc_batch_i", C, "batch items")
      .input("desc_m_total_i", C, "vectors per batch item")
      .input("desc_m_block_i", C, "vectors per block")
      .input("desc_k_chunks_i", C, "chunks of rows reduction elements")
      .input("desc_r_total_i", C, "reduction length (diag: elements per group)")
      .input("desc_base_i", A, "element address of element 0 (conv: of the map)")
      .input("desc_s_b_i", A, "batch stride")
      .input("desc_s_m_i", A, "vector stride (affine)")
      .input("desc_s_k_i", A, "chunk stride (affine, not diag)")
      .input("desc_s_r_i", A, "row stride (affine)")
      .input("desc_groups_i", C, "diag groups G (affine; <= 1: no groups)")
      .input("desc_group_rows_i", C, "diag: rows / G")
      .input("desc_s_g_i", A, "diag: group stride, derived = r_total * s_r")
      .input("desc_height_i", C, "conv: map height")
      .input("desc_width_i", C, "conv: map width")
      .input("desc_kernel_h_i", C, "conv: kernel height (>= 1)")
      .input("desc_kernel_w_i", C, "conv: kernel width (>= 1)")
      .input("desc_stride_i", C, "conv: stride (>= 1)")
      .input("desc_padding_i", C, "conv: padding")
      .input("desc_out_w_i", C, "conv: output width (>= 1)")
      .input("desc_pad_off_i", A, "conv, derived: -(pad_top*width + padding), pad_top = band ? 0 : padding")
      .input("desc_ky_step_i", A, "conv, derived: width - (kernel_w - 1)")
      .input("desc_c_step_i", A, "conv, derived: height*width - (kernel_h - 1)*width - (kernel_w - 1)")
      .input("desc_y_step_i", A, "conv, derived: stride*width - (out_w - 1)*stride")
      .input("desc_kx0_i", str(isa::kGatherStartBits), "conv: window column of the first element (a part starting inside the window)")
      .input("desc_ky0_i", str(isa::kGatherStartBits), "conv: window row of the first element")
      .input("desc_band_i", "1", "conv: the map is a band below the padded map's top (no zero rows above it)");
}

namespace {

// The array's rows, which set the walk's innermost level and the width of elem_row_o, checked once.
struct GatherGeometry {
  int rows = 0;
  int row_bits = 0;  // gather_row_bits: max(1, clog2(rows))
};

GatherGeometry gather_geometry(const AccelConfig& cfg) {
  GatherGeometry g;
  g.rows = cfg.array.rows;
  g.row_bits = gather_row_bits(cfg);
  if (g.rows < 1 || g.rows > 65535) throw std::logic_error("build_gather: rows outside [1, 65535]");
  return g;
}

// The unit's module comment: the loop nest, the three mappings (affine, diag, conv), the arithmetic and
// the descriptor/element timing.
std::string gather_description(const GatherGeometry& g) {
  const int AW = kGatherAddrBits;
  return fmt::format(
      "Gather address generator (docs/rtl-gather.md) for an array of {} rows: walks the data-vector\n"
      "elements of one Gemm descriptor in the order the array consumes them, one element per cycle:\n"
      "for b < batch, for each block of at most m_block vectors, for k < k_chunks, for each vector of the\n"
      "block, for r < rows: element r of vector (b, m) in chunk k (gen/isa/gather.hpp). Each element is\n"
      "an address (elem_addr_o) or a zero (elem_zero_o: reduction index k*rows + r >= r_total, conv\n"
      "padding, diag row outside the groups).\n"
      "  affine: base + b*s_b + m*s_m + k*s_k + r*s_r\n"
      "  diag (affine, groups G > 1): row r = group g = r / group_rows, element e = r % group_rows:\n"
      "          base + b*s_b + m*s_m + g*s_g + e*s_r, zero when g >= G or e >= r_total (k ignored)\n"
      "  conv:   im2col of a [c, height, width] map at base + b*s_b, m = y*out_w + x,\n"
      "          R = k*rows + r = (c*kernel_h + ky)*kernel_w + kx, iy = y*stride - padding + ky,\n"
      "          ix = x*stride - padding + kx; zero outside the map. A part of a split reduction may start\n"
      "          inside the window: (kx, ky) of its first element are desc_kx0_i, desc_ky0_i, its base that\n"
      "          element's (DataSource::r_offset, isa::encode_gather). A band of a padded map (desc_band_i)\n"
      "          has no zero rows above it: iy = y*stride + ky.\n"
      "Addresses and strides are {}-bit two's complement (arithmetic modulo 2^{}). The derived fields\n"
      "(s_g, pad_off, ky_step, c_step, y_step) come from isa::encode_gather; no multiplier is used.\n"
      "Timing: a descriptor is accepted (desc_valid_i & desc_ready_o, ready = idle) at the clock edge\n"
      "ending cycle t; its first element is valid in cycle t+1; each element stays until elem_ready_i;\n"
      "after the edge that accepts the last element done_o is high for one cycle and desc_ready_o is\n"
      "high again (one idle cycle per descriptor). A descriptor with batch, m_total, m_block or\n"
      "k_chunks = 0 gives no element: done_o in cycle t+1.",
      g.rows, AW, AW);
}

// The port list: the descriptor handshake and fields, then one element per cycle (valid/ready) with its
// address or zero flag, its position in the walk, and busy/done.
void declare_ports(Module& m, const GatherGeometry& g) {
  const std::string C = str(kGatherCountBits), A = str(kGatherAddrBits);
  m.clock_and_reset()
      .input("desc_valid_i", "1", "descriptor valid")
      .output("desc_ready_o", "1", "idle: the descriptor is accepted");
  gather_descriptor_ports(m);
  m.output("elem_valid_o", "1", "an element is presented")
      .input("elem_ready_i", "1", "the element is taken")
      .output("elem_addr_o", A, "element address (meaningful when elem_zero_o is low)")
      .output("elem_zero_o", "1", "the element is zero (no read)")
      .output("elem_row_o", str(g.row_bits), "r: array row")
      .output("elem_vec_o", C, "index of the vector within its block")
      .output("elem_chunk_o", C, "k: chunk")
      .output("elem_vec_last_o", "1", "r == rows - 1")
      .output("elem_chunk_last_o", "1", "last element of the block's chunk")
      .output("elem_last_o", "1", "last element of the descriptor")
      .output("busy_o", "1", "a descriptor is being walked")
      .output("done_o", "1", "one-cycle pulse: the descriptor finished");
}

// The descriptor's fields as the walk uses them: counts minus one, strides, conv geometry, the
// padded origin and the window start of a part.
void declare_descriptor_registers(Module& m) {
  const std::string C = str(kGatherCountBits), A = str(kGatherAddrBits), P = str(kGatherCoordWidth);
  m.comment("Descriptor (loaded on accept).");
  m.reg("busy_q", "1");
  m.reg("done_q", "1");
  m.reg("conv_q", "1");
  m.reg("diag_q", "1");
  for (const char* n : {"bm1_q", "mtm1_q", "mbm1_q", "kcm1_q"}) m.reg(n, C, "count - 1");
  m.reg("rt_q", C, "r_total");
  for (const char* n : {"s_b_q", "s_m_q", "s_k_q", "s_r_q", "s_g_q"}) m.reg(n, A);
  m.reg("g_q", C, "diag groups");
  m.reg("grm1_q", C, "diag group_rows - 1");
  m.reg("h_q", C);
  m.reg("w_q", C);
  m.reg("khm1_q", C);
  m.reg("kwm1_q", C);
  m.reg("stride_q", C);
  m.reg("owm1_q", C);
  m.reg("npad_q", P, "-padding (two's complement)");
  m.reg("iytop_q", P, "input row of the first output row's kernel origin: -padding, 0 for a band");
  m.reg("kx0_q", C, "conv: window column of each block's first element (0 unless a part starts inside the window)");
  m.reg("ky0_q", C, "conv: window row of it");
  for (const char* n : {"ky_step_q", "c_step_q", "y_step_q"}) m.reg(n, A);
}

// The loop counters of the element presented: row r, vector within the block mi, vector m and the
// block's first vector m0, chunk k, batch item b.
void declare_loop_counters(Module& m, const GatherGeometry& g) {
  m.comment("Loop counters of the element presented.");
  m.reg("r_q", str(g.row_bits));
  for (const char* n : {"mi_q", "m_q", "m0_q", "k_q", "b_q"}) m.reg(n, str(kGatherCountBits));
}

// The walk's state within a vector and its copy at the start of the chunk.
void declare_inner_state(Module& m) {
  m.comment("Inner state (within a vector): conv c0 = kx, c1 = ky; diag c0 = element, c1 = group; the\n"
            "offset from the vector's address; remaining valid reduction elements (saturating). *s_q: the\n"
            "state at the start of the current chunk, restored for every vector of the block.");
  for (const char* n : {"c0_q", "c1_q", "rem_q", "c0s_q", "c1s_q", "rems_q"}) m.reg(n, str(kGatherCountBits));
  for (const char* n : {"off_q", "offs_q", "gofs_q"}) m.reg(n, str(kGatherAddrBits));
}

// The walk's state of the vector and its copy at the start of the block, and the batch item's base.
void declare_outer_state(Module& m) {
  const std::string C = str(kGatherCountBits), A = str(kGatherAddrBits), P = str(kGatherCoordWidth);
  m.comment("Outer state (the vector): its address without the inner offset, conv x and the input\n"
            "coordinates of its kernel origin iy0 = y*stride - padding (y*stride in a band), ix0 = x*stride -\n"
            "padding. *s_q: the state at the start of the current block, restored for every chunk. bb_q: the\n"
            "batch item's base.");
  m.reg("outer_q", A);
  m.reg("outs_q", A);
  m.reg("bb_q", A);
  m.reg("x_q", C);
  m.reg("xs_q", C);
  for (const char* n : {"iy0_q", "ix0_q", "iy0s_q", "ix0s_q"}) m.reg(n, P);
}

// The last index of each loop level, and a descriptor without elements.
void declare_loop_ends(Module& m) {
  m.wire("desc_empty", "1", "a zero count: no element");
  m.wire("row_last", "1");
  m.wire("m_last", "1");
  m.wire("bvec_last", "1", "last vector of the block");
  m.wire("k_last", "1");
  m.wire("b_last", "1");
}

// The inner state of the next element of the vector, and of the start of the next chunk.
void declare_inner_step(Module& m) {
  const std::string C = str(kGatherCountBits), A = str(kGatherAddrBits);
  m.wire("c0_wrap", "1");
  m.wire("c1_wrap", "1");
  m.wire("c0_n", C, "inner state of the next element of the vector");
  m.wire("c1_n", C);
  m.wire("inc", A);
  m.wire("off_n", A);
  m.wire("gofs_n", A);
  m.wire("rem_nz", "1");
  m.wire("rem_n", C);
  m.wire("nc_c0", C, "inner state at the start of the next chunk");
  m.wire("nc_c1", C);
  m.wire("nc_off", A);
}

// The outer state of the next vector and the next batch item's base.
void declare_vector_step(Module& m) {
  const std::string C = str(kGatherCountBits), A = str(kGatherAddrBits), P = str(kGatherCoordWidth);
  m.wire("x_wrap", "1");
  m.wire("x_n", C, "outer state of the next vector");
  m.wire("iy0_n", P);
  m.wire("ix0_n", P);
  m.wire("outer_n", A);
  m.wire("bb_n", A);
}

// The padded map's origin, the element's conv input coordinates and its zero flag.
void declare_coordinates(Module& m) {
  const std::string P = str(kGatherCoordWidth);
  m.wire("npad", P);
  m.wire("iytop", P);
  m.wire("iy", P, "conv input coordinates of the element");
  m.wire("ix", P);
  m.wire("zero", "1");
}

// The last index of each loop level (a block ends at m_block vectors or at the last vector), and a
// descriptor with a zero count.
void build_loop_ends(Module& m, const GatherGeometry& g) {
  m.blank();
  m.assign("desc_empty", fmt::format("(desc_batch_i == {0}) | (desc_m_total_i == {0}) | (desc_m_block_i == {0}) | "
                                     "(desc_k_chunks_i == {0})",
                                     lit(kGatherCountBits, 0)));
  m.assign("row_last", fmt::format("r_q == {}", lit(g.row_bits, g.rows - 1)));
  m.assign("m_last", "m_q == mtm1_q");
  m.assign("bvec_last", "(mi_q == mbm1_q) | m_last");
  m.assign("k_last", "k_q == kcm1_q");
  m.assign("b_last", "b_q == bm1_q");
}

// The next element of a vector: conv steps (kx, ky, c), the offset by 1, ky_step or c_step; diag steps
// (element, group), the group offset by s_g; affine steps r by s_r. rem counts the valid reduction
// elements down. The next chunk goes on from the element after the vector's last (conv), starts at
// offset 0 (diag) or s_k past the chunk's start (affine).
void build_inner_step(Module& m) {
  const int CW = kGatherCountBits, AW = kGatherAddrBits;
  const std::string z16 = lit(CW, 0), one16 = lit(CW, 1);
  m.comment("Inner step: conv (kx, ky, c) mixed-radix counter; diag (element, group); affine r.");
  m.assign("c0_wrap", "conv_q ? (c0_q == kwm1_q) : (diag_q & (c0_q == grm1_q))");
  m.assign("c1_wrap", "conv_q & (c1_q == khm1_q)");
  m.assign("c0_n", fmt::format("c0_wrap ? {} : c0_q + {}", z16, one16));
  m.assign("c1_n", fmt::format("~c0_wrap ? c1_q : (c1_wrap ? {} : c1_q + {})", z16, one16));
  m.assign("inc", fmt::format("~conv_q ? s_r_q : (~c0_wrap ? {} : (c1_wrap ? c_step_q : ky_step_q))", lit(AW, 1)));
  m.assign("gofs_n", "gofs_q + s_g_q");
  m.assign("off_n", "(diag_q & c0_wrap) ? gofs_n : off_q + inc");
  m.assign("rem_nz", fmt::format("rem_q != {}", z16));
  m.assign("rem_n", fmt::format("rem_q - {}", zext("rem_nz", 1, CW)));
  m.assign("nc_c0", fmt::format("conv_q ? c0_n : {}", z16));
  m.assign("nc_c1", fmt::format("conv_q ? c1_n : {}", z16));
  m.assign("nc_off", fmt::format("conv_q ? off_n : (diag_q ? {} : offs_q + s_k_q)", lit(AW, 0)));
}

// The next vector: conv steps x (wrapping to the next output row) and the kernel origin's input
// coordinates, the vector address by stride or y_step; affine by s_m. The next batch item's base is
// s_b further.
void build_vector_step(Module& m) {
  const int CW = kGatherCountBits, AW = kGatherAddrBits, PW = kGatherCoordWidth;
  m.comment("Vector step: conv (x, y) with the kernel origin's input coordinates; affine m.");
  m.assign("x_wrap", "x_q == owm1_q");
  m.assign("x_n", fmt::format("x_wrap ? {} : x_q + {}", lit(CW, 0), lit(CW, 1)));
  m.assign("ix0_n", fmt::format("x_wrap ? npad_q : ix0_q + {}", zext("stride_q", CW, PW)));
  m.assign("iy0_n", fmt::format("x_wrap ? iy0_q + {} : iy0_q", zext("stride_q", CW, PW)));
  m.assign("outer_n", fmt::format("outer_q + (~conv_q ? s_m_q : (x_wrap ? y_step_q : {}))", zext("stride_q", CW, AW)));
  m.assign("bb_n", "bb_q + s_b_q");
}

// The padded map's origin from the descriptor: the first input column -padding, the first input row
// -padding or, in a band, 0.
void build_padded_origin(Module& m) {
  const int CW = kGatherCountBits, PW = kGatherCoordWidth;
  m.assign("npad", fmt::format("{} - {}", lit(PW, 0), zext("desc_padding_i", CW, PW)));
  m.assign("iytop", fmt::format("desc_band_i ? {} : npad", lit(PW, 0)));
}

// The element's zero flag: conv, outside the reduction or the map; diag, outside the groups or
// r_total; affine, outside the reduction.
void build_zero_flag(Module& m) {
  const int CW = kGatherCountBits, PW = kGatherCoordWidth;
  m.comment("Zero flag. A negative coordinate is >= 2^(W-1) unsigned, above any 16-bit height/width.");
  m.assign("iy", fmt::format("iy0_q + {}", zext("c1_q", CW, PW)));
  m.assign("ix", fmt::format("ix0_q + {}", zext("c0_q", CW, PW)));
  m.assign("zero", fmt::format("conv_q ? (~rem_nz | (iy >= {}) | (ix >= {})) : "
                               "(diag_q ? ((c1_q >= g_q) | (c0_q >= rt_q)) : ~rem_nz)",
                               zext("h_q", CW, PW), zext("w_q", CW, PW)));
}

// Register groups: nonblocking assignments in the order given, and two lists joined.
Stmts set_regs(const std::vector<std::pair<std::string, std::string>>& v) {
  Stmts s;
  for (const auto& [l, r] : v) s.push_back(nb(l, r));
  return s;
}

Stmts cat(Stmts a, const Stmts& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Inner state (and its chunk-start copy) at the start of a block: the counters at (kx0, ky0), the
// offset 0 (the base points at that element); rem from `rt`.
Stmts inner_init(const std::string& rt, const std::string& kx0, const std::string& ky0) {
  const std::string zero = lit(kGatherAddrBits, 0);
  return set_regs({{"c0_q", kx0}, {"c1_q", ky0}, {"off_q", zero}, {"gofs_q", zero}, {"rem_q", rt},
                   {"c0s_q", kx0}, {"c1s_q", ky0}, {"offs_q", zero}, {"rems_q", rt}});
}

// Outer state (and its block-start copy).
Stmts outer_set(const std::string& outer, const std::string& x, const std::string& iy0, const std::string& ix0) {
  return set_regs({{"outer_q", outer}, {"outs_q", outer}, {"x_q", x}, {"xs_q", x}, {"iy0_q", iy0}, {"iy0s_q", iy0},
                   {"ix0_q", ix0}, {"ix0s_q", ix0}});
}

// Every register declared so far cleared, in declaration order.
Stmts reset_registers(const Module& m) {
  Stmts reset;
  for (const Item& it : m.items())
    if (const auto* n = std::get_if<ItemNet>(&it); n && n->is_reg) {
      const int w = n->width == "1" ? 1 : std::stoi(n->width);
      reset.push_back(nb(n->name, w == 1 ? "1'b0" : lit(w, 0)));
    }
  return reset;
}

// An accepted descriptor: its fields (counts as count - 1), the loop counters at 0, the inner state at
// the part's window start (conv) and the outer state at the first vector, at the base (conv: moved by
// pad_off to the padded map's origin).
Stmts descriptor_load(const GatherGeometry& g) {
  const int CW = kGatherCountBits, AW = kGatherAddrBits;
  const std::string z16 = lit(CW, 0), one16 = lit(CW, 1);
  const std::string kx0_in = fmt::format("desc_conv_i ? {} : {}", zext("desc_kx0_i", isa::kGatherStartBits, CW), z16);
  const std::string ky0_in = fmt::format("desc_conv_i ? {} : {}", zext("desc_ky0_i", isa::kGatherStartBits, CW), z16);
  const std::string base = fmt::format("desc_base_i + (desc_conv_i ? desc_pad_off_i : {})", lit(AW, 0));
  const Stmts fields = set_regs({{"busy_q", "~desc_empty"},
                                 {"done_q", "desc_empty"},
                                 {"conv_q", "desc_conv_i"},
                                 {"diag_q", fmt::format("~desc_conv_i & (desc_groups_i > {})", one16)},
                                 {"bm1_q", fmt::format("desc_batch_i - {}", one16)},
                                 {"mtm1_q", fmt::format("desc_m_total_i - {}", one16)},
                                 {"mbm1_q", fmt::format("desc_m_block_i - {}", one16)},
                                 {"kcm1_q", fmt::format("desc_k_chunks_i - {}", one16)},
                                 {"rt_q", "desc_r_total_i"},
                                 {"s_b_q", "desc_s_b_i"},
                                 {"s_m_q", "desc_s_m_i"},
                                 {"s_k_q", "desc_s_k_i"},
                                 {"s_r_q", "desc_s_r_i"},
                                 {"s_g_q", "desc_s_g_i"},
                                 {"g_q", "desc_groups_i"},
                                 {"grm1_q", fmt::format("desc_group_rows_i - {}", one16)},
                                 {"h_q", "desc_height_i"},
                                 {"w_q", "desc_width_i"},
                                 {"khm1_q", fmt::format("desc_kernel_h_i - {}", one16)},
                                 {"kwm1_q", fmt::format("desc_kernel_w_i - {}", one16)},
                                 {"stride_q", "desc_stride_i"},
                                 {"owm1_q", fmt::format("desc_out_w_i - {}", one16)},
                                 {"npad_q", "npad"},
                                 {"iytop_q", "iytop"},
                                 {"ky_step_q", "desc_ky_step_i"},
                                 {"c_step_q", "desc_c_step_i"},
                                 {"y_step_q", "desc_y_step_i"},
                                 {"kx0_q", kx0_in},
                                 {"ky0_q", ky0_in},
                                 {"bb_q", base}});
  const Stmts counters = set_regs(
      {{"r_q", lit(g.row_bits, 0)}, {"mi_q", z16}, {"m_q", z16}, {"m0_q", z16}, {"k_q", z16}, {"b_q", z16}});
  return cat(cat(cat(fields, counters), inner_init("desc_r_total_i", kx0_in, ky0_in)),
             outer_set(base, z16, "iytop", "npad"));
}

// Next row of the vector: the inner state steps on.
Stmts next_row(const GatherGeometry& g) {
  return set_regs({{"r_q", fmt::format("r_q + {}", lit(g.row_bits, 1))},
                   {"c0_q", "c0_n"},
                   {"c1_q", "c1_n"},
                   {"off_q", "off_n"},
                   {"gofs_q", "(diag_q & c0_wrap) ? gofs_n : gofs_q"},
                   {"rem_q", "rem_n"}});
}

// Next vector of the block, same chunk: the chunk's inner state again.
Stmts next_vector() {
  const std::string one16 = lit(kGatherCountBits, 1);
  return set_regs({{"mi_q", fmt::format("mi_q + {}", one16)},
                   {"m_q", fmt::format("m_q + {}", one16)},
                   {"outer_q", "outer_n"},
                   {"x_q", "x_n"},
                   {"iy0_q", "iy0_n"},
                   {"ix0_q", "ix0_n"},
                   {"c0_q", "c0s_q"},
                   {"c1_q", "c1s_q"},
                   {"off_q", "offs_q"},
                   {"gofs_q", lit(kGatherAddrBits, 0)},
                   {"rem_q", "rems_q"}});
}

// Next chunk of the block: the block's first vector again, the chunk's new inner state.
Stmts next_chunk() {
  const std::string z16 = lit(kGatherCountBits, 0), one16 = lit(kGatherCountBits, 1);
  return set_regs({{"mi_q", z16},
                   {"m_q", "m0_q"},
                   {"k_q", fmt::format("k_q + {}", one16)},
                   {"outer_q", "outs_q"},
                   {"x_q", "xs_q"},
                   {"iy0_q", "iy0s_q"},
                   {"ix0_q", "ix0s_q"},
                   {"c0_q", "nc_c0"},
                   {"c1_q", "nc_c1"},
                   {"off_q", "nc_off"},
                   {"gofs_q", lit(kGatherAddrBits, 0)},
                   {"rem_q", "rem_n"},
                   {"c0s_q", "nc_c0"},
                   {"c1s_q", "nc_c1"},
                   {"offs_q", "nc_off"},
                   {"rems_q", "rem_n"}});
}

// Next block: the vector after the block's last one, chunk 0.
Stmts next_block() {
  const std::string z16 = lit(kGatherCountBits, 0), one16 = lit(kGatherCountBits, 1);
  return cat(cat(set_regs({{"mi_q", z16},
                           {"k_q", z16},
                           {"m_q", fmt::format("m_q + {}", one16)},
                           {"m0_q", fmt::format("m_q + {}", one16)}}),
                 outer_set("outer_n", "x_n", "iy0_n", "ix0_n")),
             inner_init("rt_q", "kx0_q", "ky0_q"));
}

// Next batch item: its first vector at its base, chunk 0.
Stmts next_batch() {
  const std::string z16 = lit(kGatherCountBits, 0), one16 = lit(kGatherCountBits, 1);
  return cat(cat(set_regs({{"mi_q", z16},
                           {"k_q", z16},
                           {"m_q", z16},
                           {"m0_q", z16},
                           {"b_q", fmt::format("b_q + {}", one16)},
                           {"bb_q", "bb_n"}}),
                 outer_set("bb_n", z16, "iytop_q", "npad_q")),
             inner_init("rt_q", "kx0_q", "ky0_q"));
}

// An element taken: the next row, else (row 0) the next vector of the block, chunk, block or batch
// item, else the descriptor is finished.
Stmts advance(const GatherGeometry& g) {
  const Stmts finish = set_regs({{"busy_q", "1'b0"}, {"done_q", "1'b1"}});
  return {if_("~row_last", next_row(g),
              cat(set_regs({{"r_q", lit(g.row_bits, 0)}}),
                  {if_("~bvec_last", next_vector(),
                       {if_("~k_last", next_chunk(),
                            {if_("~m_last", next_block(), {if_("~b_last", next_batch(), finish)})})})}))};
}

// The walk's registers: a descriptor is loaded while idle, then every taken element advances the walk.
void build_walk_registers(Module& m, const GatherGeometry& g) {
  const Stmts reset = reset_registers(m);
  m.blank();
  m.always_ff_reset(reset, {nb("done_q", "1'b0"), if_("~busy_q", {if_("desc_valid_i", descriptor_load(g))},
                                                      {if_("elem_ready_i", advance(g))})});
}

// The outputs: the element presented while busy, its address and zero flag, its position and the
// last flags of the levels it ends.
void drive_outputs(Module& m) {
  m.blank();
  m.assign("desc_ready_o", "~busy_q");
  m.assign("elem_valid_o", "busy_q");
  m.assign("elem_addr_o", "outer_q + off_q");
  m.assign("elem_zero_o", "zero");
  m.assign("elem_row_o", "r_q");
  m.assign("elem_vec_o", "mi_q");
  m.assign("elem_chunk_o", "k_q");
  m.assign("elem_vec_last_o", "row_last");
  m.assign("elem_chunk_last_o", "row_last & bvec_last");
  m.assign("elem_last_o", "row_last & bvec_last & k_last & m_last & b_last");
  m.assign("busy_o", "busy_q");
  m.assign("done_o", "done_q");
}

}  // namespace

Module build_gather(const AccelConfig& cfg) {
  const GatherGeometry g = gather_geometry(cfg);
  Module m(kGatherModule, gather_description(g));
  declare_ports(m, g);
  declare_descriptor_registers(m);
  declare_loop_counters(m, g);
  declare_inner_state(m);
  declare_outer_state(m);
  m.blank();
  declare_loop_ends(m);
  declare_inner_step(m);
  declare_vector_step(m);
  declare_coordinates(m);

  build_loop_ends(m, g);
  build_inner_step(m);
  build_vector_step(m);
  build_padded_origin(m);
  build_zero_flag(m);
  build_walk_registers(m, g);
  drive_outputs(m);
  return m;
}

void emit_gather(const AccelConfig& cfg, Design& design) { design.add_module(build_gather(cfg)); }

}  // namespace capsgen::emit

#include "emit/gather.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <utility>
#include <vector>

#include "isa/gather.hpp"

namespace capsgen::emit {

int gather_row_bits(const AccelConfig& cfg) { return std::max(1, clog2(cfg.array.rows)); }

const std::vector<std::string>& gather_descriptor_fields() {
  static const std::vector<std::string> f = {"conv", "batch", "m_total", "m_block", "k_chunks", "r_total", "base",
                                             "s_b", "s_m", "s_k", "s_r", "groups", "group_rows", "s_g", "height",
                                             "width", "kernel_h", "kernel_w", "stride", "padding", "out_w", "pad_off",
                                             "ky_step", "c_step", "y_step", "kx0", "ky0", "band"};
  return f;
}

namespace {

// The descriptor's fields, ports desc_<field>_i in gather_descriptor_fields() order.
struct DescriptorPorts {
  Expr conv, batch, m_total, m_block, k_chunks, r_total, base, s_b, s_m, s_k, s_r, groups, group_rows, s_g, height,
      width, kernel_h, kernel_w, stride, padding, out_w, pad_off, ky_step, c_step, y_step, kx0, ky0, band;
};

DescriptorPorts declare_descriptor_fields(const DescriptorFieldDeclarer& field) {
  const int count_bits = kGatherCountBits, addr_bits = kGatherAddrBits, start_bits = isa::kGatherStartBits;
  return DescriptorPorts{
      field("conv", 1, "0: affine (diag when desc_groups_i > 1), 1: conv (im2col)"),
      field("batch", count_bits, "batch items"),
      field("m_total", count_bits, "vectors per batch item"),
      field("m_block", count_bits, "vectors per block"),
      field("k_chunks", count_bits, "chunks of rows reduction elements"),
      field("r_total", count_bits, "reduction length (diag: elements per group)"),
      field("base", addr_bits, "element address of element 0 (conv: of the map)"),
      field("s_b", addr_bits, "batch stride"),
      field("s_m", addr_bits, "vector stride (affine)"),
      field("s_k", addr_bits, "chunk stride (affine, not diag)"),
      field("s_r", addr_bits, "row stride (affine)"),
      field("groups", count_bits, "diag groups G (affine; <= 1: no groups)"),
      field("group_rows", count_bits, "diag: rows / G"),
      field("s_g", addr_bits, "diag: group stride, derived = r_total * s_r"),
      field("height", count_bits, "conv: map height"),
      field("width", count_bits, "conv: map width"),
      field("kernel_h", count_bits, "conv: kernel height (>= 1)"),
      field("kernel_w", count_bits, "conv: kernel width (>= 1)"),
      field("stride", count_bits, "conv: stride (>= 1)"),
      field("padding", count_bits, "conv: padding"),
      field("out_w", count_bits, "conv: output width (>= 1)"),
      field("pad_off", addr_bits, "conv, derived: -(pad_top*width + padding), pad_top = band ? 0 : padding"),
      field("ky_step", addr_bits, "conv, derived: width - (kernel_w - 1)"),
      field("c_step", addr_bits, "conv, derived: height*width - (kernel_h - 1)*width - (kernel_w - 1)"),
      field("y_step", addr_bits, "conv, derived: stride*width - (out_w - 1)*stride"),
      field("kx0", start_bits, "conv: window column of the first element (a part starting inside the window)"),
      field("ky0", start_bits, "conv: window row of the first element"),
      field("band", 1, "conv: the map is a band below the padded map's top (no zero rows above it)")};
}

}  // namespace

std::vector<Expr> declare_gather_descriptor_fields(const DescriptorFieldDeclarer& declare) {
  const DescriptorPorts d = declare_descriptor_fields(declare);
  return {d.conv,    d.batch,   d.m_total,  d.m_block,  d.k_chunks, d.r_total,    d.base,
          d.s_b,     d.s_m,     d.s_k,      d.s_r,      d.groups,   d.group_rows, d.s_g,
          d.height,  d.width,   d.kernel_h, d.kernel_w, d.stride,   d.padding,    d.out_w,
          d.pad_off, d.ky_step, d.c_step,   d.y_step,   d.kx0,      d.ky0,        d.band};
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
  const int addr_bits = kGatherAddrBits;
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
      g.rows, addr_bits, addr_bits);
}

// The unit's ports: the descriptor handshake and fields, then one element per cycle (valid/ready)
// with its address or zero flag, its position in the walk, and busy/done.
struct GatherPorts {
  Expr desc_valid_i, desc_ready_o;
  DescriptorPorts desc;
  Expr elem_valid_o, elem_ready_i, elem_addr_o, elem_zero_o, elem_row_o, elem_vec_o, elem_chunk_o, elem_vec_last_o,
      elem_chunk_last_o, elem_last_o, busy_o, done_o;
};

GatherPorts declare_ports(Module& m, const GatherGeometry& g) {
  const int count_bits = kGatherCountBits;
  m.clock_and_reset();
  return GatherPorts{
      m.input("desc_valid_i", 1, "descriptor valid"),
      m.output("desc_ready_o", 1, "idle: the descriptor is accepted"),
      declare_descriptor_fields([&m](const std::string& f, const Dim& width, const std::string& comment) {
        return m.input("desc_" + f + "_i", width, comment);
      }),
      m.output("elem_valid_o", 1, "an element is presented"),
      m.input("elem_ready_i", 1, "the element is taken"),
      m.output("elem_addr_o", kGatherAddrBits, "element address (meaningful when elem_zero_o is low)"),
      m.output("elem_zero_o", 1, "the element is zero (no read)"),
      m.output("elem_row_o", g.row_bits, "r: array row"),
      m.output("elem_vec_o", count_bits, "index of the vector within its block"),
      m.output("elem_chunk_o", count_bits, "k: chunk"),
      m.output("elem_vec_last_o", 1, "r == rows - 1"),
      m.output("elem_chunk_last_o", 1, "last element of the block's chunk"),
      m.output("elem_last_o", 1, "last element of the descriptor"),
      m.output("busy_o", 1, "a descriptor is being walked"),
      m.output("done_o", 1, "one-cycle pulse: the descriptor finished")};
}

// The descriptor's fields as the walk uses them: counts minus one, strides, conv geometry, the
// padded origin and the window start of a part.
struct DescriptorRegisters {
  Flop busy, done, conv, diag, batch_max, vectors_max, block_vectors_max, chunk_max, reduction_total;
  Flop batch_stride, vector_stride, chunk_stride, row_stride, group_stride, groups, group_row_max;
  Flop height, width, kernel_h_max, kernel_w_max, stride, out_w_max, neg_padding, first_origin_y, part_kx, part_ky;
  Flop ky_step, c_step, y_step;
  std::vector<Flop> flops;  // every flop above, in declaration order
};

DescriptorRegisters declare_descriptor_registers(Module& m) {
  FlopGroup group(m);
  const int count_bits = kGatherCountBits, addr_bits = kGatherAddrBits, coord_bits = kGatherCoordWidth;
  m.comment("Descriptor (loaded on accept).");
  return DescriptorRegisters{
      group.flop("busy", 1, "a descriptor is walked"),
      group.flop("done", 1, "done_o"),
      group.flop("conv", 1, "conv source (im2col walk)"),
      group.flop("diag", 1, "block-diagonal groups"),
      group.flop("batch_max", count_bits, "batch items - 1"),
      group.flop("vectors_max", count_bits, "vectors - 1"),
      group.flop("block_vectors_max", count_bits, "vectors per block - 1"),
      group.flop("chunk_max", count_bits, "chunks - 1"),
      group.flop("reduction_total", count_bits, "r_total"),
      group.flop("batch_stride", addr_bits),
      group.flop("vector_stride", addr_bits),
      group.flop("chunk_stride", addr_bits),
      group.flop("row_stride", addr_bits),
      group.flop("group_stride", addr_bits),
      group.flop("groups", count_bits, "diag groups"),
      group.flop("group_row_max", count_bits, "diag group_rows - 1"),
      group.flop("height", count_bits),
      group.flop("width", count_bits),
      group.flop("kernel_h_max", count_bits, "kernel rows - 1"),
      group.flop("kernel_w_max", count_bits, "kernel columns - 1"),
      group.flop("stride", count_bits),
      group.flop("out_w_max", count_bits, "output columns - 1"),
      group.flop("neg_padding", coord_bits, "-padding (two's complement)"),
      group.flop("first_origin_y", coord_bits,
                 "input row of the first output row's kernel origin: -padding, 0 for a band"),
      group.flop("part_kx", count_bits,
                 "conv: window column of each block's first element (0 unless a part starts inside the window)"),
      group.flop("part_ky", count_bits, "conv: window row of it"),
      group.flop("ky_step", addr_bits),
      group.flop("c_step", addr_bits),
      group.flop("y_step", addr_bits),
      group.flops()};
}

// The loop counters of the element presented: row r, vector within the block mi, vector m and the
// block's first vector m0, chunk k, batch item b.
struct LoopCounters {
  Flop row, block_vector, vector, block_start, chunk, batch;
  std::vector<Flop> flops;  // every flop above, in declaration order
};

LoopCounters declare_loop_counters(Module& m, const GatherGeometry& g) {
  FlopGroup group(m);
  const int count_bits = kGatherCountBits;
  m.comment("Loop counters of the element presented.");
  return LoopCounters{group.flop("row", g.row_bits),
                      group.flop("block_vector", count_bits),
                      group.flop("vector", count_bits),
                      group.flop("block_start", count_bits),
                      group.flop("chunk", count_bits),
                      group.flop("batch", count_bits),
                      group.flops()};
}

// The walk's state within a vector (conv c0 = kx, c1 = ky; diag c0 = element, c1 = group; the offset
// from the vector's address, the group's offset, the valid reduction elements left) and its copy at
// the start of the chunk (the chunk_* registers).
struct InnerState {
  Flop c0, c1, rows_left, chunk_c0, chunk_c1, chunk_rows_left, offset, chunk_offset, group_offset;
  std::vector<Flop> flops;  // every flop above, in declaration order
};

InnerState declare_inner_state(Module& m) {
  FlopGroup group(m);
  const int count_bits = kGatherCountBits, addr_bits = kGatherAddrBits;
  m.comment(
      "Inner state (within a vector): conv c0 = kx, c1 = ky; diag c0 = element, c1 = group; the\n"
      "offset from the vector's address; remaining valid reduction elements (saturating). chunk_*: the\n"
      "state at the start of the current chunk, restored for every vector of the block.");
  return InnerState{group.flop("c0", count_bits),          group.flop("c1", count_bits),
                    group.flop("rows_left", count_bits),   group.flop("chunk_c0", count_bits),
                    group.flop("chunk_c1", count_bits),    group.flop("chunk_rows_left", count_bits),
                    group.flop("offset", addr_bits),       group.flop("chunk_offset", addr_bits),
                    group.flop("group_offset", addr_bits), group.flops()};
}

// The walk's state of the vector (its address without the inner offset, conv x and the input
// coordinates of its kernel origin) and its copy at the start of the block, and the batch item's base.
struct OuterState {
  Flop vector_addr, block_vector_addr, batch_base, x, block_x, origin_y, origin_x, block_origin_y, block_origin_x;
  std::vector<Flop> flops;  // every flop above, in declaration order
};

OuterState declare_outer_state(Module& m) {
  FlopGroup group(m);
  const int count_bits = kGatherCountBits, addr_bits = kGatherAddrBits, coord_bits = kGatherCoordWidth;
  m.comment(
      "Outer state (the vector): its address without the inner offset, conv x and the input\n"
      "coordinates of its kernel origin iy0 = y*stride - padding (y*stride in a band), ix0 = x*stride -\n"
      "padding. block_*: the state at the start of the current block, restored for every chunk.\n"
      "batch_base_q: the batch item's base.");
  return OuterState{group.flop("vector_addr", addr_bits),     group.flop("block_vector_addr", addr_bits),
                    group.flop("batch_base", addr_bits),      group.flop("x", count_bits),
                    group.flop("block_x", count_bits),        group.flop("origin_y", coord_bits),
                    group.flop("origin_x", coord_bits),       group.flop("block_origin_y", coord_bits),
                    group.flop("block_origin_x", coord_bits), group.flops()};
}

// The last index of each loop level, and a descriptor without elements.
struct LoopEnds {
  Expr desc_empty, row_last, m_last, bvec_last, k_last, b_last;
};

LoopEnds declare_loop_ends(Module& m) {
  return LoopEnds{m.wire("desc_empty", 1, "a zero count: no element"),
                  m.wire("row_last", 1),
                  m.wire("m_last", 1),
                  m.wire("bvec_last", 1, "last vector of the block"),
                  m.wire("k_last", 1),
                  m.wire("b_last", 1)};
}

// The inner state of the next element of the vector, and of the start of the next chunk (nc_*).
struct InnerStep {
  Expr c0_wrap, c1_wrap, c0_n, c1_n, inc, off_n, gofs_n, rem_nz, rem_n, nc_c0, nc_c1, nc_off;
};

InnerStep declare_inner_step(Module& m) {
  const int count_bits = kGatherCountBits, addr_bits = kGatherAddrBits;
  return InnerStep{m.wire("c0_wrap", 1),
                   m.wire("c1_wrap", 1),
                   m.wire("c0_n", count_bits, "inner state of the next element of the vector"),
                   m.wire("c1_n", count_bits),
                   m.wire("inc", addr_bits),
                   m.wire("off_n", addr_bits),
                   m.wire("gofs_n", addr_bits),
                   m.wire("rem_nz", 1),
                   m.wire("rem_n", count_bits),
                   m.wire("nc_c0", count_bits, "inner state at the start of the next chunk"),
                   m.wire("nc_c1", count_bits),
                   m.wire("nc_off", addr_bits)};
}

// The outer state of the next vector and the next batch item's base.
struct VectorStep {
  Expr x_wrap, x_n, iy0_n, ix0_n, outer_n, bb_n;
};

VectorStep declare_vector_step(Module& m) {
  const int count_bits = kGatherCountBits, addr_bits = kGatherAddrBits, coord_bits = kGatherCoordWidth;
  return VectorStep{m.wire("x_wrap", 1),
                    m.wire("x_n", count_bits, "outer state of the next vector"),
                    m.wire("iy0_n", coord_bits),
                    m.wire("ix0_n", coord_bits),
                    m.wire("outer_n", addr_bits),
                    m.wire("bb_n", addr_bits)};
}

// The padded map's origin, the element's conv input coordinates and its zero flag.
struct Coordinates {
  Expr npad, iytop, iy, ix, zero;
};

Coordinates declare_coordinates(Module& m) {
  const int coord_bits = kGatherCoordWidth;
  return Coordinates{m.wire("npad", coord_bits), m.wire("iytop", coord_bits),
                     m.wire("iy", coord_bits, "conv input coordinates of the element"), m.wire("ix", coord_bits),
                     m.wire("zero", 1)};
}

// Every signal of the unit, in declaration order.
struct GatherSignals {
  GatherPorts port;
  DescriptorRegisters desc;
  LoopCounters loop;
  InnerState inner;
  OuterState outer;
  LoopEnds ends;
  InnerStep step;
  VectorStep next_vec;
  Coordinates coord;
};

GatherSignals declare_signals(Module& m, const GatherGeometry& g) {
  GatherPorts port = declare_ports(m, g);
  DescriptorRegisters desc = declare_descriptor_registers(m);
  LoopCounters loop = declare_loop_counters(m, g);
  InnerState inner = declare_inner_state(m);
  OuterState outer = declare_outer_state(m);
  m.blank();
  LoopEnds ends = declare_loop_ends(m);
  InnerStep step = declare_inner_step(m);
  VectorStep next_vec = declare_vector_step(m);
  Coordinates coord = declare_coordinates(m);
  return GatherSignals{port, desc, loop, inner, outer, ends, step, next_vec, coord};
}

// The last index of each loop level (a block ends at m_block vectors or at the last vector), and a
// descriptor with a zero count.
void build_loop_ends(Module& m, const GatherSignals& s, const GatherGeometry& g) {
  const DescriptorPorts& in = s.port.desc;
  const Expr count_zero = lit(kGatherCountBits, 0);
  m.blank();
  m.assign(s.ends.desc_empty, (in.batch == count_zero) | (in.m_total == count_zero) | (in.m_block == count_zero) |
                                  (in.k_chunks == count_zero));
  m.assign(s.ends.row_last, s.loop.row.q == lit(g.row_bits, g.rows - 1));
  m.assign(s.ends.m_last, s.loop.vector.q == s.desc.vectors_max.q);
  m.assign(s.ends.bvec_last, (s.loop.block_vector.q == s.desc.block_vectors_max.q) | s.ends.m_last);
  m.assign(s.ends.k_last, s.loop.chunk.q == s.desc.chunk_max.q);
  m.assign(s.ends.b_last, s.loop.batch.q == s.desc.batch_max.q);
}

// The next element of a vector: conv steps (kx, ky, c), the offset by 1, ky_step or c_step; diag steps
// (element, group), the group offset by s_g; affine steps r by s_r. rem counts the valid reduction
// elements down. The next chunk goes on from the element after the vector's last (conv), starts at
// offset 0 (diag) or s_k past the chunk's start (affine).
void build_inner_step(Module& m, const GatherSignals& s) {
  const DescriptorRegisters& desc = s.desc;
  const InnerState& in = s.inner;
  const InnerStep& step = s.step;
  const Expr count_zero = lit(kGatherCountBits, 0), count_one = lit(kGatherCountBits, 1);
  const Expr addr_zero = lit(kGatherAddrBits, 0), addr_one = lit(kGatherAddrBits, 1);
  m.comment("Inner step: conv (kx, ky, c) mixed-radix counter; diag (element, group); affine r.");
  m.assign(step.c0_wrap, ternary(desc.conv.q, in.c0.q == desc.kernel_w_max.q,
                                 paren(desc.diag.q & (in.c0.q == desc.group_row_max.q))));
  m.assign(step.c1_wrap, desc.conv.q & (in.c1.q == desc.kernel_h_max.q));
  m.assign(step.c0_n, ternary(step.c0_wrap, count_zero, in.c0.q + count_one));
  m.assign(step.c1_n, ternary(~step.c0_wrap, in.c1.q, ternary(step.c1_wrap, count_zero, in.c1.q + count_one)));
  m.assign(step.inc, ternary(~desc.conv.q, desc.row_stride.q,
                             ternary(~step.c0_wrap, addr_one, ternary(step.c1_wrap, desc.c_step.q, desc.ky_step.q))));
  m.assign(step.gofs_n, in.group_offset.q + desc.group_stride.q);
  m.assign(step.off_n, ternary(paren(desc.diag.q & step.c0_wrap), step.gofs_n, in.offset.q + step.inc));
  m.assign(step.rem_nz, in.rows_left.q != count_zero);
  m.assign(step.rem_n, in.rows_left.q - zext(step.rem_nz, kGatherCountBits));
  m.assign(step.nc_c0, ternary(desc.conv.q, step.c0_n, count_zero));
  m.assign(step.nc_c1, ternary(desc.conv.q, step.c1_n, count_zero));
  m.assign(step.nc_off,
           ternary(desc.conv.q, step.off_n, ternary(desc.diag.q, addr_zero, in.chunk_offset.q + desc.chunk_stride.q)));
}

// The next vector: conv steps x (wrapping to the next output row) and the kernel origin's input
// coordinates, the vector address by stride or y_step; affine by s_m. The next batch item's base is
// s_b further.
void build_vector_step(Module& m, const GatherSignals& s) {
  const DescriptorRegisters& desc = s.desc;
  const OuterState& out = s.outer;
  const VectorStep& next = s.next_vec;
  const Expr stride_coord = zext(desc.stride.q, kGatherCoordWidth);
  m.comment("Vector step: conv (x, y) with the kernel origin's input coordinates; affine m.");
  m.assign(next.x_wrap, out.x.q == desc.out_w_max.q);
  m.assign(next.x_n, ternary(next.x_wrap, lit(kGatherCountBits, 0), out.x.q + lit(kGatherCountBits, 1)));
  m.assign(next.ix0_n, ternary(next.x_wrap, desc.neg_padding.q, out.origin_x.q + stride_coord));
  m.assign(next.iy0_n, ternary(next.x_wrap, out.origin_y.q + stride_coord, out.origin_y.q));
  m.assign(next.outer_n,
           out.vector_addr.q + ternary(~desc.conv.q, desc.vector_stride.q,
                                       ternary(next.x_wrap, desc.y_step.q, zext(desc.stride.q, kGatherAddrBits))));
  m.assign(next.bb_n, out.batch_base.q + desc.batch_stride.q);
}

// The padded map's origin from the descriptor: the first input column -padding, the first input row
// -padding or, in a band, 0.
void build_padded_origin(Module& m, const GatherSignals& s) {
  const Expr coord_zero = lit(kGatherCoordWidth, 0);
  m.assign(s.coord.npad, coord_zero - zext(s.port.desc.padding, kGatherCoordWidth));
  m.assign(s.coord.iytop, ternary(s.port.desc.band, coord_zero, s.coord.npad));
}

// The element's zero flag: conv, outside the reduction or the map; diag, outside the groups or
// r_total; affine, outside the reduction.
void build_zero_flag(Module& m, const GatherSignals& s) {
  const DescriptorRegisters& desc = s.desc;
  const Coordinates& coord = s.coord;
  const Expr outside_reduction = ~s.step.rem_nz;
  m.comment("Zero flag. A negative coordinate is >= 2^(W-1) unsigned, above any 16-bit height/width.");
  m.assign(coord.iy, s.outer.origin_y.q + zext(s.inner.c1.q, kGatherCoordWidth));
  m.assign(coord.ix, s.outer.origin_x.q + zext(s.inner.c0.q, kGatherCoordWidth));
  const Expr conv_zero = outside_reduction | (coord.iy >= zext(desc.height.q, kGatherCoordWidth)) |
                         (coord.ix >= zext(desc.width.q, kGatherCoordWidth));
  const Expr diag_zero = (s.inner.c1.q >= desc.groups.q) | (s.inner.c0.q >= desc.reduction_total.q);
  m.assign(coord.zero,
           ternary(desc.conv.q, paren(conv_zero), ternary(desc.diag.q, paren(diag_zero), outside_reduction)));
}

// Next-state assignments `d = value`, in the order given.
Stmts load(const std::vector<std::pair<Expr, Expr>>& targets) {
  Stmts out;
  for (const auto& [next, value] : targets) out.push_back(blk(next, value));
  return out;
}

Stmts joined(Stmts a, const Stmts& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Inner state (and its chunk-start copy) at the start of a block: the counters at (kx0, ky0), the
// offset 0 (the base points at that element); rem from `r_total`.
Stmts inner_init(const InnerState& in, const Expr& r_total, const Expr& kx0, const Expr& ky0) {
  const Expr addr_zero = lit(kGatherAddrBits, 0);
  return load({{in.c0.d, kx0},
               {in.c1.d, ky0},
               {in.offset.d, addr_zero},
               {in.group_offset.d, addr_zero},
               {in.rows_left.d, r_total},
               {in.chunk_c0.d, kx0},
               {in.chunk_c1.d, ky0},
               {in.chunk_offset.d, addr_zero},
               {in.chunk_rows_left.d, r_total}});
}

// Outer state (and its block-start copy).
Stmts outer_set(const OuterState& out, const Expr& outer, const Expr& x, const Expr& iy0, const Expr& ix0) {
  return load({{out.vector_addr.d, outer},
               {out.block_vector_addr.d, outer},
               {out.x.d, x},
               {out.block_x.d, x},
               {out.origin_y.d, iy0},
               {out.block_origin_y.d, iy0},
               {out.origin_x.d, ix0},
               {out.block_origin_x.d, ix0}});
}

// An accepted descriptor's fields: counts as count - 1, strides, conv geometry, the padded origin,
// the window start of a part (conv) and the batch base (conv: moved by pad_off to the padded map's
// origin).
Stmts descriptor_fields(const GatherSignals& s, const Expr& kx0, const Expr& ky0, const Expr& base) {
  const DescriptorPorts& in = s.port.desc;
  const DescriptorRegisters& desc = s.desc;
  const Expr count_one = lit(kGatherCountBits, 1);
  return load({{desc.busy.d, ~s.ends.desc_empty},
               {desc.done.d, s.ends.desc_empty},
               {desc.conv.d, in.conv},
               {desc.diag.d, ~in.conv & (in.groups > count_one)},
               {desc.batch_max.d, in.batch - count_one},
               {desc.vectors_max.d, in.m_total - count_one},
               {desc.block_vectors_max.d, in.m_block - count_one},
               {desc.chunk_max.d, in.k_chunks - count_one},
               {desc.reduction_total.d, in.r_total},
               {desc.batch_stride.d, in.s_b},
               {desc.vector_stride.d, in.s_m},
               {desc.chunk_stride.d, in.s_k},
               {desc.row_stride.d, in.s_r},
               {desc.group_stride.d, in.s_g},
               {desc.groups.d, in.groups},
               {desc.group_row_max.d, in.group_rows - count_one},
               {desc.height.d, in.height},
               {desc.width.d, in.width},
               {desc.kernel_h_max.d, in.kernel_h - count_one},
               {desc.kernel_w_max.d, in.kernel_w - count_one},
               {desc.stride.d, in.stride},
               {desc.out_w_max.d, in.out_w - count_one},
               {desc.neg_padding.d, s.coord.npad},
               {desc.first_origin_y.d, s.coord.iytop},
               {desc.ky_step.d, in.ky_step},
               {desc.c_step.d, in.c_step},
               {desc.y_step.d, in.y_step},
               {desc.part_kx.d, kx0},
               {desc.part_ky.d, ky0},
               {s.outer.batch_base.d, base}});
}

// An accepted descriptor: its fields, the loop counters at 0, the inner state at the part's window
// start (conv) and the outer state at the first vector, at the base.
Stmts descriptor_load(const GatherSignals& s, const GatherGeometry& g) {
  const DescriptorPorts& in = s.port.desc;
  const LoopCounters& loop = s.loop;
  const Expr count_zero = lit(kGatherCountBits, 0);
  const Expr kx0 = ternary(in.conv, zext(in.kx0, kGatherCountBits), count_zero);
  const Expr ky0 = ternary(in.conv, zext(in.ky0, kGatherCountBits), count_zero);
  const Expr base = in.base + ternary(in.conv, in.pad_off, lit(kGatherAddrBits, 0));
  const Stmts counters = load({{loop.row.d, lit(g.row_bits, 0)},
                               {loop.block_vector.d, count_zero},
                               {loop.vector.d, count_zero},
                               {loop.block_start.d, count_zero},
                               {loop.chunk.d, count_zero},
                               {loop.batch.d, count_zero}});
  return joined(
      joined(joined(descriptor_fields(s, kx0, ky0, base), counters), inner_init(s.inner, in.r_total, kx0, ky0)),
      outer_set(s.outer, base, count_zero, s.coord.iytop, s.coord.npad));
}

// Next row of the vector: the inner state steps on.
Stmts next_row(const GatherSignals& s, const GatherGeometry& g) {
  const InnerState& in = s.inner;
  const InnerStep& step = s.step;
  return load({{s.loop.row.d, s.loop.row.q + lit(g.row_bits, 1)},
               {in.c0.d, step.c0_n},
               {in.c1.d, step.c1_n},
               {in.offset.d, step.off_n},
               {in.group_offset.d, ternary(paren(s.desc.diag.q & step.c0_wrap), step.gofs_n, in.group_offset.q)},
               {in.rows_left.d, step.rem_n}});
}

// Next vector of the block, same chunk: the chunk's inner state again.
Stmts next_vector(const GatherSignals& s) {
  const LoopCounters& loop = s.loop;
  const InnerState& in = s.inner;
  const Expr count_one = lit(kGatherCountBits, 1);
  return load({{loop.block_vector.d, loop.block_vector.q + count_one},
               {loop.vector.d, loop.vector.q + count_one},
               {s.outer.vector_addr.d, s.next_vec.outer_n},
               {s.outer.x.d, s.next_vec.x_n},
               {s.outer.origin_y.d, s.next_vec.iy0_n},
               {s.outer.origin_x.d, s.next_vec.ix0_n},
               {in.c0.d, in.chunk_c0.q},
               {in.c1.d, in.chunk_c1.q},
               {in.offset.d, in.chunk_offset.q},
               {in.group_offset.d, lit(kGatherAddrBits, 0)},
               {in.rows_left.d, in.chunk_rows_left.q}});
}

// Next chunk of the block: the block's first vector again, the chunk's new inner state.
Stmts next_chunk(const GatherSignals& s) {
  const LoopCounters& loop = s.loop;
  const InnerState& in = s.inner;
  const OuterState& out = s.outer;
  const InnerStep& step = s.step;
  return load({{loop.block_vector.d, lit(kGatherCountBits, 0)},
               {loop.vector.d, loop.block_start.q},
               {loop.chunk.d, loop.chunk.q + lit(kGatherCountBits, 1)},
               {out.vector_addr.d, out.block_vector_addr.q},
               {out.x.d, out.block_x.q},
               {out.origin_y.d, out.block_origin_y.q},
               {out.origin_x.d, out.block_origin_x.q},
               {in.c0.d, step.nc_c0},
               {in.c1.d, step.nc_c1},
               {in.offset.d, step.nc_off},
               {in.group_offset.d, lit(kGatherAddrBits, 0)},
               {in.rows_left.d, step.rem_n},
               {in.chunk_c0.d, step.nc_c0},
               {in.chunk_c1.d, step.nc_c1},
               {in.chunk_offset.d, step.nc_off},
               {in.chunk_rows_left.d, step.rem_n}});
}

// Next block: the vector after the block's last one, chunk 0.
Stmts next_block(const GatherSignals& s) {
  const LoopCounters& loop = s.loop;
  const VectorStep& next = s.next_vec;
  const Expr count_zero = lit(kGatherCountBits, 0), count_one = lit(kGatherCountBits, 1);
  return joined(joined(load({{loop.block_vector.d, count_zero},
                             {loop.chunk.d, count_zero},
                             {loop.vector.d, loop.vector.q + count_one},
                             {loop.block_start.d, loop.vector.q + count_one}}),
                       outer_set(s.outer, next.outer_n, next.x_n, next.iy0_n, next.ix0_n)),
                inner_init(s.inner, s.desc.reduction_total.q, s.desc.part_kx.q, s.desc.part_ky.q));
}

// Next batch item: its first vector at its base, chunk 0.
Stmts next_batch(const GatherSignals& s) {
  const LoopCounters& loop = s.loop;
  const Expr count_zero = lit(kGatherCountBits, 0);
  return joined(joined(load({{loop.block_vector.d, count_zero},
                             {loop.chunk.d, count_zero},
                             {loop.vector.d, count_zero},
                             {loop.block_start.d, count_zero},
                             {loop.batch.d, loop.batch.q + lit(kGatherCountBits, 1)},
                             {s.outer.batch_base.d, s.next_vec.bb_n}}),
                       outer_set(s.outer, s.next_vec.bb_n, count_zero, s.desc.first_origin_y.q, s.desc.neg_padding.q)),
                inner_init(s.inner, s.desc.reduction_total.q, s.desc.part_kx.q, s.desc.part_ky.q));
}

// An element taken: the next row, else (row 0) the next vector of the block, chunk, block or batch
// item, else the descriptor is finished.
Stmts advance(const GatherSignals& s, const GatherGeometry& g) {
  const LoopEnds& ends = s.ends;
  const Stmts finish = load({{s.desc.busy.d, bit(false)}, {s.desc.done.d, bit(true)}});
  return {if_(~ends.row_last, next_row(s, g),
              joined(load({{s.loop.row.d, lit(g.row_bits, 0)}}),
                     {if_(~ends.bvec_last, next_vector(s),
                          {if_(~ends.k_last, next_chunk(s),
                               {if_(~ends.m_last, next_block(s), {if_(~ends.b_last, next_batch(s), finish)})})})}))};
}

// The walk's registers: a descriptor is loaded while idle, then every taken element advances the walk.
void build_walk_registers(Module& m, const GatherSignals& s, const GatherGeometry& g) {
  std::vector<Flop> flops = s.desc.flops;
  for (const std::vector<Flop>* part : {&s.loop.flops, &s.inner.flops, &s.outer.flops})
    flops.insert(flops.end(), part->begin(), part->end());
  Stmts next = hold_flops(flops);
  next.push_back(blk(s.desc.done.d, bit(false)));
  next.push_back(if_(~s.desc.busy.q, {if_(s.port.desc_valid_i, descriptor_load(s, g))},
                     {if_(s.port.elem_ready_i, advance(s, g))}));
  m.blank();
  m.comment("Next state.");
  m.always_comb(std::move(next));
  m.always_ff_flops(flops);
}

// The outputs: the element presented while busy, its address and zero flag, its position and the
// last flags of the levels it ends.
void drive_outputs(Module& m, const GatherSignals& s) {
  const GatherPorts& port = s.port;
  const LoopEnds& ends = s.ends;
  m.blank();
  m.assign(port.desc_ready_o, ~s.desc.busy.q);
  m.assign(port.elem_valid_o, s.desc.busy.q);
  m.assign(port.elem_addr_o, s.outer.vector_addr.q + s.inner.offset.q);
  m.assign(port.elem_zero_o, s.coord.zero);
  m.assign(port.elem_row_o, s.loop.row.q);
  m.assign(port.elem_vec_o, s.loop.block_vector.q);
  m.assign(port.elem_chunk_o, s.loop.chunk.q);
  m.assign(port.elem_vec_last_o, ends.row_last);
  m.assign(port.elem_chunk_last_o, ends.row_last & ends.bvec_last);
  m.assign(port.elem_last_o, ends.row_last & ends.bvec_last & ends.k_last & ends.m_last & ends.b_last);
  m.assign(port.busy_o, s.desc.busy.q);
  m.assign(port.done_o, s.desc.done.q);
}

}  // namespace

Module build_gather(const AccelConfig& cfg) {
  const GatherGeometry g = gather_geometry(cfg);
  Module m(kGatherModule, gather_description(g));
  const GatherSignals s = declare_signals(m, g);
  build_loop_ends(m, s, g);
  build_inner_step(m, s);
  build_vector_step(m, s);
  build_padded_origin(m, s);
  build_zero_flag(m, s);
  build_walk_registers(m, s, g);
  drive_outputs(m, s);
  return m;
}

void emit_gather(const AccelConfig& cfg, Design& design) { design.add_module(build_gather(cfg)); }

}  // namespace capsgen::emit

#include "emit/engine.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "emit/accumulator.hpp"
#include "emit/activation.hpp"
#include "emit/activation_internal.hpp"
#include "emit/gather.hpp"
#include "emit/staging.hpp"
#include "emit/systolic_array.hpp"
#include "isa/engine_descriptor.hpp"

namespace capsgen::emit {

namespace {

constexpr int kCountBits = kGatherCountBits;  // a descriptor's counts (batch items, vectors, tiles, ...)
constexpr int kAddrBits = kGatherAddrBits;    // element addresses and strides
constexpr int kVectorCountBits = 32;          // an Activate's vectors (a Fill's elements)

// The descriptor kind `kind` (isa::kEngineKind*) as a constant of the kind field's width.
Expr kind_code(std::uint8_t kind) { return lit(isa::kEngineKindBits, kind); }

// a + b >= c on unsigned counts, one bit wider so that the sum cannot overflow:
// `({1'b0, a} + {1'b0, b} >= {1'b0, c})`.
Expr sum_at_least(const Expr& a, const Expr& b, const Expr& c) {
  return paren(bare(cat({bit(false), a}) + cat({bit(false), b})) >= cat({bit(false), c}));
}

}  // namespace

// ---- Weight tile reader ------------------------------------------------------------------------

namespace {

// The array the tile reader loads.
struct TileGeometry {
  int rows = 0, cols = 0, weight_bits = 0;
  int row_index_bits = 0, col_index_bits = 0;  // a row (< rows) and a column (< cols) index, >= 1 bit
};

TileGeometry tile_geometry(const AccelConfig& cfg) {
  TileGeometry g;
  g.rows = cfg.array.rows;
  g.cols = cfg.array.cols;
  g.weight_bits = cfg.widths.weight;
  g.row_index_bits = std::max(1, clog2(g.rows));
  g.col_index_bits = std::max(1, clog2(g.cols));
  return g;
}

std::string tile_reader_description(const TileGeometry& g) {
  return fmt::format(
      "Weight tile reader (docs/rtl-engine.md) for a {0}x{1} array: loads the stationary tiles of one Gemm\n"
      "in the order the streamer uses them (for b, for each block, for k < k_chunks, for n < n_tiles: tile\n"
      "(b, k, n); every block reloads its tiles), one tile row per cycle, bottom row first (the array's\n"
      "load order). Row r of tile (b, k, n) is one read of {1} consecutive elements at\n"
      "  base + b*s_b + k*s_k + n*s_n + r*s_r        (tile-major layout, isa::Region::tile_rows)\n"
      "with rows k*{0} + r >= r_total skipped (zeros, no read) and columns n*{1} + c >= n_total zeroed.\n"
      "Diag tiles (block-diagonal, desc_diag_i): row r = group g = r / group_rows, element e = r % group_rows\n"
      "holds only column g: the element at base + b*s_b + e*s_r (lane 0 of the read), zero when\n"
      "e >= r_total or g >= n_total. rd_data_i arrives one cycle after rd_en_o; the row is presented to\n"
      "the array in that cycle (weight_o, weight_load_o). The first row of a tile is read in the cycle the\n"
      "tile may begin (combinationally from tile_start_i), so a tile of at least {0} vectors hides the next\n"
      "tile's load completely.\n"
      "Flow control (the array's rules, docs/rtl-datapath.md): a tile is loaded only after the previous one\n"
      "was started (tile_start_i: the streamer sends the tile's first vector to the staging read, so the\n"
      "swap reaches the array one cycle later, never before the new tile's first load); tile_ready_o\n"
      "says the whole tile is in the array's Weight1 registers and not yet started.",
      g.rows, g.cols);
}

// The tile reader's ports: the descriptor, the weight memory's read port, the array's load port.
struct TileReaderPorts {
  Expr start_i, desc_batch_i, desc_m_total_i, desc_m_block_i, desc_k_chunks_i, desc_n_tiles_i, desc_r_total_i,
      desc_n_total_i, desc_base_i, desc_s_b_i, desc_s_k_i, desc_s_n_i, desc_s_r_i, desc_strided_i, desc_s_c_i,
      desc_top_i, desc_diag_i, desc_group_rows_i, desc_gtop_i, desc_etop_i, desc_dtop_i, desc_dwrap_i;
  Expr rd_en_o, rd_addr_o, rd_data_i, weight_o, weight_load_o, tile_start_i, tile_ready_o, busy_o;
};

TileReaderPorts declare_tile_reader_ports(Module& m, const TileGeometry& g) {
  const int count = kCountBits, addr = kAddrBits, tile_row_bits = g.cols * g.weight_bits;
  m.clock_and_reset();
  return TileReaderPorts{m.input("start_i", 1, "load the descriptor and start (only while idle)"),
                         m.input("desc_batch_i", count, "batch items"),
                         m.input("desc_m_total_i", count, "vectors per batch item"),
                         m.input("desc_m_block_i", count, "vectors per block"),
                         m.input("desc_k_chunks_i", count, "chunks"),
                         m.input("desc_n_tiles_i", count, "tiles per chunk"),
                         m.input("desc_r_total_i", count, "reduction length (diag: elements per group)"),
                         m.input("desc_n_total_i", count, "output columns"),
                         m.input("desc_base_i", addr, "tile (0, 0, 0) row 0"),
                         m.input("desc_s_b_i", addr, "batch stride"),
                         m.input("desc_s_k_i", addr, "chunk stride"),
                         m.input("desc_s_n_i", addr, "tile stride"),
                         m.input("desc_s_r_i", addr, "row stride"),
                         m.input("desc_strided_i", 1, "rows are not contiguous: read column by column"),
                         m.input("desc_s_c_i", addr, "strided: column stride"),
                         m.input("desc_top_i", addr, fmt::format("derived: {} * s_r (bottom row)", g.rows - 1)),
                         m.input("desc_diag_i", 1, "block-diagonal tiles"),
                         m.input("desc_group_rows_i", count, "diag: rows per group (>= 1)"),
                         m.input("desc_gtop_i", count, fmt::format("diag, derived: {} / group_rows", g.rows - 1)),
                         m.input("desc_etop_i", count, fmt::format("diag, derived: {} % group_rows", g.rows - 1)),
                         m.input("desc_dtop_i", addr, "diag, derived: etop * s_r"),
                         m.input("desc_dwrap_i", addr, "diag, derived: (group_rows - 1) * s_r"),
                         m.output("rd_en_o", 1, "read one tile row"),
                         m.output("rd_addr_o", addr, "element address of the row's column 0"),
                         m.input("rd_data_i", tile_row_bits,
                                 fmt::format("the {} elements from rd_addr_o on, one cycle after rd_en_o", g.cols)),
                         m.output("weight_o", tile_row_bits, "tile row for the array (column c in bits [c*W +: W])"),
                         m.output("weight_load_o", 1, "weight_o is the next tile row"),
                         m.input("tile_start_i", 1, "the streamer starts the loaded tile"),
                         m.output("tile_ready_o", 1, "a loaded tile waits to be started"),
                         m.output("busy_o", 1, "tiles left to load")};
}

// The descriptor as the tile reader keeps it: counts minus one where a loop compares with its last
// index (`*_max`), the strides, and the derived offsets of a tile's first row read (row rows-1).
struct TileDescriptor {
  Flop batch_max, vectors_total, block_vectors, chunk_max, tile_max, reduction_total, columns_total;
  Flop group_row_max, first_group, first_element;
  Flop batch_stride, chunk_stride, tile_stride, row_stride, column_stride;
  Flop first_row_offset, diag_first_offset, diag_group_wrap;
  Flop diag, strided;
  std::vector<Flop> flops;  // every flop above, in declaration order
};

TileDescriptor declare_tile_descriptor(Module& m, const TileGeometry& g) {
  FlopGroup group(m);
  const int count = kCountBits, addr = kAddrBits;
  m.comment("Descriptor.");
  return TileDescriptor{
      group.flop("batch_max", count, "batch items - 1"),
      group.flop("vectors_total", count, "vectors per batch item"),
      group.flop("block_vectors", count, "vectors per block"),
      group.flop("chunk_max", count, "chunks - 1"),
      group.flop("tile_max", count, "tiles per chunk - 1"),
      group.flop("reduction_total", count, "reduction length (diag: elements per group)"),
      group.flop("columns_total", count, "output columns"),
      group.flop("group_row_max", count, "diag: rows per group - 1"),
      group.flop("first_group", count, fmt::format("diag: group of row {}, the first read", g.rows - 1)),
      group.flop("first_element", count, "diag: its element within the group"),
      group.flop("batch_stride", addr),
      group.flop("chunk_stride", addr),
      group.flop("tile_stride", addr),
      group.flop("row_stride", addr),
      group.flop("column_stride", addr, "strided rows: from one column to the next"),
      group.flop("first_row_offset", addr, fmt::format("{} * row stride: the first row read", g.rows - 1)),
      group.flop("diag_first_offset", addr, "diag: first_element * row stride"),
      group.flop("diag_group_wrap", addr, "diag: (group rows - 1) * row stride"),
      group.flop("diag", 1, "block-diagonal tiles"),
      group.flop("strided", 1, "rows read column by column"),
      group.flops()};
}

// The reader's state, its tile loops (tile innermost, then chunk, then block and batch item) with
// their offsets, and the row walker (the row, diag group and element, strided column and address of
// the next read).
struct TileLoops {
  Flop busy, loading, held;
  Flop tile, chunk, batch, block_start, rows_left, lanes_left;
  Flop batch_base, chunk_offset, tile_offset, tile_first_addr, row_addr;
  Flop row, group, element, column, column_addr;
  Memory row_buffer_q;
  std::vector<Flop> flops;  // every flop above, in declaration order
};

TileLoops declare_tile_loops(Module& m, const TileGeometry& g) {
  FlopGroup group(m);
  const int count = kCountBits, addr = kAddrBits;
  m.comment("State.");
  Flop busy = group.flop("busy", 1, "tiles left to load");
  Flop loading = group.flop("loading", 1, "reading a tile's rows after its first");
  Flop held = group.flop("held", 1, "a tile loaded (or loading) and not yet started");
  m.comment(
      "Tile loops and offsets. tile_first_addr_q is the address of the next tile's first row read, kept\n"
      "ready so that the read can go out in the cycle the previous tile starts (the load then ends in time\n"
      "for a swap every rows cycles).");
  return TileLoops{busy,
                   loading,
                   held,
                   group.flop("tile", count, "tile n within the chunk"),
                   group.flop("chunk", count, "chunk k"),
                   group.flop("batch", count, "batch item b"),
                   group.flop("block_start", count, "first vector of the block"),
                   group.flop("rows_left", count, fmt::format("reduction_total - k*{}, floored at 0", g.rows)),
                   group.flop("lanes_left", count, fmt::format("columns_total - n*{}, floored at 0", g.cols)),
                   group.flop("batch_base", addr, "tile (b, 0, 0) row 0"),
                   group.flop("chunk_offset", addr, "k * chunk stride"),
                   group.flop("tile_offset", addr, "n * tile stride"),
                   group.flop("tile_first_addr", addr),
                   group.flop("row_addr", addr, "address of row row_q"),
                   group.flop("row", g.row_index_bits, "next row to read"),
                   group.flop("group", count, "diag: group of row row_q"),
                   group.flop("element", count, "diag: element of row row_q within its group"),
                   group.flop("column", g.col_index_bits, "strided: next column of the row"),
                   group.flop("column_addr", addr, "strided: its address"),
                   m.memory("row_buffer_q", g.weight_bits, g.cols, "strided: the columns of the row read so far"),
                   group.flops()};
}

// The row (strided: the column) read in the previous cycle, on its way to the array.
struct TileRowOut {
  Flop valid;
  Expr read_q, diag_q, strided_q, lanes_q, group_q, column_q;
};

TileRowOut declare_tile_row_out(Module& m, const TileGeometry& g) {
  m.comment("The row (strided: the column) read in the previous cycle.");
  return TileRowOut{m.flop("out_valid", 1, "a whole row goes to the array this cycle"),
                    m.reg("out_read_q", 1, "a read went out"),
                    m.reg("out_diag_q", 1),
                    m.reg("out_strided_q", 1),
                    m.reg("out_lanes_q", kCountBits, "lanes_left of the read"),
                    m.reg("out_group_q", kCountBits, "diag: the read row's group"),
                    m.reg("out_column_q", g.col_index_bits, "strided: the column read")};
}

// The address walker's and the tile loops' combinational signals.
struct TileWalkerWires {
  Expr begin_tile, row_handled, cur_row, cur_group, cur_element, cur_row_addr, cur_column, cur_column_addr;
  Expr row_done, row_ok, last_row, last_block, final_tile, tile_wrap, chunk_wrap;
  Expr tile_offset_next, chunk_offset_next, batch_base_next;
};

TileWalkerWires declare_tile_walker_wires(Module& m, const TileGeometry& g) {
  const int count = kCountBits, addr = kAddrBits;
  return TileWalkerWires{m.wire("begin_tile", 1, "the next tile's first row is read this cycle"),
                         m.wire("row_handled", 1, "a tile row is handled this cycle (read, or zeros)"),
                         m.wire("cur_row", g.row_index_bits, "its row"),
                         m.wire("cur_group", count),
                         m.wire("cur_element", count),
                         m.wire("cur_row_addr", addr),
                         m.wire("cur_column", g.col_index_bits, "strided: column read this cycle"),
                         m.wire("cur_column_addr", addr, "strided: its address"),
                         m.wire("row_done", 1, "the row's last read (every row but a strided one: its only one)"),
                         m.wire("row_ok", 1, "the row holds elements (else zeros, no read)"),
                         m.wire("last_row", 1, "row 0, the tile's last read"),
                         m.wire("last_block", 1),
                         m.wire("final_tile", 1, "the descriptor's last tile"),
                         m.wire("tile_wrap", 1, "the chunk's last tile"),
                         m.wire("chunk_wrap", 1, "the last chunk"),
                         m.wire("tile_offset_next", addr),
                         m.wire("chunk_offset_next", addr),
                         m.wire("batch_base_next", addr)};
}

// Every signal of the tile reader.
struct TileReader {
  TileGeometry geometry;
  TileReaderPorts port;
  TileDescriptor desc;
  TileLoops loop;
  TileRowOut out;
  TileWalkerWires walk;
};

// The address walker: which row (group, element, column) is read this cycle and where, whether the
// row holds elements, and where the tile loops go after the tile's last row.
void build_tile_address_walker(Module& m, const TileReader& t) {
  const TileGeometry& g = t.geometry;
  const TileReaderPorts& p = t.port;
  const TileDescriptor& d = t.desc;
  const TileLoops& loop = t.loop;
  const TileWalkerWires& w = t.walk;
  const Expr first_column = lit(g.col_index_bits, 0), zero_addr = lit(kAddrBits, 0);
  const Expr loading = loop.loading.q;
  m.assign(w.begin_tile, loop.busy.q & ~loading & (~loop.held.q | p.tile_start_i));
  m.assign(w.row_handled, w.begin_tile | loading);
  m.assign(w.cur_row, ternary(loading, loop.row.q, lit(g.row_index_bits, g.rows - 1)));
  m.assign(w.cur_group, ternary(loading, loop.group.q, d.first_group.q));
  m.assign(w.cur_element, ternary(loading, loop.element.q, d.first_element.q));
  m.assign(w.cur_row_addr, ternary(loading, loop.row_addr.q, loop.tile_first_addr.q));
  m.assign(w.cur_column, ternary(loading, loop.column.q, first_column));
  m.assign(w.cur_column_addr, ternary(w.cur_column == first_column, w.cur_row_addr, loop.column_addr.q));
  m.assign(w.row_ok, ternary(d.diag.q,
                             paren((w.cur_element < d.reduction_total.q) & (w.cur_group < d.columns_total.q) &
                                   (w.cur_group < lit(kCountBits, g.cols))),
                             zext(w.cur_row, kCountBits) < loop.rows_left.q));
  m.assign(w.last_row, w.cur_row == lit(g.row_index_bits, 0));
  m.assign(w.last_block, sum_at_least(loop.block_start.q, d.block_vectors.q, d.vectors_total.q));
  m.assign(w.tile_wrap, loop.tile.q == d.tile_max.q);
  m.assign(w.chunk_wrap, loop.chunk.q == d.chunk_max.q);
  m.assign(w.final_tile, w.tile_wrap & w.chunk_wrap & w.last_block & (loop.batch.q == d.batch_max.q));
  m.assign(w.tile_offset_next, ternary(w.tile_wrap, zero_addr, loop.tile_offset.q + d.tile_stride.q));
  m.assign(w.chunk_offset_next,
           ternary(w.tile_wrap, ternary(w.chunk_wrap, zero_addr, loop.chunk_offset.q + d.chunk_stride.q),
                   loop.chunk_offset.q));
  m.assign(w.batch_base_next, ternary(paren(w.tile_wrap & w.chunk_wrap & w.last_block),
                                      loop.batch_base.q + d.batch_stride.q, loop.batch_base.q));
  m.assign(w.row_done, ~d.strided.q | d.diag.q | ~w.row_ok | (w.cur_column == lit(g.col_index_bits, g.cols - 1)) |
                           (bare(zext(w.cur_column, kCountBits) + lit(kCountBits, 1)) >= loop.lanes_left.q));
  m.assign(p.rd_en_o, w.row_handled & w.row_ok);
  m.assign(p.rd_addr_o, ternary(paren(d.strided.q & ~d.diag.q), w.cur_column_addr, w.cur_row_addr));
}

// start_i: the descriptor and the loops' first tile.
Stmts tile_descriptor_load(const TileReader& t) {
  const TileReaderPorts& p = t.port;
  const TileDescriptor& d = t.desc;
  const TileLoops& loop = t.loop;
  const Expr one = lit(kCountBits, 1), zero_count = lit(kCountBits, 0), zero_addr = lit(kAddrBits, 0);
  return {
      blk(d.batch_max.d, p.desc_batch_i - one),
      blk(d.vectors_total.d, p.desc_m_total_i),
      blk(d.block_vectors.d, p.desc_m_block_i),
      blk(d.chunk_max.d, p.desc_k_chunks_i - one),
      blk(d.tile_max.d, p.desc_n_tiles_i - one),
      blk(d.reduction_total.d, p.desc_r_total_i),
      blk(d.columns_total.d, p.desc_n_total_i),
      blk(d.group_row_max.d, p.desc_group_rows_i - one),
      blk(d.first_group.d, p.desc_gtop_i),
      blk(d.first_element.d, p.desc_etop_i),
      blk(d.batch_stride.d, p.desc_s_b_i),
      blk(d.chunk_stride.d, p.desc_s_k_i),
      blk(d.tile_stride.d, p.desc_s_n_i),
      blk(d.row_stride.d, p.desc_s_r_i),
      blk(d.first_row_offset.d, p.desc_top_i),
      blk(d.diag_first_offset.d, p.desc_dtop_i),
      blk(d.diag_group_wrap.d, p.desc_dwrap_i),
      blk(d.diag.d, p.desc_diag_i),
      blk(d.strided.d, p.desc_strided_i),
      blk(d.column_stride.d, p.desc_s_c_i),
      blk(loop.column.d, lit(t.geometry.col_index_bits, 0)),
      blk(loop.tile.d, zero_count),
      blk(loop.chunk.d, zero_count),
      blk(loop.batch.d, zero_count),
      blk(loop.block_start.d, zero_count),
      blk(loop.rows_left.d, p.desc_r_total_i),
      blk(loop.lanes_left.d, p.desc_n_total_i),
      blk(loop.batch_base.d, p.desc_base_i),
      blk(loop.chunk_offset.d, zero_addr),
      blk(loop.tile_offset.d, zero_addr),
      blk(loop.tile_first_addr.d, ternary(p.desc_diag_i, p.desc_base_i + p.desc_dtop_i, p.desc_base_i + p.desc_top_i)),
      blk(loop.busy.d, bit(true)),
      blk(loop.loading.d, bit(false)),
      blk(loop.held.d, bit(false))};
}

// After a tile's last row: the loop counters (tile innermost, then chunk, then the block and the batch
// item) and the offsets of the next tile.
Stmts tile_loop_advance(const TileReader& t) {
  const TileGeometry& g = t.geometry;
  const TileDescriptor& d = t.desc;
  const TileLoops& loop = t.loop;
  const TileWalkerWires& w = t.walk;
  const Expr one = lit(kCountBits, 1), zero_count = lit(kCountBits, 0);
  const Expr rows = lit(kCountBits, g.rows), cols = lit(kCountBits, g.cols);
  const Expr rows_left = loop.rows_left.q, lanes_left = loop.lanes_left.q;
  return {blk(loop.tile_offset.d, w.tile_offset_next),
          blk(loop.chunk_offset.d, w.chunk_offset_next),
          blk(loop.batch_base.d, w.batch_base_next),
          blk(loop.tile_first_addr.d,
              ternary(d.diag.q, w.batch_base_next + d.diag_first_offset.q,
                      w.batch_base_next + w.chunk_offset_next + w.tile_offset_next + d.first_row_offset.q)),
          if_(w.tile_wrap,
              {blk(loop.tile.d, zero_count), blk(loop.lanes_left.d, d.columns_total.q),
               if_(w.chunk_wrap,
                   {blk(loop.chunk.d, zero_count), blk(loop.rows_left.d, d.reduction_total.q),
                    if_(w.last_block, {blk(loop.block_start.d, zero_count), blk(loop.batch.d, loop.batch.q + one)},
                        {blk(loop.block_start.d, loop.block_start.q + d.block_vectors.q)})},
                   {blk(loop.chunk.d, loop.chunk.q + one),
                    blk(loop.rows_left.d, ternary(rows_left > rows, rows_left - rows, zero_count))})},
              {blk(loop.tile.d, loop.tile.q + one),
               blk(loop.lanes_left.d, ternary(lanes_left > cols, lanes_left - cols, zero_count))}),
          if_(w.final_tile, {blk(loop.busy.d, bit(false))})};
}

// The row walker's step after each read: the next column of a strided row, or the next row (diag: the
// next element, or the previous group's last), and the next tile after the last row.
Stmts tile_row_step(const TileReader& t) {
  const TileGeometry& g = t.geometry;
  const TileDescriptor& d = t.desc;
  const TileLoops& loop = t.loop;
  const TileWalkerWires& w = t.walk;
  const Expr one = lit(kCountBits, 1), first_column = lit(g.col_index_bits, 0);
  const Stmts next_column = {blk(loop.loading.d, bit(true)),
                             blk(loop.column.d, w.cur_column + lit(g.col_index_bits, 1)),
                             blk(loop.column_addr.d, w.cur_column_addr + d.column_stride.q),
                             blk(loop.row_addr.d, w.cur_row_addr),
                             blk(loop.row.d, w.cur_row),
                             blk(loop.group.d, w.cur_group),
                             blk(loop.element.d, w.cur_element)};
  const Stmts next_row = {blk(loop.loading.d, ~w.last_row), blk(loop.column.d, first_column),
                          blk(loop.row.d, w.cur_row - lit(g.row_index_bits, 1)),
                          if_(d.diag.q & (w.cur_element == lit(kCountBits, 0)),
                              {blk(loop.element.d, d.group_row_max.q), blk(loop.group.d, w.cur_group - one),
                               blk(loop.row_addr.d, loop.batch_base.q + d.diag_group_wrap.q)},
                              {blk(loop.element.d, w.cur_element - one), blk(loop.group.d, w.cur_group),
                               blk(loop.row_addr.d, w.cur_row_addr - d.row_stride.q)}),
                          if_(w.last_row, tile_loop_advance(t))};
  return {if_(w.row_handled & ~w.row_done, next_column), if_(w.row_handled & w.row_done, next_row)};
}

// The control registers: next state in one combinational block (descriptor load at start_i, else the
// tile handshake and the row walker), then every flop q <= d with reset to zero.
void build_tile_reader_control(Module& m, const TileReader& t) {
  const TileLoops& loop = t.loop;
  const TileWalkerWires& w = t.walk;
  std::vector<Flop> flops = t.desc.flops;
  for (const Flop& f : loop.flops) flops.push_back(f);
  flops.push_back(t.out.valid);
  Stmts run = {blk(loop.held.d, (loop.held.q & ~t.port.tile_start_i) | w.begin_tile)};
  for (Stmt& s : tile_row_step(t)) run.push_back(std::move(s));
  Stmts next = hold_flops(flops);
  next.push_back(blk(t.out.valid.d, w.row_handled & w.row_done));
  next.push_back(if_(t.port.start_i, tile_descriptor_load(t), std::move(run)));
  m.blank();
  m.comment("Next state.");
  m.always_comb(std::move(next));
  m.always_ff_flops(flops);
}

// The row in flight and its placement on weight_o: masked (columns past n_total), lane g only (diag),
// or gathered column by column in row_buffer_q (strided).
void build_tile_row_output(Module& m, const TileReader& t) {
  const TileGeometry& g = t.geometry;
  const TileReaderPorts& p = t.port;
  const TileRowOut& o = t.out;
  const Expr lane0 = p.rd_data_i.part(0, g.weight_bits);
  m.always_ff({nb(o.read_q, p.rd_en_o), nb(o.diag_q, t.desc.diag.q), nb(o.strided_q, t.desc.strided.q & ~t.desc.diag.q),
               nb(o.lanes_q, t.loop.lanes_left.q), nb(o.group_q, t.walk.cur_group), nb(o.column_q, t.walk.cur_column),
               if_(o.read_q & o.strided_q, {nb(t.loop.row_buffer_q[o.column_q], lane0)})});
  m.blank();
  m.comment(
      "The row read in the previous cycle, masked (columns past n_total) or placed (diag: lane g only;\n"
      "strided: the columns read before from row_buffer_q, the last one from rd_data_i).");
  for (int c = 0; c < g.cols; ++c) {
    const Expr column = lit(kCountBits, c);
    const Expr strided_lane = ternary(o.column_q == lit(g.col_index_bits, c), lane0, t.loop.row_buffer_q.word(c));
    const Expr placed =
        ternary_chain({{o.diag_q, lane0}, {o.strided_q, strided_lane}}, p.rd_data_i.part(c, g.weight_bits));
    m.assign(p.weight_o.part(c, g.weight_bits),
             ternary(paren(o.read_q & ternary(o.diag_q, o.group_q == column, column < o.lanes_q)), placed,
                     lit(g.weight_bits, 0)));
  }
  m.assign(p.weight_load_o, o.valid.q);
  m.assign(p.tile_ready_o, t.loop.held.q & ~t.loop.loading.q);
  m.assign(p.busy_o, t.loop.busy.q | o.valid.q);
}

}  // namespace

Module build_tile_reader(const AccelConfig& cfg) {
  const TileGeometry geometry = tile_geometry(cfg);
  Module m(kTileReaderModule, tile_reader_description(geometry));
  TileReaderPorts port = declare_tile_reader_ports(m, geometry);
  TileDescriptor desc = declare_tile_descriptor(m, geometry);
  TileLoops loop = declare_tile_loops(m, geometry);
  TileRowOut out = declare_tile_row_out(m, geometry);
  TileWalkerWires walk = declare_tile_walker_wires(m, geometry);
  const TileReader t{geometry, port, desc, loop, out, walk};
  m.blank();
  build_tile_address_walker(m, t);
  build_tile_reader_control(m, t);
  build_tile_row_output(m, t);
  return m;
}

// ---- Output writer -----------------------------------------------------------------------------

namespace {

// The record the output writer stores: the array's columns of act codes.
struct OutGeometry {
  int cols = 0, act_bits = 0;
  int col_index_bits = 0;  // a column index (< cols), at least 1 bit
};

std::string out_writer_description(const OutGeometry& g) {
  return fmt::format(
      "Output writer (docs/rtl-engine.md) for {0} columns: stores the result vectors of one Gemm, one element\n"
      "per cycle. Records (one per accumulator entry of the last chunk: {0} results of tile n for vector m)\n"
      "arrive in the streamer's order: for b, for each block, for n < n_tiles, for each vector m of the\n"
      "block. Output o = n*{0} + c < n_total of vector (b, m) goes to\n"
      "  base + b*s_b + m*s_m + (o / o_div)*s_o1 + (o % o_div)*s_o2\n"
      "walked without a divider: from o to o + 1 the offset grows by s_o2, or by o_wrap = s_o1 -\n"
      "(o_div - 1)*s_o2 when o % o_div wraps. Columns past n_total are skipped (the record ends early).\n"
      "With select_mod J > 0 (desc_o_sel_i) only output o = m % J of vector m is written, at base + b*s_b +\n"
      "m*s_m, one record per cycle (the routing update keeps column j of vector m = i*J + j).\n"
      "With desc_o_vec_i (offsets consecutive: o_wrap = 1 and s_o2 = 1 or o_div = 1) a record is written in one\n"
      "cycle (wr_vec_o, wr_mask_o). rec_pop_o takes the record after its last element; done_o pulses after the\n"
      "Gemm's last record. A write happens in a cycle with wr_en_o & wr_ready_i; while wr_ready_i is low the\n"
      "writer holds it (the memory serves a read of the same bank first).",
      g.cols);
}

// The output writer's ports: the descriptor, the accumulator's records, the memory's write port.
struct OutWriterPorts {
  Expr start_i, desc_batch_i, desc_m_total_i, desc_m_block_i, desc_n_tiles_i, desc_n_total_i, desc_base_i, desc_s_b_i,
      desc_s_m_i, desc_s_o2_i, desc_o_wrap_i, desc_o_div_i, desc_o_sel_i, desc_o_vec_i;
  Expr rec_valid_i, rec_data_i, rec_pop_o, wr_ready_i, wr_en_o, wr_vec_o, wr_mask_o, wr_addr_o, wr_data_o;
  Expr busy_o, done_o;
};

OutWriterPorts declare_out_writer_ports(Module& m, const OutGeometry& g) {
  const int count = kCountBits, addr = kAddrBits, record_bits = g.cols * g.act_bits;
  m.clock_and_reset();
  return OutWriterPorts{
      m.input("start_i", 1, "load the descriptor and start (only while idle)"),
      m.input("desc_batch_i", count, "batch items"),
      m.input("desc_m_total_i", count, "vectors per batch item"),
      m.input("desc_m_block_i", count, "vectors per block"),
      m.input("desc_n_tiles_i", count, "tiles"),
      m.input("desc_n_total_i", count, "output columns"),
      m.input("desc_base_i", addr, "output (0, 0, 0)"),
      m.input("desc_s_b_i", addr, "batch stride"),
      m.input("desc_s_m_i", addr, "vector stride"),
      m.input("desc_s_o2_i", addr, "output step within o_div"),
      m.input("desc_o_wrap_i", addr, "derived: s_o1 - (o_div - 1) * s_o2"),
      m.input("desc_o_div_i", count, "outputs per s_o1 step (>= 1)"),
      m.input("desc_o_sel_i", count, "select_mod J (0: every output)"),
      m.input("desc_o_vec_i", 1, "consecutive outputs (offset of o is o): one record per cycle"),
      m.input("rec_valid_i", 1, "a record is waiting"),
      m.input("rec_data_i", record_bits, "its results, column c in bits [c*A +: A]"),
      m.output("rec_pop_o", 1, "the record is done"),
      m.input("wr_ready_i", 1, "the memory takes the write this cycle"),
      m.output("wr_en_o", 1, "write one element, or with wr_vec_o the record's valid columns"),
      m.output("wr_vec_o", 1, "a whole record: column c at wr_addr_o + c where wr_mask_o[c]"),
      m.output("wr_mask_o", g.cols, "wr_vec_o: the columns written (c < valid columns)"),
      m.output("wr_addr_o", addr, "element address (the first column's with wr_vec_o)"),
      m.output("wr_data_o", record_bits, "element (act code) in bits [A-1:0], or the record (column c in [c*A +: A])"),
      m.output("busy_o", 1, "records left"),
      m.output("done_o", 1, "one-cycle pulse: the last record was written")};
}

// The descriptor as the writer keeps it (counts minus one where a loop compares with its last index).
struct OutDescriptor {
  Flop batch_max, vectors_total, block_vectors, tile_max, columns_total, output_div_max, first_block_len;
  Flop select_mod, whole_records, batch_stride, vector_stride, output_stride, output_wrap;
  std::vector<Flop> flops;  // every flop above, in declaration order
};

OutDescriptor declare_out_descriptor(Module& m) {
  FlopGroup group(m);
  const int count = kCountBits, addr = kAddrBits;
  m.comment("Descriptor.");
  return OutDescriptor{group.flop("batch_max", count, "batch items - 1"),
                       group.flop("vectors_total", count, "vectors per batch item"),
                       group.flop("block_vectors", count, "vectors per block"),
                       group.flop("tile_max", count, "tiles - 1"),
                       group.flop("columns_total", count, "output columns"),
                       group.flop("output_div_max", count, "outputs per s_o1 step - 1"),
                       group.flop("first_block_len", count, "vectors of a batch item's first block"),
                       group.flop("select_mod", count, "J (0: every output)"),
                       group.flop("whole_records", 1, "a record per write"),
                       group.flop("batch_stride", addr),
                       group.flop("vector_stride", addr),
                       group.flop("output_stride", addr, "s_o2: the step within o_div"),
                       group.flop("output_wrap", addr, "s_o1 - (o_div - 1) * s_o2"),
                       group.flops()};
}

// The record walker's position (column, vector, tile, block, batch item), its output offsets and
// addresses, and the select_mod state.
struct OutPosition {
  Flop busy, done, column;
  Flop vector, tile, block_start, batch, block_len, output_phase, tile_output_phase, lanes_left;
  Flop output_offset, tile_output_offset, vector_addr, block_addr, batch_base;
  Flop select_phase, block_select_phase, tile_first_output;
  std::vector<Flop> flops;  // every flop above, in declaration order
};

OutPosition declare_out_position(Module& m, const OutGeometry& g) {
  FlopGroup group(m);
  const int count = kCountBits, addr = kAddrBits;
  m.comment("Position: element column_q of the record of vector vector_q of the block, tile tile_q, item batch_q.");
  Flop busy = group.flop("busy", 1, "records left");
  Flop done = group.flop("done", 1, "done_o");
  Flop column = group.flop("column", g.col_index_bits);
  Flop vector = group.flop("vector", count, "within the block");
  Flop tile = group.flop("tile", count);
  Flop block_start = group.flop("block_start", count, "the block's first vector");
  Flop batch = group.flop("batch", count);
  Flop block_len = group.flop("block_len", count, "vectors of this block");
  m.comment(
      "Output o = tile*cols + column: its offset and o % o_div (output_offset_q, output_phase_q), the same for\n"
      "the tile's first output (restored for every vector of the tile), and the columns left from the tile on.");
  Flop output_phase = group.flop("output_phase", count);
  Flop tile_output_phase = group.flop("tile_output_phase", count);
  Flop lanes_left = group.flop("lanes_left", count);
  Flop output_offset = group.flop("output_offset", addr);
  Flop tile_output_offset = group.flop("tile_output_offset", addr);
  m.comment("Addresses: base + b*s_b + m*s_m of the record's vector, of the block's first vector, base + b*s_b.");
  Flop vector_addr = group.flop("vector_addr", addr);
  Flop block_addr = group.flop("block_addr", addr);
  Flop batch_base = group.flop("batch_base", addr);
  m.comment("select_mod: m % J of the record's vector and of the block's first vector; tile*cols.");
  Flop select_phase = group.flop("select_phase", count);
  Flop block_select_phase = group.flop("block_select_phase", count);
  Flop tile_first_output = group.flop("tile_first_output", count);
  return OutPosition{busy,
                     done,
                     column,
                     vector,
                     tile,
                     block_start,
                     batch,
                     block_len,
                     output_phase,
                     tile_output_phase,
                     lanes_left,
                     output_offset,
                     tile_output_offset,
                     vector_addr,
                     block_addr,
                     batch_base,
                     select_phase,
                     block_select_phase,
                     tile_first_output,
                     group.flops()};
}

// The record walker's combinational signals.
struct OutWalkerWires {
  Expr select_on, select_hit, select_lane, select_phase_next, active, step, lane_last, phase_wrap;
  Expr output_offset_next, output_phase_next, block_start_next, vectors_left;
};

OutWalkerWires declare_out_walker_wires(Module& m, const OutGeometry& g) {
  const int count = kCountBits;
  return OutWalkerWires{m.wire("select_on", 1, "select_mod J > 0"),
                        m.wire("select_hit", 1, "the selected output is in this record"),
                        m.wire("select_lane", g.col_index_bits),
                        m.wire("select_phase_next", count, "(m + 1) % J"),
                        m.wire("active", 1, "an element is waiting to be handled"),
                        m.wire("step", 1, "it is handled this cycle: nothing to write, or the write is taken"),
                        m.wire("lane_last", 1, "last element of the record"),
                        m.wire("phase_wrap", 1, "o % o_div wraps after this element"),
                        m.wire("output_offset_next", kAddrBits),
                        m.wire("output_phase_next", count),
                        m.wire("block_start_next", count),
                        m.wire("vectors_left", count, "vectors after this block")};
}

// Every signal of the output writer.
struct OutWriter {
  OutGeometry geometry;
  OutWriterPorts port;
  OutDescriptor desc;
  OutPosition pos;
  OutWalkerWires walk;
};

// select_mod: whether output m % J of the record's vector is in this record, and its column.
void build_out_select_decoder(Module& m, const OutWriter& o) {
  const OutGeometry& g = o.geometry;
  const OutPosition& pos = o.pos;
  const OutWalkerWires& w = o.walk;
  const Expr one = lit(kCountBits, 1);
  m.assign(w.select_on, o.desc.select_mod.q != lit(kCountBits, 0));
  const Expr past_tile =
      bare(cat({bit(false), pos.tile_first_output.q}) + lit(kCountBits + 1, g.cols));  // n*cols + cols
  m.assign(w.select_hit, (pos.select_phase.q >= pos.tile_first_output.q) &
                             (cat({bit(false), pos.select_phase.q}) < past_tile) &
                             (pos.select_phase.q < o.desc.columns_total.q));
  const Expr sel_diff = m.wire("select_diff", kCountBits);
  m.assign(sel_diff, paren(pos.select_phase.q - pos.tile_first_output.q));
  m.lint_off("UNUSEDSIGNAL",
             "only the low bits of select_phase - tile_first_output index a column (< cols when used).");
  const Expr sel_diff_unused = m.wire("select_diff_unused", kCountBits);
  m.assign(sel_diff_unused, sel_diff);
  m.lint_on("UNUSEDSIGNAL");
  m.assign(w.select_lane, g.col_index_bits == kCountBits ? sel_diff : sel_diff.slice(g.col_index_bits - 1, 0));
  m.assign(w.select_phase_next, ternary(bare(pos.select_phase.q + one) == o.desc.select_mod.q, lit(kCountBits, 0),
                                        pos.select_phase.q + one));
}

// The record walker and the write port: which element (or whole record) is written this cycle, where,
// and the next output's offset.
void build_out_record_walker(Module& m, const OutWriter& o) {
  const OutGeometry& g = o.geometry;
  const OutWriterPorts& p = o.port;
  const OutDescriptor& d = o.desc;
  const OutPosition& pos = o.pos;
  const OutWalkerWires& w = o.walk;
  const Expr one = lit(kCountBits, 1);
  m.assign(w.lane_last, w.select_on | d.whole_records.q | (pos.column.q == lit(g.col_index_bits, g.cols - 1)) |
                            (bare(zext(pos.column.q, kCountBits) + one) >= pos.lanes_left.q));
  m.assign(w.phase_wrap, pos.output_phase.q == d.output_div_max.q);
  m.assign(w.output_offset_next, pos.output_offset.q + ternary(w.phase_wrap, d.output_wrap.q, d.output_stride.q));
  m.assign(w.output_phase_next, ternary(w.phase_wrap, lit(kCountBits, 0), pos.output_phase.q + one));
  m.assign(w.block_start_next, pos.block_start.q + d.block_vectors.q);
  m.assign(w.vectors_left, d.vectors_total.q - w.block_start_next);
  m.assign(p.wr_en_o, w.active & ternary(w.select_on, w.select_hit, zext(pos.column.q, kCountBits) < pos.lanes_left.q));
  m.assign(p.wr_vec_o, d.whole_records.q);
  for (int c = 0; c < g.cols; ++c)
    m.assign(g.cols == 1 ? p.wr_mask_o : p.wr_mask_o[c], lit(kCountBits, c) < pos.lanes_left.q);
  m.assign(p.wr_addr_o, ternary(w.select_on, pos.vector_addr.q, pos.vector_addr.q + pos.output_offset.q));
  if (g.cols == 1) {
    m.lint_off("UNUSEDSIGNAL", "one column: the column index is always 0.");
    const Expr lane_idx_unused = m.wire("lane_idx_unused", g.col_index_bits);
    m.assign(lane_idx_unused, ternary(w.select_on, w.select_lane, pos.column.q));
    m.lint_on("UNUSEDSIGNAL");
    m.assign(p.wr_data_o, p.rec_data_i);
  } else {
    const Expr lane_idx = m.wire("lane_idx", g.col_index_bits, "column written");
    m.assign(lane_idx, ternary(w.select_on, w.select_lane, pos.column.q));
    // text API: the column's part-select prints `lane_idx * A +: A` (Expr::part_at prints `lane_idx*A`,
    // and refuses a column index that can reach past the record when cols is not a power of two).
    const std::string column =
        fmt::format("{}[{} * {} +: {}]", p.rec_data_i.text(), lane_idx.text(), g.act_bits, g.act_bits);
    m.assign(p.wr_data_o.text(), fmt::format("{} ? {} : {{{}, {}}}", d.whole_records.q.text(), p.rec_data_i.text(),
                                             zero((g.cols - 1) * g.act_bits).text(), column));
  }
  m.assign(w.step, w.active & (~p.wr_en_o | p.wr_ready_i));
  m.assign(p.rec_pop_o, w.step & w.lane_last);
}

// start_i: the descriptor registers and the position of the first record.
Stmts out_descriptor_load(const OutWriter& o) {
  const OutWriterPorts& p = o.port;
  const OutDescriptor& d = o.desc;
  const OutPosition& pos = o.pos;
  const Expr one = lit(kCountBits, 1), zero_count = lit(kCountBits, 0), zero_addr = lit(kAddrBits, 0);
  const Expr first_block = ternary(p.desc_m_total_i < p.desc_m_block_i, p.desc_m_total_i, p.desc_m_block_i);
  return {blk(pos.busy.d, bit(true)),
          blk(d.batch_max.d, p.desc_batch_i - one),
          blk(d.vectors_total.d, p.desc_m_total_i),
          blk(d.block_vectors.d, p.desc_m_block_i),
          blk(d.tile_max.d, p.desc_n_tiles_i - one),
          blk(d.columns_total.d, p.desc_n_total_i),
          blk(d.output_div_max.d, p.desc_o_div_i - one),
          blk(d.whole_records.d, p.desc_o_vec_i),
          blk(d.first_block_len.d, first_block),
          blk(pos.block_len.d, first_block),
          blk(d.batch_stride.d, p.desc_s_b_i),
          blk(d.vector_stride.d, p.desc_s_m_i),
          blk(d.output_stride.d, p.desc_s_o2_i),
          blk(d.output_wrap.d, p.desc_o_wrap_i),
          blk(pos.column.d, lit(o.geometry.col_index_bits, 0)),
          blk(pos.vector.d, zero_count),
          blk(pos.tile.d, zero_count),
          blk(pos.block_start.d, zero_count),
          blk(pos.batch.d, zero_count),
          blk(pos.output_offset.d, zero_addr),
          blk(pos.tile_output_offset.d, zero_addr),
          blk(pos.output_phase.d, zero_count),
          blk(pos.tile_output_phase.d, zero_count),
          blk(pos.lanes_left.d, p.desc_n_total_i),
          blk(pos.vector_addr.d, p.desc_base_i),
          blk(pos.block_addr.d, p.desc_base_i),
          blk(pos.batch_base.d, p.desc_base_i),
          blk(d.select_mod.d, p.desc_o_sel_i),
          blk(pos.select_phase.d, zero_count),
          blk(pos.block_select_phase.d, zero_count),
          blk(pos.tile_first_output.d, zero_count)};
}

// After a block's last record: the next block of the batch item, or the next batch item (the last one
// ends the descriptor).
Stmts out_next_block(const OutWriter& o) {
  const OutDescriptor& d = o.desc;
  const OutPosition& pos = o.pos;
  const OutWalkerWires& w = o.walk;
  const Expr zero_count = lit(kCountBits, 0), zero_addr = lit(kAddrBits, 0);
  return {blk(pos.tile.d, zero_count),
          blk(pos.tile_output_offset.d, zero_addr),
          blk(pos.tile_output_phase.d, zero_count),
          blk(pos.output_offset.d, zero_addr),
          blk(pos.output_phase.d, zero_count),
          blk(pos.lanes_left.d, d.columns_total.q),
          if_(~sum_at_least(pos.block_start.q, d.block_vectors.q, d.vectors_total.q),
              {blk(pos.block_start.d, w.block_start_next),
               blk(pos.block_len.d, ternary(w.vectors_left < d.block_vectors.q, w.vectors_left, d.block_vectors.q)),
               blk(pos.block_addr.d, pos.vector_addr.q + d.vector_stride.q),
               blk(pos.vector_addr.d, pos.vector_addr.q + d.vector_stride.q),
               blk(pos.block_select_phase.d, w.select_phase_next), blk(pos.select_phase.d, w.select_phase_next),
               blk(pos.tile_first_output.d, zero_count)},
              {blk(pos.block_start.d, zero_count), blk(pos.block_len.d, d.first_block_len.q),
               blk(pos.batch.d, pos.batch.q + lit(kCountBits, 1)),
               blk(pos.batch_base.d, pos.batch_base.q + d.batch_stride.q),
               blk(pos.block_addr.d, pos.batch_base.q + d.batch_stride.q),
               blk(pos.vector_addr.d, pos.batch_base.q + d.batch_stride.q), blk(pos.block_select_phase.d, zero_count),
               blk(pos.select_phase.d, zero_count), blk(pos.tile_first_output.d, zero_count),
               if_(pos.batch.q == d.batch_max.q, {blk(pos.busy.d, bit(false)), blk(pos.done.d, bit(true))})})};
}

// A handled element: the next column of the record, or after the record's last the next vector of the
// block, the next tile (back to the block's first vector) or the next block.
Stmts out_record_step(const OutWriter& o) {
  const OutGeometry& g = o.geometry;
  const OutDescriptor& d = o.desc;
  const OutPosition& pos = o.pos;
  const OutWalkerWires& w = o.walk;
  const Expr one = lit(kCountBits, 1), cols = lit(kCountBits, g.cols);
  const Expr next_tile_offset =
      ternary(d.whole_records.q, pos.tile_output_offset.q + lit(kAddrBits, g.cols), w.output_offset_next);
  return {
      if_(~w.lane_last,
          {blk(pos.column.d, pos.column.q + lit(g.col_index_bits, 1)), blk(pos.output_offset.d, w.output_offset_next),
           blk(pos.output_phase.d, w.output_phase_next)},
          {blk(pos.column.d, lit(g.col_index_bits, 0)),
           if_(bare(pos.vector.q + one) != pos.block_len.q,
               {blk(pos.vector.d, pos.vector.q + one), blk(pos.vector_addr.d, pos.vector_addr.q + d.vector_stride.q),
                blk(pos.output_offset.d, pos.tile_output_offset.q), blk(pos.output_phase.d, pos.tile_output_phase.q),
                blk(pos.select_phase.d, w.select_phase_next)},
               {blk(pos.vector.d, lit(kCountBits, 0)),
                if_(pos.tile.q != d.tile_max.q,
                    {blk(pos.tile.d, pos.tile.q + one), blk(pos.tile_output_offset.d, next_tile_offset),
                     blk(pos.tile_output_phase.d, w.output_phase_next), blk(pos.output_offset.d, next_tile_offset),
                     blk(pos.output_phase.d, w.output_phase_next), blk(pos.lanes_left.d, pos.lanes_left.q - cols),
                     blk(pos.vector_addr.d, pos.block_addr.q), blk(pos.select_phase.d, pos.block_select_phase.q),
                     blk(pos.tile_first_output.d, pos.tile_first_output.q + cols)},
                    out_next_block(o))})})};
}

}  // namespace

Module build_out_writer(const AccelConfig& cfg) {
  OutGeometry geometry;
  geometry.cols = cfg.array.cols;
  geometry.act_bits = cfg.widths.act;
  geometry.col_index_bits = std::max(1, clog2(geometry.cols));
  Module m(kOutWriterModule, out_writer_description(geometry));
  const OutWriterPorts port = declare_out_writer_ports(m, geometry);
  const OutDescriptor desc = declare_out_descriptor(m);
  const OutPosition pos = declare_out_position(m, geometry);
  const OutWalkerWires walk = declare_out_walker_wires(m, geometry);
  const OutWriter o{geometry, port, desc, pos, walk};
  m.blank();
  m.assign(walk.active, pos.busy.q & port.rec_valid_i);
  build_out_select_decoder(m, o);
  build_out_record_walker(m, o);
  std::vector<Flop> flops = desc.flops;
  for (const Flop& f : pos.flops) flops.push_back(f);
  Stmts next = hold_flops(flops);
  next.push_back(blk(pos.done.d, bit(false)));
  next.push_back(if_(port.start_i, out_descriptor_load(o), {if_(walk.step, out_record_step(o))}));
  m.blank();
  m.comment("Next state.");
  m.always_comb(std::move(next));
  m.always_ff_flops(flops);
  m.assign(port.busy_o, pos.busy.q);
  m.assign(port.done_o, pos.done.q);
  return m;
}

// ---- Activate and Fill pass --------------------------------------------------------------------

namespace {

// The Activate/Fill pass's ports: the descriptor, the memory's read and write ports, activation unit 0.
struct ActPassPorts {
  Expr start_i, fill_i, desc_norm_i, desc_count_i, desc_n_i, desc_in_base_i, desc_in_s_v_i, desc_in_s_e_i,
      desc_out_base_i, desc_out_s_v_i, desc_out_s_e_i, desc_value_i;
  Expr rd_en_o, rd_addr_o, rd_data_i, act_valid_o, act_data_o, res_valid_i, res_data_i, wr_en_o, wr_addr_o, wr_data_o,
      busy_o, done_o;
};

ActPassPorts declare_act_pass_ports(Module& m, const AccelConfig& cfg) {
  const int count = kCountBits, addr = kAddrBits, data_bits = cfg.widths.data, act_bits = cfg.widths.act;
  const int result_bits = act_geometry(cfg).out_bits;
  m.clock_and_reset();
  return ActPassPorts{
      m.input("start_i", 1, "load the descriptor and start (only while idle)"),
      m.input("fill_i", 1, "the descriptor is a Fill (else an Activate)"),
      m.input("desc_norm_i", 1, "Activate: one result per vector (norm)"),
      m.input("desc_count_i", kVectorCountBits, "vectors (Fill: elements), >= 1"),
      m.input("desc_n_i", count, "elements per vector, >= 1"),
      m.input("desc_in_base_i", addr, "element 0 of vector 0"),
      m.input("desc_in_s_v_i", addr, "vector stride"),
      m.input("desc_in_s_e_i", addr, "element stride"),
      m.input("desc_out_base_i", addr, "result 0"),
      m.input("desc_out_s_v_i", addr, "result vector stride"),
      m.input("desc_out_s_e_i", addr, "result element stride (Fill: element stride)"),
      m.input("desc_value_i", act_bits, "Fill: the value (act code)"),
      m.output("rd_en_o", 1, "read one element"),
      m.output("rd_addr_o", addr, "its address"),
      m.input("rd_data_i", data_bits, "the element, one cycle after rd_en_o"),
      m.output("act_valid_o", 1, "an element for activation unit 0"),
      m.output("act_data_o", data_bits, "the element (act code)"),
      m.input("res_valid_i", 1, "activation unit 0 has a result"),
      m.input("res_data_i", result_bits, "the result (norm: unsigned code; else signed, sign-extended)"),
      m.output("wr_en_o", 1, "write one result"),
      m.output("wr_addr_o", addr, "its address"),
      m.output("wr_data_o", result_bits, "the result (Fill: the value, sign-extended)"),
      m.output("busy_o", 1, "a descriptor is running"),
      m.output("done_o", 1, "one-cycle pulse: the last result was written")};
}

// The descriptor, the reader (element read_element_q of vector read_vector_q) and the writer (result
// write_element_q of vector write_vector_q).
struct ActPassRegisters {
  Flop fill, norm, count_max, length_max, in_vector_stride, in_element_stride, out_vector_stride, out_element_stride,
      fill_value;
  Flop reading, read_vector, read_element, read_addr, read_vector_addr, act_valid;
  Flop busy, done, write_vector, write_element, write_addr, write_vector_addr;
  std::vector<Flop> flops;  // every flop above, in declaration order
};

ActPassRegisters declare_act_pass_registers(Module& m, const AccelConfig& cfg) {
  FlopGroup group(m);
  const int count = kCountBits, addr = kAddrBits;
  m.comment("Descriptor.");
  Flop fill = group.flop("fill", 1, "a Fill (else an Activate)");
  Flop norm = group.flop("norm", 1, "Activate: one result per vector");
  Flop count_max = group.flop("count_max", kVectorCountBits, "count - 1");
  Flop length_max = group.flop("length_max", count, "n - 1");
  Flop in_vector_stride = group.flop("in_vector_stride", addr);
  Flop in_element_stride = group.flop("in_element_stride", addr);
  Flop out_vector_stride = group.flop("out_vector_stride", addr);
  Flop out_element_stride = group.flop("out_element_stride", addr);
  Flop fill_value = group.flop("fill_value", cfg.widths.act);
  m.comment("Reader: element read_element_q of vector read_vector_q at read_addr_q.");
  Flop reading = group.flop("reading", 1, "elements left to read");
  Flop read_vector = group.flop("read_vector", kVectorCountBits);
  Flop read_element = group.flop("read_element", count);
  Flop read_addr = group.flop("read_addr", addr);
  Flop read_vector_addr = group.flop("read_vector_addr", addr, "the vector's element 0");
  Flop act_valid = group.flop("act_valid", 1, "the element read in the previous cycle goes to the unit");
  m.comment("Writer: result write_element_q of vector write_vector_q at write_addr_q.");
  Flop busy = group.flop("busy", 1, "results left to write");
  Flop done = group.flop("done", 1, "done_o");
  Flop write_vector = group.flop("write_vector", kVectorCountBits);
  Flop write_element = group.flop("write_element", count);
  Flop write_addr = group.flop("write_addr", addr);
  Flop write_vector_addr = group.flop("write_vector_addr", addr, "the vector's result 0");
  return ActPassRegisters{fill,
                          norm,
                          count_max,
                          length_max,
                          in_vector_stride,
                          in_element_stride,
                          out_vector_stride,
                          out_element_stride,
                          fill_value,
                          reading,
                          read_vector,
                          read_element,
                          read_addr,
                          read_vector_addr,
                          act_valid,
                          busy,
                          done,
                          write_vector,
                          write_element,
                          write_addr,
                          write_vector_addr,
                          group.flops()};
}

}  // namespace

Module build_act_pass(const AccelConfig& cfg) {
  Module m(kActPassModule,
           "Activate and Fill descriptors of the compute engine (docs/rtl-engine.md). Activate: reads count\n"
           "vectors of n act codes, element e of vector v at in_base + v*in_s_v + e*in_s_e, one per cycle\n"
           "(1-cycle read latency), and hands them to activation unit 0 (act_valid_o/act_data_o, one vector\n"
           "after the other; the engine sets the unit's function and length); writes the unit's results in\n"
           "order: squash/softmax element e of vector v at out_base + v*out_s_v + e*out_s_e, norm one code per\n"
           "vector at out_base + v*out_s_v. Fill: writes value to count elements at out_base + e*out_s_e,\n"
           "one per cycle. done_o pulses after the last write.");
  const ActPassPorts p = declare_act_pass_ports(m, cfg);
  const ActPassRegisters r = declare_act_pass_registers(m, cfg);
  const Expr read_vector_last = m.wire("read_vector_last", 1, "the reader's element is its vector's last");
  const Expr write_take = m.wire("write_take", 1, "a result (or a Fill element) is written this cycle");
  const Expr write_vector_last = m.wire("write_vector_last", 1, "it is its vector's last");
  const Expr write_last = m.wire("write_last", 1, "it is the descriptor's last");
  m.blank();
  m.assign(read_vector_last, r.read_element.q == r.length_max.q);
  m.assign(p.rd_en_o, r.reading.q);
  m.assign(p.rd_addr_o, r.read_addr.q);
  m.assign(p.act_valid_o, r.act_valid.q);
  m.assign(p.act_data_o, p.rd_data_i);
  m.assign(write_take, r.busy.q & (r.fill.q | p.res_valid_i));
  m.assign(write_vector_last, r.fill.q | r.norm.q | (r.write_element.q == r.length_max.q));
  m.assign(write_last, write_vector_last & (r.write_vector.q == r.count_max.q));
  m.assign(p.wr_en_o, write_take);
  m.assign(p.wr_addr_o, r.write_addr.q);
  m.assign(p.wr_data_o, ternary(r.fill.q, sext(r.fill_value.q, p.wr_data_o.width()), p.res_data_i));

  const Expr lo = bit(false), hi = bit(true), one = lit(kCountBits, 1), one_vector = lit(kVectorCountBits, 1);
  const Expr zero_count = lit(kCountBits, 0), zero_vector = lit(kVectorCountBits, 0);
  const Stmts load = {blk(r.busy.d, hi),
                      blk(r.reading.d, ~p.fill_i),
                      blk(r.fill.d, p.fill_i),
                      blk(r.norm.d, p.desc_norm_i),
                      blk(r.count_max.d, p.desc_count_i - one_vector),
                      blk(r.length_max.d, p.desc_n_i - one),
                      blk(r.in_vector_stride.d, p.desc_in_s_v_i),
                      blk(r.in_element_stride.d, p.desc_in_s_e_i),
                      blk(r.out_vector_stride.d, p.desc_out_s_v_i),
                      blk(r.out_element_stride.d, p.desc_out_s_e_i),
                      blk(r.fill_value.d, p.desc_value_i),
                      blk(r.read_vector.d, zero_vector),
                      blk(r.read_element.d, zero_count),
                      blk(r.read_addr.d, p.desc_in_base_i),
                      blk(r.read_vector_addr.d, p.desc_in_base_i),
                      blk(r.write_vector.d, zero_vector),
                      blk(r.write_element.d, zero_count),
                      blk(r.write_addr.d, p.desc_out_base_i),
                      blk(r.write_vector_addr.d, p.desc_out_base_i)};
  const Expr next_read_vector_addr = r.read_vector_addr.q + r.in_vector_stride.q;
  const Stmt read_step = if_(
      r.reading.q, {if_(read_vector_last,
                        {blk(r.read_element.d, zero_count), blk(r.read_vector.d, r.read_vector.q + one_vector),
                         blk(r.read_vector_addr.d, next_read_vector_addr), blk(r.read_addr.d, next_read_vector_addr),
                         if_(r.read_vector.q == r.count_max.q, {blk(r.reading.d, lo)})},
                        {blk(r.read_element.d, r.read_element.q + one),
                         blk(r.read_addr.d, r.read_addr.q + r.in_element_stride.q)})});
  const Expr next_write_vector_addr = r.write_vector_addr.q + r.out_vector_stride.q;
  const Stmt write_step =
      if_(write_take,
          {if_(write_last, {blk(r.busy.d, lo), blk(r.done.d, hi)}),
           if_(r.fill.q,
               {blk(r.write_vector.d, r.write_vector.q + one_vector),
                blk(r.write_addr.d, r.write_addr.q + r.out_element_stride.q)},
               {if_(write_vector_last,
                    {blk(r.write_element.d, zero_count), blk(r.write_vector.d, r.write_vector.q + one_vector),
                     blk(r.write_vector_addr.d, next_write_vector_addr), blk(r.write_addr.d, next_write_vector_addr)},
                    {blk(r.write_element.d, r.write_element.q + one),
                     blk(r.write_addr.d, r.write_addr.q + r.out_element_stride.q)})})});
  const std::vector<Flop>& flops = r.flops;
  Stmts next = hold_flops(flops);
  next.push_back(blk(r.done.d, lo));
  next.push_back(blk(r.act_valid.d, r.reading.q));
  next.push_back(if_(p.start_i, load, {read_step, write_step}));
  m.blank();
  m.comment("Next state.");
  m.always_comb(std::move(next));
  m.always_ff_flops(flops);
  m.assign(p.busy_o, r.busy.q);
  m.assign(p.done_o, r.done.q);
  return m;
}

namespace {

// What the engine's pieces share: the config's widths and the sizes derived from them, computed once.
struct EngineGeometry {
  int rows = 0, cols = 0;                                          // the array
  int data_bits = 0, weight_bits = 0, psum_bits = 0, act_bits = 0;  // operand and result codes
  int depth = 0;                                                   // accumulator entries
  int row_bits = 0, vec_bits = 0, entry_bits = 0;  // array row, staged vector and accumulator entry indices
  ActGeometry act;                                 // the activation bank's widths
  int shift_bits = 0, result_bits = 0;             // reduction shift, activation result
  int latency = 0, stages = 0;                     // array latency; vector pipeline stages (staging read + array)
  int fifo_depth = 0, fifo_bits = 0;               // output FIFO entries, its pointer bits
  int count_bits = 0, addr_bits = 0;               // descriptor counts; addresses and strides
};

EngineGeometry engine_geometry(const AccelConfig& cfg) {
  EngineGeometry geo;
  geo.rows = cfg.array.rows;
  geo.cols = cfg.array.cols;
  geo.data_bits = cfg.widths.data;
  geo.weight_bits = cfg.widths.weight;
  geo.psum_bits = cfg.widths.psum;
  geo.act_bits = cfg.widths.act;
  geo.depth = cfg.accumulator.depth;
  geo.row_bits = std::max(1, clog2(geo.rows));
  geo.vec_bits = staging_vec_bits(cfg);
  geo.entry_bits = accumulator_addr_bits(cfg);
  geo.act = act_geometry(cfg);
  geo.shift_bits = geo.act.shift_bits;
  geo.result_bits = geo.act.out_bits;
  geo.latency = systolic_array_latency(cfg);
  geo.stages = geo.latency + 1;
  geo.fifo_depth = isa::engine_out_fifo_depth(geo.latency);
  geo.fifo_bits = clog2(geo.fifo_depth);
  geo.count_bits = kGatherCountBits;
  geo.addr_bits = kGatherAddrBits;
  return geo;
}

// The sub-blocks the engine instantiates, built from the same config so their ports are checked.
struct EngineChildren {
  Module gather, staging, tile_reader, array, accumulators, activation, out_writer, act_pass;
};

EngineChildren engine_children(const AccelConfig& cfg) {
  return EngineChildren{build_gather(cfg),           build_staging(cfg),         build_tile_reader(cfg),
                        build_systolic_array(cfg),   build_accumulator_bank(cfg), build_activation_bank(cfg),
                        build_out_writer(cfg),       build_act_pass(cfg)};
}

// The engine's module comment: what it runs, its four memory ports, the loop order and the handshake.
std::string engine_description(const EngineGeometry& geo) {
  return fmt::format(
      "Compute engine (docs/rtl-engine.md): runs one descriptor (gen/isa/program.hpp, encoded by\n"
      "isa::encode_engine/encode_activate/encode_fill) on the {0}x{1} array with its operands in memory\n"
      "behind four ports:\n"
      "  drd_*  data for the gather unit (1 element, or {0} consecutive elements in vector mode; 1-cycle latency)\n"
      "  wrd_*  weight tile rows for the tile reader ({1} consecutive elements, 1-cycle latency)\n"
      "  brd_*  biases ({1} consecutive psum codes, 1-cycle latency; AccInit::kPerColumn)\n"
      "  wr_*   results (1 act code per cycle)\n"
      "Loop order (the executor's): for b, for each block of at most m_block vectors, for k < k_chunks: the\n"
      "gather unit stages the block's vectors of chunk k (staging buffer, double-buffered, so the next\n"
      "chunk is gathered while this one streams); for n < n_tiles: the streamer sends every staged vector\n"
      "through the array against tile (b, k, n) (loaded by the tile reader while the previous tile\n"
      "streams); its {1} column sums go to accumulator entry vector*n_tiles + n (load with bias on chunk\n"
      "0, saturating add after). On the last chunk the accumulators pass each entry to the activation\n"
      "bank (shift, saturate to act bits, optional ReLU), an output FIFO of {2} result vectors, and the\n"
      "output writer. The streamer holds a last-chunk vector back unless an output FIFO entry is reserved\n"
      "for it (credits), so no result is ever dropped. Activate and Fill descriptors (desc_kind_i 1, 2) run\n"
      "in capsgen_act_pass, which has the activation bank, the data port and the write port meanwhile.\n"
      "Handshake: desc_ready_o = idle; a descriptor accepted at the edge ending cycle t starts in cycle\n"
      "t+1; done_o pulses one cycle after the last result was written. A descriptor with a zero count\n"
      "does nothing (done_o in cycle t+1). error_o (sticky) flags a contract violation inside: staging\n"
      "protocol, activation queue overflow, array results not where the streamer expected them, output\n"
      "FIFO overflow. stat_*_o count cycles of the last descriptor (cleared on accept).",
      geo.rows, geo.cols, geo.fifo_depth);
}

// The gather unit's descriptor fields the engine reads itself.
struct GatherDescriptorPorts {
  Expr batch, m_total, m_block, k_chunks, r_total, group_rows, base, s_b, s_m, s_k;
};

// The descriptor: the handshake, the packed words, and each field as a wire desc_<field> sliced out of
// them (isa::engine_descriptor_layout), in layout order.
struct DescriptorPorts {
  Expr valid, ready, words, kind;
  std::vector<Expr> gather_fields;  // gather_descriptor_fields() order, passed to capsgen_gather
  GatherDescriptorPorts gather;
  Expr n_tiles, n_total;
  Expr t_base, t_s_b, t_s_k, t_s_n, t_s_r, t_strided, t_s_c, t_top, t_diag, t_gtop, t_etop, t_dtop, t_dwrap;
  Expr init_bias, init_base, init_out, init_s_b, init_s_m, init_shift;
  Expr o_base, o_s_b, o_s_m, o_s_o2, o_wrap, o_div, o_sel;
  Expr shift, relu;
  Expr a_func, a_norm_shift, a_count, a_n, a_in_base, a_in_s_v, a_in_s_e, a_out_base, a_out_s_v, a_out_s_e, f_value;
  Expr v_mode, o_vec, v_len, acc_continue, acc_hold;
};

// Each field's wire gets its bits of the packed words: the layout's field of the same name, at least as
// wide as the wire (the text format's widths are preset-independent; the high bits are unused).
void slice_descriptor_fields(Module& m, const Expr& words, const std::vector<std::pair<std::string, Expr>>& fields) {
  const auto& layout = isa::engine_descriptor_layout();
  if (fields.size() != layout.size())
    throw std::logic_error(
        fmt::format("engine: {} descriptor wires for {} packed fields", fields.size(), layout.size()));
  for (const auto& [signal, wire] : fields) {
    const auto f = std::find_if(layout.begin(), layout.end(),
                                [&](const isa::PackedField& p) { return isa::engine_descriptor_signal(p) == signal; });
    if (f == layout.end()) throw std::logic_error("engine: no packed descriptor field for " + signal);
    if (wire.width() > f->bits) throw std::logic_error("engine: " + signal + " is wider than its packed field");
    const int lo = f->word * 32 + f->lsb;
    m.assign(wire, wire.width() == 1 ? words[lo] : words.slice(lo + wire.width() - 1, lo));
  }
}

// The descriptor: the handshake, the packed words (desc_words_i, from the program sequencer or the frame
// sequencer), and a wire per field: the kind, the gather unit's fields, then the other pieces' fields
// (tiles, accumulator init, outputs, reduction, Activate/Fill, vector-wide gather, split reduction).
DescriptorPorts declare_descriptor_ports(Module& m, const EngineGeometry& geo) {
  const int count = geo.count_bits, addr = geo.addr_bits, words_bits = isa::engine_descriptor_words() * 32;
  m.clock_and_reset();
  const Expr valid = m.input("desc_valid_i", 1, "descriptor valid");
  const Expr ready = m.output("desc_ready_o", 1, "idle: the descriptor is accepted");
  const Expr words = m.input("desc_words_i", words_bits,
                             "the packed descriptor: word w in bits [w*32 +: 32] (isa::engine_descriptor_layout)");
  m.comment("Descriptor fields, sliced out of desc_words_i.");
  std::vector<std::pair<std::string, Expr>> fields;
  const auto field = [&](const std::string& name, const Dim& width, const std::string& comment) {
    const Expr wire = m.wire("desc_" + name, width, comment);
    fields.emplace_back("desc_" + name, wire);
    return wire;
  };
  const Expr kind = field("kind", isa::kEngineKindBits, "0 Gemm, 1 Activate, 2 Fill (isa::EngineDescriptor::kind)");
  // Data source and counts, passed to capsgen_gather (docs/rtl-gather.md).
  const std::vector<Expr> gather_fields = declare_gather_descriptor_fields(field);
  const auto gather_field = [&](const std::string& name) {
    const auto& names = gather_descriptor_fields();
    return gather_fields.at(static_cast<std::size_t>(std::find(names.begin(), names.end(), name) - names.begin()));
  };
  const GatherDescriptorPorts gather{gather_field("batch"),    gather_field("m_total"), gather_field("m_block"),
                                     gather_field("k_chunks"), gather_field("r_total"), gather_field("group_rows"),
                                     gather_field("base"),     gather_field("s_b"),     gather_field("s_m"),
                                     gather_field("s_k")};
  // A braced list evaluates its elements in order: the wires are declared in this order.
  DescriptorPorts d{
      valid,
      ready,
      words,
      kind,
      gather_fields,
      gather,
      field("n_tiles", count, "tiles per chunk"),
      field("n_total", count, "output columns"),
      field("t_base", addr, "tiles: base"),
      field("t_s_b", addr, "tiles: batch stride"),
      field("t_s_k", addr, "tiles: chunk stride"),
      field("t_s_n", addr, "tiles: tile stride"),
      field("t_s_r", addr, "tiles: row stride"),
      field("t_strided", 1, "tiles: rows not contiguous (read column by column, s_c)"),
      field("t_s_c", addr, "tiles: column stride (strided rows)"),
      field("t_top", addr, "tiles, derived: (rows - 1) * s_r"),
      field("t_diag", 1, "block-diagonal tiles"),
      field("t_gtop", count, "tiles, diag, derived: (rows - 1) / group_rows"),
      field("t_etop", count, "tiles, diag, derived: (rows - 1) % group_rows"),
      field("t_dtop", addr, "tiles, diag, derived: etop * s_r"),
      field("t_dwrap", addr, "tiles, diag, derived: (group_rows - 1) * s_r"),
      field("init_bias", 1, "accumulators start at the column's bias (else 0)"),
      field("init_base", addr, "bias of output column 0 (per output: of vector 0)"),
      field("init_out", 1, "accumulators start at a per-output code (AccInit::kPerOutput)"),
      field("init_s_b", addr, "per-output init: batch stride"),
      field("init_s_m", addr, "per-output init: vector stride"),
      field("init_shift", 5, "per-output init: left shift before saturating to psum bits"),
      field("o_base", addr, "outputs: base"),
      field("o_s_b", addr, "outputs: batch stride"),
      field("o_s_m", addr, "outputs: vector stride"),
      field("o_s_o2", addr, "outputs: step within o_div"),
      field("o_wrap", addr, "outputs, derived: s_o1 - (o_div - 1) * s_o2"),
      field("o_div", count, "outputs: o_div (>= 1)"),
      field("o_sel", count, "outputs: select_mod J (0: off; else only column m % J, at base + b*s_b + m*s_m)"),
      field("shift", geo.shift_bits, "reduction right shift"),
      field("relu", 1, "ReLU after the reduction"),
      field("a_func", kActFunctionBits, "Activate: unit function (2 norm, 3 squash, 4 softmax)"),
      field("a_norm_shift", geo.act.nshift_bits,
            "Activate: norm shift (norm, squash), the activation unit's norm_shift_i"),
      field("a_count", kVectorCountBits, "Activate: vectors; Fill: elements"),
      field("a_n", count, "Activate: elements per vector"),
      field("a_in_base", addr, "Activate: input base"),
      field("a_in_s_v", addr, "Activate: input vector stride"),
      field("a_in_s_e", addr, "Activate: input element stride"),
      field("a_out_base", addr, "Activate, Fill: output base"),
      field("a_out_s_v", addr, "Activate: output vector stride"),
      field("a_out_s_e", addr, "Activate, Fill: output element stride"),
      field("f_value", geo.act_bits, "Fill: value"),
      field("v_mode", 1, "vector-wide gather: one read of rows consecutive elements per vector"),
      field("o_vec", 1, "outputs: consecutive (offset of output o is o): one record per write"),
      field("v_len", count, "vector-wide gather: elements of a vector's reduction (rows past it are zero)"),
      field("acc_continue", 1, "split reduction: chunk 0 adds onto the accumulator entries the previous Gemm left"),
      field("acc_hold", 1, "split reduction: write no output (the entries keep the sums for the next Gemm)")};
  m.blank();
  slice_descriptor_fields(m, words, fields);
  m.lint_off("UNUSEDSIGNAL",
             "padding bits of the packed descriptor, and the high bits of fields wider than the engine needs.");
  const Expr words_unused = m.wire("desc_words_unused", words_bits);
  m.assign(words_unused, words);
  m.lint_on("UNUSEDSIGNAL");
  return d;
}

// The memory ports, done, the sticky error and the statistics, in port order.
struct MemoryAndStatusPorts {
  Expr drd_en, drd_vec, drd_addr, drd_data;
  Expr wrd_en, wrd_addr, wrd_data;
  Expr brd_en, brd_addr, brd_data;
  Expr wr_en, wr_addr, wr_vec, wr_mask, wr_data, wr_ready;
  Expr busy, done, error;
  Expr stat_cycles, stat_vectors, stat_stall_data, stat_stall_tile, stat_stall_out, stat_wr_wait;
};

// The memory ports (data, weight rows, biases, results), done, the sticky error and the statistics.
MemoryAndStatusPorts declare_memory_and_status_ports(Module& m, const EngineGeometry& geo) {
  const int rows = geo.rows, cols = geo.cols, data = geo.data_bits, addr = geo.addr_bits;
  return MemoryAndStatusPorts{
      m.output("drd_en_o", 1, "data read"),
      m.output("drd_vec_o", 1, fmt::format("with drd_en_o: read {} consecutive elements (else one)", rows)),
      m.output("drd_addr_o", addr, "data element address (the first one of a vector read)"),
      m.input("drd_data_i", rows * data,
              fmt::format("one cycle after drd_en_o: the element in bits [{}:0], or the vector (element r in [r*{} +: {}])",
                          data - 1, data, data)),
      m.output("wrd_en_o", 1, "weight row read"),
      m.output("wrd_addr_o", addr, "address of the row's first element"),
      m.input("wrd_data_i", cols * geo.weight_bits, "the row, one cycle after wrd_en_o"),
      m.output("brd_en_o", 1, "bias read"),
      m.output("brd_addr_o", addr, "address of the first column's bias"),
      m.input("brd_data_i", cols * geo.psum_bits, "the biases, one cycle after brd_en_o"),
      m.output("wr_en_o", 1, "result write"),
      m.output("wr_addr_o", addr, "result address"),
      m.output("wr_vec_o", 1, fmt::format("with wr_en_o: {} results at wr_addr_o + c where wr_mask_o[c]", cols)),
      m.output("wr_mask_o", cols, "the columns of a wr_vec_o write"),
      m.output("wr_data_o", cols * geo.result_bits,
               "result in lane 0: act code sign-extended (norm: unsigned, zero-extended); wr_vec_o: column c in lane c"),
      m.input("wr_ready_i", 1, "a Gemm result write is taken this cycle (Activate/Fill writes must never be refused)"),
      m.output("busy_o", 1, "a descriptor is running"),
      m.output("done_o", 1, "one-cycle pulse: the descriptor finished"),
      m.output("error_o", 1, "sticky: an internal contract was violated"),
      m.output("stat_cycles_o", 32, "cycles from accept to done"),
      m.output("stat_vectors_o", 32, "vectors sent through the array"),
      m.output("stat_stall_data_o", 32, "streamer cycles waiting for a staged block"),
      m.output("stat_stall_tile_o", 32, "streamer cycles waiting for a tile load"),
      m.output("stat_stall_out_o", 32, "streamer cycles waiting for output FIFO space"),
      m.output("stat_wr_wait_o", 32, "cycles a Gemm result write waited for wr_ready_i")};
}

// The streamer's position registers.
struct StreamerPosition {
  Flop vector, tile, chunk, block_start, batch, block_len, entry, init_addr, init_block_addr, init_batch_addr;
};

// Declared in the controller's group: the controller's next-state block updates them.
StreamerPosition declare_streamer_position(Module& m, FlopGroup& group, const EngineGeometry& geo) {
  const int count = geo.count_bits, addr = geo.addr_bits;
  m.comment(
      "Streamer position: vector vector_q of the block at block_start_q (block_len_q vectors), tile tile_q,\n"
      "chunk chunk_q, batch item batch_q; entry_q = vector_q * n_tiles + tile_q, the accumulator entry.");
  return StreamerPosition{
      group.flop("vector", count),
      group.flop("tile", count),
      group.flop("chunk", count),
      group.flop("block_start", count),
      group.flop("batch", count),
      group.flop("block_len", count),
      group.flop("entry", geo.entry_bits),
      group.flop("init_addr", addr, "per-output init address of the vector: init_base + b*init_s_b + m*init_s_m"),
      group.flop("init_block_addr", addr, "... of the block's first vector"),
      group.flop("init_batch_addr", addr, "... of the batch item's first vector")};
}

// The statistics counters of the last descriptor.
struct Statistics {
  Flop cycles, vectors, stall_data, stall_tile, stall_out, wr_wait;
  std::vector<Flop> flops;  // every flop above, in declaration order
};

Statistics declare_statistics(Module& m) {
  FlopGroup group(m);
  return Statistics{group.flop("stat_cycles", 32),
                    group.flop("stat_vectors", 32),
                    group.flop("stat_stall_data", 32),
                    group.flop("stat_stall_tile", 32),
                    group.flop("stat_stall_out", 32),
                    group.flop("stat_wr_wait", 32),
                    group.flops()};
}

// The controller's registers, in declaration order.
struct ControlState {
  Flop busy, done, error, streaming;
  Flop batch_max, vectors_total, block_vectors, first_block_len, chunk_max, tile_max, columns_total, tiles;
  Flop init_bias, init_base, init_out, init_batch_stride, init_vector_stride, init_shift, relu, acc_continue, acc_hold;
  Flop act_mode, act_func, act_len, act_norm_shift, reduce_shift;
  StreamerPosition pos;
  Flop credits;
  Statistics stat;

  std::vector<Flop> flops;  // the controller's next-state block: every flop above but the statistics'
};

// The controller's registers: busy/done/error, the streamer's copy of the descriptor's counts and the
// init, reduction and Activate fields, the streamer's position, the output credits and the statistics.
ControlState declare_control_state(Module& m, const EngineGeometry& geo) {
  const int count = geo.count_bits, addr = geo.addr_bits;
  FlopGroup group(m);
  m.comment("Control state and the streamer's copy of the counts.");
  // A braced list evaluates its elements in order: the registers are declared in this order.
  return ControlState{
      group.flop("busy", 1, "a descriptor runs"),
      group.flop("done", 1, "done_o"),
      group.flop("error", 1, "sticky error_o"),
      group.flop("streaming", 1, "the streamer has vectors left"),
      group.flop("batch_max", count, "batch items - 1"),
      group.flop("vectors_total", count, "vectors per batch item"),
      group.flop("block_vectors", count, "vectors per block"),
      group.flop("first_block_len", count, "vectors of a batch item's first block"),
      group.flop("chunk_max", count, "chunks - 1"),
      group.flop("tile_max", count, "tiles per chunk - 1"),
      group.flop("columns_total", count, "output columns"),
      group.flop("tiles", geo.entry_bits,
                 "n_tiles mod 2^AddrWidth (only added while m_block > 1, i.e. n_tiles < depth)"),
      group.flop("init_bias", 1, "accumulators start at the column's bias"),
      group.flop("init_base", addr),
      group.flop("init_out", 1, "accumulators start at a per-output code"),
      group.flop("init_batch_stride", addr),
      group.flop("init_vector_stride", addr),
      group.flop("init_shift", 5),
      group.flop("relu", 1),
      group.flop("acc_continue", 1, "chunk 0 accumulates onto the entries (no init)"),
      group.flop("acc_hold", 1, "the writer steps through the records without writing them"),
      group.flop("act_mode", 1,
                 "an Activate or Fill runs (the activation bank, data port and write port are the pass's)"),
      group.flop("act_func", 3, "the activation bank's function for the pass"),
      group.flop("act_len", geo.act.len_bits, "... its vector length"),
      group.flop("act_norm_shift", geo.act.nshift_bits, "... its norm shift"),
      group.flop("reduce_shift", geo.shift_bits, "the Gemm's reduction shift"),
      declare_streamer_position(m, group, geo),
      group.flop("credits", geo.fifo_bits + 1, "output FIFO entries not yet promised to a last-chunk vector"),
      declare_statistics(m),
      group.flops()};
}

// Descriptor decode: accept (desc_valid_i while idle), empty (a count is zero: done at once) and which
// side starts, the Gemm datapath (start) or the Activate/Fill pass (a_start).
struct DescriptorDecode {
  Expr accept, empty, start, a_start;
};

DescriptorDecode build_descriptor_decode(Module& m, const EngineGeometry& geo, const DescriptorPorts& desc,
                                         const ControlState& ctl) {
  const Expr accept = m.wire("accept", 1);
  const Expr empty = m.wire("empty", 1, "a count is zero: nothing to do");
  const Expr start = m.wire("start", 1, "accept a non-empty Gemm: every unit starts");
  m.blank();
  m.assign(accept, desc.valid & ~ctl.busy.q);
  const Expr count_zero = lit(geo.count_bits, 0);
  const Expr gemm = desc.kind == kind_code(isa::kEngineKindGemm);
  const Expr gemm_empty = (desc.gather.batch == count_zero) | (desc.gather.m_total == count_zero) |
                          (desc.gather.m_block == count_zero) | (desc.gather.k_chunks == count_zero) |
                          (desc.n_tiles == count_zero) | (desc.n_total == count_zero);
  const Expr pass_empty =
      (desc.a_count == lit(kVectorCountBits, 0)) |
      ((desc.kind == kind_code(isa::kEngineKindActivate)) & (desc.a_n == count_zero));
  m.assign(empty, ternary(gemm, paren(gemm_empty), paren(pass_empty)));
  const Expr a_start = m.wire("a_start", 1, "accept a non-empty Activate or Fill");
  m.assign(a_start, accept & ~empty & (desc.kind != kind_code(isa::kEngineKindGemm)));
  m.assign(start, accept & ~empty & gemm);
  return DescriptorDecode{accept, empty, start, a_start};
}

// The Activate/Fill pass's outputs (instantiated after the output writer) and its element for the
// activation bank.
struct ActPassWires {
  Expr rd_en, rd_addr, act_valid, act_data, wr_en, wr_addr, wr_data, done, busy, act_in;
};

ActPassWires declare_act_pass_wires(Module& m, const EngineGeometry& geo) {
  const int addr = geo.addr_bits;
  m.comment("The Activate/Fill pass (capsgen_act_pass, instantiated below) and its share of the ports.");
  return ActPassWires{
      m.wire("ap_rd_en", 1),
      m.wire("ap_rd_addr", addr),
      m.wire("ap_act_valid", 1),
      m.wire("ap_act_data", geo.data_bits),
      m.wire("ap_wr_en", 1),
      m.wire("ap_wr_addr", addr),
      m.wire("ap_wr_data", geo.result_bits),
      m.wire("ap_done", 1),
      m.wire("ap_busy", 1),
      m.wire("act_in", geo.cols * geo.psum_bits, "the pass's element for unit 0 (sign-extended to psum bits), 0 for the others")};
}

// The vector-wide gather's registers and wires.
struct VectorGather {
  Flop vector_mode, vg_busy;
  Flop vg_batch, vg_block_start, vg_block_len, vg_chunk, vg_vector, vg_rows_left, vg_len;  // counts
  Flop vg_batch_stride, vg_vector_stride, vg_chunk_stride, vg_batch_addr, vg_chunk_addr, vg_addr, vg_next_block_addr;
  Expr vg_take, vg_chunk_last, vg_zero_rows, vg_next_block;
  Expr s1_vall_q, s1_vzero_q;
  std::vector<Flop> flops;  // every flop above, in declaration order
};

// The length of the next block, min(m_total - (m0 + m_block), m_block).
Expr next_block_length(const Expr& m_total, const Expr& m0, const Expr& m_block) {
  const Expr left = m_total - (m0 + m_block);
  return ternary(left < m_block, paren(left), m_block);
}

// ~(a + b >= c) on count-bit unsigned counts, without overflow (the sum is one bit wider).
Expr sum_below(const Expr& a, const Expr& b, const Expr& c) {
  const auto wide = [](const Expr& e) { return cat({bit(false), e}); };
  return ~(bare(wide(a) + wide(b)) >= wide(c));
}

// The vector-wide gather after a block's last chunk: the next block of the batch item, or the first
// block of the next batch item (after the last one the gather stops).
Stmts vector_gather_next_block(const EngineGeometry& geo, const VectorGather& v, const ControlState& ctl) {
  const Expr count_zero = lit(geo.count_bits, 0), count_one = lit(geo.count_bits, 1);
  const Stmts next_batch = {blk(v.vg_block_start.d, count_zero),
                            blk(v.vg_block_len.d, ctl.first_block_len.q),
                            blk(v.vg_batch.d, v.vg_batch.q + count_one),
                            blk(v.vg_batch_addr.d, v.vg_batch_addr.q + v.vg_batch_stride.q),
                            blk(v.vg_chunk_addr.d, v.vg_batch_addr.q + v.vg_batch_stride.q),
                            blk(v.vg_addr.d, v.vg_batch_addr.q + v.vg_batch_stride.q),
                            if_(v.vg_batch.q == ctl.batch_max.q, {blk(v.vg_busy.d, bit(false))})};
  return {blk(v.vg_chunk.d, count_zero), blk(v.vg_rows_left.d, v.vg_len.q),
          if_(sum_below(v.vg_block_start.q, ctl.block_vectors.q, ctl.vectors_total.q),
              {blk(v.vg_block_start.d, v.vg_block_start.q + ctl.block_vectors.q),
               blk(v.vg_block_len.d, next_block_length(ctl.vectors_total.q, v.vg_block_start.q, ctl.block_vectors.q)),
               blk(v.vg_chunk_addr.d, v.vg_next_block), blk(v.vg_addr.d, v.vg_next_block)},
              next_batch)};
}

// The vector-wide gather after a vector was read: the block's next vector, or after its last one the
// next chunk (vg_rows_left_q drops by rows) or the next block.
Stmts vector_gather_advance(const EngineGeometry& geo, const VectorGather& v, const ControlState& ctl) {
  const Expr count_zero = lit(geo.count_bits, 0), count_one = lit(geo.count_bits, 1);
  const Expr rows = lit(geo.count_bits, geo.rows);
  Stmts chunk_done = {
      blk(v.vg_vector.d, count_zero),
      if_(v.vg_chunk.q == count_zero, {blk(v.vg_next_block_addr.d, v.vg_addr.q + v.vg_vector_stride.q)})};
  chunk_done.push_back(
      if_(v.vg_chunk.q == ctl.chunk_max.q, vector_gather_next_block(geo, v, ctl),
          {blk(v.vg_chunk.d, v.vg_chunk.q + count_one),
           blk(v.vg_rows_left.d, ternary(v.vg_rows_left.q > rows, v.vg_rows_left.q - rows, count_zero)),
           blk(v.vg_chunk_addr.d, v.vg_chunk_addr.q + v.vg_chunk_stride.q),
           blk(v.vg_addr.d, v.vg_chunk_addr.q + v.vg_chunk_stride.q)}));
  return {if_(v.vg_chunk_last, chunk_done,
              {blk(v.vg_vector.d, v.vg_vector.q + count_one), blk(v.vg_addr.d, v.vg_addr.q + v.vg_vector_stride.q)})};
}

// The vector-wide gather's registers and wires, and its rows past the reduction.
VectorGather declare_vector_gather(Module& m, const EngineGeometry& geo) {
  FlopGroup group(m);
  const int rows = geo.rows, count = geo.count_bits, addr = geo.addr_bits;
  m.blank();
  m.comment(fmt::format(
      "Vector-wide gather (desc_v_mode_i, docs/rtl-engine.md): for an affine source whose vector elements are\n"
      "consecutive, one data read of {0} elements per vector instead of the gather unit's one per element, in the\n"
      "gather unit's order (b, block, chunk, vector). Vector m of batch item b, chunk k starts at base + b*s_b +\n"
      "m*s_m + k*s_k; rows at or past v_len - k*{0} are zero. The address steps by s_m within a block, the\n"
      "block's successor address (vg_next_block_addr_q) is noted on chunk 0.",
      rows));
  // A braced list evaluates its elements in order: the signals are declared in this order.
  const VectorGather v{group.flop("vector_mode", 1, "the running Gemm uses the vector-wide gather"),
                       group.flop("vg_busy", 1, "vectors left to read"),
                       group.flop("vg_batch", count, "batch item b"),
                       group.flop("vg_block_start", count, "the block's first vector"),
                       group.flop("vg_block_len", count, "vectors of the block"),
                       group.flop("vg_chunk", count, "chunk k"),
                       group.flop("vg_vector", count, "vector of the block"),
                       group.flop("vg_rows_left", count, fmt::format("v_len - k*{}, floored at 0", rows)),
                       group.flop("vg_len", count, "v_len"),
                       group.flop("vg_batch_stride", addr),
                       group.flop("vg_vector_stride", addr),
                       group.flop("vg_chunk_stride", addr),
                       group.flop("vg_batch_addr", addr, "base + b*s_b"),
                       group.flop("vg_chunk_addr", addr, "the block's first vector in chunk k"),
                       group.flop("vg_addr", addr, "the vector read next"),
                       group.flop("vg_next_block_addr", addr, "the next block's first vector (chunk 0)"),
                       m.wire("vg_take", 1, "a vector is read this cycle"),
                       m.wire("vg_chunk_last", 1, "the block's last vector of the chunk"),
                       m.wire("vg_zero_rows", rows, "rows past the reduction"),
                       m.wire("vg_next_block", addr, "the next block's first vector: noted now when this is chunk 0"),
                       m.reg("s1_vall_q", 1),
                       m.reg("s1_vzero_q", rows),
                       group.flops()};
  m.blank();
  m.assign(v.vg_take, v.vg_busy.q & m.forward_wire("g_ready", 1));  // declared with the gather unit's wires
  m.assign(v.vg_chunk_last, bare(v.vg_vector.q + lit(count, 1)) == v.vg_block_len.q);
  m.assign(v.vg_next_block,
           ternary(v.vg_chunk.q == lit(count, 0), v.vg_addr.q + v.vg_vector_stride.q, v.vg_next_block_addr.q));
  for (int r = 0; r < rows; ++r)
    m.assign(rows == 1 ? v.vg_zero_rows : v.vg_zero_rows[r], ~(lit(count, r) < v.vg_rows_left.q));
  return v;
}

// The vector-wide gather: its position registers, the rows past the reduction, and the walk over
// (b, block, chunk, vector), one vector read per cycle the staging buffer takes it.
VectorGather build_vector_gather(Module& m, const EngineGeometry& geo, const DescriptorPorts& desc,
                                 const ControlState& ctl, const DescriptorDecode& decode) {
  const VectorGather v = declare_vector_gather(m, geo);
  const Expr count_zero = lit(geo.count_bits, 0);
  const GatherDescriptorPorts& g = desc.gather;
  const Stmts load = {blk(v.vector_mode.d, desc.v_mode),
                      blk(v.vg_busy.d, desc.v_mode),
                      blk(v.vg_batch.d, count_zero),
                      blk(v.vg_block_start.d, count_zero),
                      blk(v.vg_block_len.d, ternary(g.m_total < g.m_block, g.m_total, g.m_block)),
                      blk(v.vg_chunk.d, count_zero),
                      blk(v.vg_vector.d, count_zero),
                      blk(v.vg_len.d, desc.v_len),
                      blk(v.vg_rows_left.d, desc.v_len),
                      blk(v.vg_batch_stride.d, g.s_b),
                      blk(v.vg_vector_stride.d, g.s_m),
                      blk(v.vg_chunk_stride.d, g.s_k),
                      blk(v.vg_batch_addr.d, g.base),
                      blk(v.vg_chunk_addr.d, g.base),
                      blk(v.vg_addr.d, g.base)};
  Stmts next = hold_flops(v.flops);
  next.push_back(if_(decode.start, load, {if_(v.vg_take, vector_gather_advance(geo, v, ctl))}));
  m.blank();
  m.comment("The vector-wide gather's next state.");
  m.always_comb(std::move(next));
  m.always_ff_flops(v.flops);
  return v;
}

// The gather unit's element handshake and outputs.
struct GatherElement {
  Expr valid, ready, take, addr, zero, row, chunk_last;
  Expr desc_ready, vec, chunk, vec_last, last, busy, done;  // unused
};

// The stage-1 registers between the gather and the staging buffer, and the staging buffer's outputs.
struct StagingWrite {
  Expr s1_valid_q, s1_zero_q, s1_commit_q, s1_row_q, s1_vec_q;
  Expr st_wr_free, st_rd_avail, st_rd_data, st_error, st_wr_buf, st_rd_buf;
  Expr drd_elem;  // the element read (low lane of the data port)
};

// The gather unit's wires and the stage-1 registers, as declared together.
struct GatherToStaging {
  GatherElement element;
  StagingWrite staging;
};

// The data port: the Activate/Fill pass's reads while it runs, else the vector-wide gather's vector
// reads or the gather unit's element reads (none for a zero element). Returns the element read.
Expr drive_data_port(Module& m, const EngineGeometry& geo, const MemoryAndStatusPorts& ports, const ControlState& ctl,
                     const ActPassWires& pass, const VectorGather& v, const GatherElement& g) {
  const Expr drd_elem = m.wire("drd_elem", geo.data_bits, "an element read (low lane of the data port)");
  m.assign(drd_elem, ports.drd_data.slice(geo.data_bits - 1, 0));
  m.assign(ports.drd_en, ternary(ctl.act_mode.q, pass.rd_en, (g.take & ~g.zero) | v.vg_take));
  m.assign(ports.drd_vec, ~ctl.act_mode.q & v.vg_take);
  const Expr gather_addr = ternary(v.vector_mode.q, v.vg_addr.q, g.addr);
  m.assign(ports.drd_addr, ternary(ctl.act_mode.q, pass.rd_addr, bare(gather_addr)));
  return drd_elem;
}

// Gather -> staging: the gather unit's element handshake and the stage-1 registers that write an
// element (or, from the vector-wide gather, a whole vector) into the staging buffer with its read data.
GatherToStaging build_gather_to_staging(Module& m, const EngineGeometry& geo, const MemoryAndStatusPorts& ports,
                                        const ControlState& ctl, const ActPassWires& pass, const VectorGather& v) {
  m.blank();
  m.comment("Gather -> staging: an element taken in cycle t is read (drd) in t and written to the staging buffer\n"
            "in t+1 with the read data. The element after a block's last one waits a cycle, until the commit has\n"
            "moved the writer to the other buffer (wr_free_o then refers to that buffer).");
  const Expr valid = m.wire("g_valid", 1), ready = m.wire("g_ready", 1), take = m.wire("g_take", 1);
  const Expr addr = m.wire("g_addr", geo.addr_bits), zero = m.wire("g_zero", 1), row = m.wire("g_row", geo.row_bits);
  const Expr chunk_last = m.wire("g_chunk_last", 1);
  const Expr s1_valid_q = m.reg("s1_valid_q", 1), s1_zero_q = m.reg("s1_zero_q", 1);
  const Expr s1_commit_q = m.reg("s1_commit_q", 1), s1_row_q = m.reg("s1_row_q", geo.row_bits);
  const Expr s1_vec_q = m.reg("s1_vec_q", geo.vec_bits);
  const Expr st_wr_free = m.wire("st_wr_free", 1), st_rd_avail = m.wire("st_rd_avail", 1);
  const Expr st_rd_data = m.wire("st_rd_data", geo.rows * geo.data_bits), st_error = m.wire("st_error", 1);
  m.lint_off("UNUSEDSIGNAL", "the gather unit's chunk, vector-last, last, busy and done outputs and the staging\n"
                             "buffer's buffer indices are for other users and the testbenches.");
  const Expr desc_ready = m.wire("g_desc_ready", 1);
  const Expr vec = m.wire("g_vec", geo.count_bits, "vector within the block (< m_block <= depth: the low bits)");
  const Expr chunk = m.wire("g_chunk", geo.count_bits);
  const Expr vec_last = m.wire("g_vec_last", 1), last = m.wire("g_last", 1), busy = m.wire("g_busy", 1);
  const Expr done = m.wire("g_done", 1), st_wr_buf = m.wire("st_wr_buf", 1), st_rd_buf = m.wire("st_rd_buf", 1);
  m.lint_on("UNUSEDSIGNAL");
  const GatherElement g{valid, ready, take, addr, zero, row, chunk_last, desc_ready, vec, chunk, vec_last, last, busy, done};
  m.assign(ready, st_wr_free & ~(s1_valid_q & s1_commit_q));
  m.assign(take, valid & ready);
  const Expr drd_elem = drive_data_port(m, geo, ports, ctl, pass, v, g);
  m.always_ff_next({nb(s1_valid_q, bit(false)), nb(v.s1_vall_q, bit(false))},
                   {nb(s1_valid_q, take | v.vg_take), nb(v.s1_vall_q, v.vg_take)});
  const bool whole = geo.vec_bits == geo.count_bits;
  m.always_ff(
      {nb(s1_zero_q, zero), nb(s1_commit_q, ternary(v.vector_mode.q, v.vg_chunk_last, chunk_last)), nb(s1_row_q, row),
       nb(s1_vec_q,
          whole ? ternary(v.vector_mode.q, v.vg_vector.q, vec)
                : ternary(v.vector_mode.q, v.vg_vector.q.slice(geo.vec_bits - 1, 0), vec.slice(geo.vec_bits - 1, 0))),
       nb(v.s1_vzero_q, v.vg_zero_rows)});
  return GatherToStaging{g, StagingWrite{s1_valid_q, s1_zero_q, s1_commit_q, s1_row_q, s1_vec_q, st_wr_free,
                                         st_rd_avail, st_rd_data, st_error, st_wr_buf, st_rd_buf, drd_elem}};
}

// The gather unit (capsgen_gather) on the descriptor's data source, unless the vector-wide gather runs;
// the engine uses its element stream.
void instantiate_gather(Module& m, const Module& gather, const DescriptorPorts& desc, const DescriptorDecode& decode,
                        const GatherElement& g) {
  Instance& inst = m.instance(gather, "u_gather");
  inst.connect("clk_i", m.clk())
      .connect("rst_ni", m.rst_n())
      .connect("desc_valid_i", decode.start & ~desc.v_mode)
      .connect("desc_ready_o", g.desc_ready);
  const std::vector<std::string>& fields = gather_descriptor_fields();
  for (std::size_t i = 0; i < fields.size(); ++i) inst.connect("desc_" + fields[i] + "_i", desc.gather_fields[i]);
  inst.connect("elem_valid_o", g.valid)
      .connect("elem_ready_i", g.ready)
      .connect("elem_addr_o", g.addr)
      .connect("elem_zero_o", g.zero)
      .connect("elem_row_o", g.row)
      .connect("elem_vec_o", g.vec)
      .connect("elem_chunk_o", g.chunk)
      .connect("elem_vec_last_o", g.vec_last)
      .connect("elem_chunk_last_o", g.chunk_last)
      .connect("elem_last_o", g.last)
      .connect("busy_o", g.busy)
      .connect("done_o", g.done);
}

// The streamer's issue conditions.
struct StreamerIssue {
  Expr tile_ready, last_k, tile_ok, credit_ok, issue, mi_last, n_last, st_release, pop;
};

// The streamer's issue logic: a staged vector goes into the array when the staging buffer has a block,
// the tile reader has the tile (first vector of a tile only) and, on the last chunk, an output FIFO
// entry is free; the block's last vector of the chunk's last tile releases the staging buffer.
StreamerIssue build_streamer_issue(Module& m, const EngineGeometry& geo, const ControlState& ctl,
                                   const StagingWrite& st) {
  const StreamerPosition& pos = ctl.pos;
  m.blank();
  m.comment("Streamer: one staged vector per cycle into the array. The first vector of a tile waits for the\n"
            "tile reader (tile_ready) and starts it; every vector of the last chunk needs an output FIFO credit.");
  const StreamerIssue s{m.wire("tile_ready", 1),
                        m.wire("last_k", 1),
                        m.wire("tile_ok", 1),
                        m.wire("credit_ok", 1),
                        m.wire("issue", 1, "a vector is read from the staging buffer this cycle"),
                        m.wire("mi_last", 1),
                        m.wire("n_last", 1),
                        m.wire("st_release", 1, "the block's last vector of the chunk's last tile: free the staging buffer"),
                        m.wire("pop", 1, "the writer finished a record")};
  m.assign(s.last_k, pos.chunk.q == ctl.chunk_max.q);
  m.assign(s.tile_ok, (pos.vector.q != lit(geo.count_bits, 0)) | s.tile_ready);
  m.assign(s.credit_ok, ~s.last_k | (ctl.credits.q != lit(geo.fifo_bits + 1, 0)));
  m.assign(s.issue, ctl.streaming.q & st.st_rd_avail & s.tile_ok & s.credit_ok);
  m.assign(s.mi_last, bare(pos.vector.q + lit(geo.count_bits, 1)) == pos.block_len.q);
  m.assign(s.n_last, pos.tile.q == ctl.tile_max.q);
  m.assign(s.st_release, s.issue & s.mi_last & s.n_last);
  return s;
}

// The staged vector the streamer reads: mi_q's low bits.
Expr staged_vector(const EngineGeometry& geo, const Expr& mi_q) {
  return geo.vec_bits == geo.count_bits ? mi_q : mi_q.slice(geo.vec_bits - 1, 0);
}

// The staging buffer (capsgen_staging): written by the gather stage, read by the streamer.
void instantiate_staging(Module& m, const Module& staging, const EngineGeometry& geo, const MemoryAndStatusPorts& ports,
                         const ControlState& ctl, const VectorGather& v, const StagingWrite& st,
                         const StreamerIssue& s) {
  m.instance(staging, "u_staging")
      .connect("clk_i", m.clk())
      .connect("rst_ni", m.rst_n())
      .connect("wr_en_i", st.s1_valid_q)
      .connect("wr_row_i", st.s1_row_q)
      .connect("wr_vec_i", st.s1_vec_q)
      .connect("wr_zero_i", st.s1_zero_q)
      .connect("wr_data_i", st.drd_elem)
      .connect("wr_vall_i", v.s1_vall_q)
      .connect("wr_vdata_i", ports.drd_data)
      .connect("wr_vzero_i", v.s1_vzero_q)
      .connect("wr_commit_i", st.s1_valid_q & st.s1_commit_q)
      .connect("wr_free_o", st.st_wr_free)
      .connect("rd_en_i", s.issue)
      .connect("rd_vec_i", staged_vector(geo, ctl.pos.vector.q))
      .connect("rd_data_o", st.st_rd_data)
      .connect("rd_release_i", s.st_release)
      .connect("rd_avail_o", st.st_rd_avail)
      .connect("wr_buf_o", st.st_wr_buf)
      .connect("rd_buf_o", st.st_rd_buf)
      .connect("error_o", st.st_error);
}

// The tile index n_q as an accumulator entry address (entry bits).
Expr tile_entry(const EngineGeometry& geo, const Expr& n_q) {
  return geo.entry_bits >= geo.count_bits ? zext(n_q, geo.entry_bits) : n_q.slice(geo.entry_bits - 1, 0);
}

// The streamer after the last tile of a block's last chunk: chunk 0 of the batch item's next block, or of
// the next batch item's first block (after the last one the streamer stops); the per-output init
// addresses follow.
Stmts streamer_next_block(const EngineGeometry& geo, const ControlState& ctl) {
  const StreamerPosition& p = ctl.pos;
  const Expr count_zero = lit(geo.count_bits, 0);
  return {blk(p.chunk.d, count_zero),
          if_(sum_below(p.block_start.q, ctl.block_vectors.q, ctl.vectors_total.q),
              {blk(p.block_start.d, p.block_start.q + ctl.block_vectors.q),
               blk(p.block_len.d, next_block_length(ctl.vectors_total.q, p.block_start.q, ctl.block_vectors.q)),
               blk(p.init_addr.d, p.init_addr.q + ctl.init_vector_stride.q),
               blk(p.init_block_addr.d, p.init_addr.q + ctl.init_vector_stride.q)},
              {blk(p.block_start.d, count_zero), blk(p.block_len.d, ctl.first_block_len.q),
               blk(p.batch.d, p.batch.q + lit(geo.count_bits, 1)),
               blk(p.init_batch_addr.d, p.init_batch_addr.q + ctl.init_batch_stride.q),
               blk(p.init_block_addr.d, p.init_batch_addr.q + ctl.init_batch_stride.q),
               blk(p.init_addr.d, p.init_batch_addr.q + ctl.init_batch_stride.q),
               if_(p.batch.q == ctl.batch_max.q, {blk(ctl.streaming.d, bit(false))})})};
}

// The streamer's position after it issued a vector: the block's next vector (entry + n_tiles), else
// vector 0 of the next tile (entry n + 1), of the next chunk or of the next block (entry 0).
Stmts streamer_advance(const EngineGeometry& geo, const ControlState& ctl, const StreamerIssue& s) {
  const StreamerPosition& p = ctl.pos;
  const Expr count_zero = lit(geo.count_bits, 0), count_one = lit(geo.count_bits, 1);
  return {if_(s.mi_last,
              {blk(p.vector.d, count_zero),
               if_(s.n_last,
                   {blk(p.tile.d, count_zero), blk(p.entry.d, lit(geo.entry_bits, 0)),
                    if_(s.last_k, streamer_next_block(geo, ctl),
                        {blk(p.chunk.d, p.chunk.q + count_one), blk(p.init_addr.d, p.init_block_addr.q)})},
                   {blk(p.tile.d, p.tile.q + count_one), blk(p.init_addr.d, p.init_block_addr.q),
                    blk(p.entry.d, tile_entry(geo, p.tile.q) + lit(geo.entry_bits, 1))})},
              {blk(p.vector.d, p.vector.q + count_one), blk(p.entry.d, p.entry.q + ctl.tiles.q),
               blk(p.init_addr.d, p.init_addr.q + ctl.init_vector_stride.q)})};
}

// The tile reader's outputs.
struct TileReaderWires {
  Expr weight, load, busy;
};

// The tile reader (capsgen_tile_reader) on the descriptor's tile fields: it loads tile (b, k, n) while
// the previous tile streams; the streamer starts it with a tile's first vector.
TileReaderWires instantiate_tile_reader(Module& m, const Module& tile_reader, const EngineGeometry& geo,
                                        const DescriptorPorts& desc, const MemoryAndStatusPorts& ports,
                                        const ControlState& ctl, const DescriptorDecode& decode,
                                        const StreamerIssue& s) {
  m.blank();
  const TileReaderWires t{m.wire("tr_weight", geo.cols * geo.weight_bits), m.wire("tr_load", 1), m.wire("tr_busy", 1)};
  const GatherDescriptorPorts& g = desc.gather;
  m.instance(tile_reader, "u_tiles")
      .connect("clk_i", m.clk())
      .connect("rst_ni", m.rst_n())
      .connect("start_i", decode.start)
      .connect("desc_batch_i", g.batch)
      .connect("desc_m_total_i", g.m_total)
      .connect("desc_m_block_i", g.m_block)
      .connect("desc_k_chunks_i", g.k_chunks)
      .connect("desc_n_tiles_i", desc.n_tiles)
      .connect("desc_r_total_i", g.r_total)
      .connect("desc_n_total_i", desc.n_total)
      .connect("desc_base_i", desc.t_base)
      .connect("desc_s_b_i", desc.t_s_b)
      .connect("desc_s_k_i", desc.t_s_k)
      .connect("desc_s_n_i", desc.t_s_n)
      .connect("desc_s_r_i", desc.t_s_r)
      .connect("desc_strided_i", desc.t_strided)
      .connect("desc_s_c_i", desc.t_s_c)
      .connect("desc_top_i", desc.t_top)
      .connect("desc_diag_i", desc.t_diag)
      .connect("desc_group_rows_i", g.group_rows)
      .connect("desc_gtop_i", desc.t_gtop)
      .connect("desc_etop_i", desc.t_etop)
      .connect("desc_dtop_i", desc.t_dtop)
      .connect("desc_dwrap_i", desc.t_dwrap)
      .connect("rd_en_o", ports.wrd_en)
      .connect("rd_addr_o", ports.wrd_addr)
      .connect("rd_data_i", ports.wrd_data)
      .connect("weight_o", t.weight)
      .connect("weight_load_o", t.load)
      .connect("tile_start_i", s.issue & (ctl.pos.vector.q == lit(geo.count_bits, 0)))
      .connect("tile_ready_o", s.tile_ready)
      .connect("busy_o", t.busy);
  return t;
}

// What travels with each issued vector through the staging read and the array.
struct VectorPipeline {
  Expr pv_q, pa_q, pl_q, pf_q, pe_q, pn_q;
};

// The vector pipeline: shift registers of what travels with each issued vector through the staging
// read and the array (valid, accumulate, last chunk, entry, tile index), read where a stage needs it.
VectorPipeline build_vector_pipeline(Module& m, const EngineGeometry& geo, const ControlState& ctl,
                                     const StreamerIssue& s) {
  const int entry = geo.entry_bits, latency = geo.latency, stages = geo.stages;
  m.blank();
  m.comment(fmt::format(
      "What travels with each vector: bit/field i = the vector issued i+1 cycles ago. Stage 0 enters the\n"
      "array (data_valid_i, weight_swap_i on a tile's first vector); stage {0} issues the bias read; stage {1}\n"
      "meets the array's result (latency {2}) at the accumulators.",
      latency - 1, stages - 1, latency));
  const VectorPipeline p{m.reg("pv_q", stages),
                         m.reg("pa_q", stages),
                         m.reg("pl_q", stages),
                         m.reg("pf_q", 1, "stage 0 is a tile's first vector"),
                         m.reg("pe_q", stages * entry, "accumulator entry"),
                         m.reg("pn_q", latency * entry, "tile index n (stages 0..L-1)")};
  const Expr count_zero = lit(geo.count_bits, 0);
  m.always_ff_next({nb(p.pv_q, lit(stages, 0))}, {nb(p.pv_q, cat({p.pv_q.slice(stages - 2, 0), s.issue}))});
  m.always_ff({nb(p.pf_q, ctl.pos.vector.q == count_zero),
               nb(p.pa_q, cat({p.pa_q.slice(stages - 2, 0), ctl.pos.chunk.q != count_zero})),
               nb(p.pl_q, cat({p.pl_q.slice(stages - 2, 0), s.last_k})),
               nb(p.pe_q, cat({p.pe_q.slice((stages - 1) * entry - 1, 0), ctl.pos.entry.q})),
               nb(p.pn_q, cat({p.pn_q.slice((latency - 1) * entry - 1, 0), tile_entry(geo, ctl.pos.tile.q)}))});
  return p;
}

// The array's outputs and the check of its result timing.
struct ArrayWires {
  Expr result, result_valid, res_mismatch;
};

// The systolic array (capsgen_systolic_array): staged vectors in, the tile reader's rows as weights;
// its result_valid_o must agree with the vector pipeline's record (else the sticky error).
ArrayWires instantiate_array(Module& m, const Module& array, const EngineGeometry& geo, const StagingWrite& st,
                             const TileReaderWires& t, const VectorPipeline& p) {
  const ArrayWires a{m.wire("arr_result", geo.cols * geo.psum_bits), m.wire("arr_result_valid", 1),
                     m.wire("res_mismatch", 1, "the array's result_valid_o disagrees with the streamer's record")};
  m.assign(a.res_mismatch, a.result_valid != p.pv_q[geo.stages - 1]);
  m.instance(array, "u_array")
      .param("DataWidth", geo.data_bits)
      .param("WeightWidth", geo.weight_bits)
      .param("PsumWidth", geo.psum_bits)
      .connect("clk_i", m.clk())
      .connect("rst_ni", m.rst_n())
      .connect("data_i", st.st_rd_data)
      .connect("data_valid_i", p.pv_q[0])
      .connect("weight_swap_i", p.pv_q[0] & p.pf_q)
      .connect("weight_i", t.weight)
      .connect("weight_load_i", t.load)
      .connect("result_o", a.result)
      .connect("result_valid_o", a.result_valid);
  return a;
}

// fx::sat_s of the signed signal `wide` to `bits` bits (2 <= bits < its width): the low bits when the
// dropped ones are all copies of the sign, else the largest code of the sign.
Expr saturate_signed(const Expr& wide, int bits) {
  const int top = wide.width() - 1;
  const Expr high = wide.slice(top, bits - 1);
  return ternary(paren(reduce_and(high) | ~reduce_or(high)), wide.slice(bits - 1, 0),
                 cat({wide[top], rep(bits - 1, ~wide[top])}));
}

// The accumulator init's wires and registers.
struct AccumulatorInit {
  Expr acc_bias;
};

// Accumulator init on chunk 0: the per-column bias read and the per-output init codes' queue, muxed
// into one init value per column.
AccumulatorInit build_accumulator_init(Module& m, const EngineGeometry& geo, const MemoryAndStatusPorts& ports,
                                       const ControlState& ctl, const StreamerIssue& s, const VectorPipeline& p) {
  const int cols = geo.cols, psum = geo.psum_bits, entry = geo.entry_bits, latency = geo.latency;
  const int count = geo.count_bits, addr = geo.addr_bits;
  m.blank();
  m.comment("Accumulator init on chunk 0. Per column (AccInit::kPerColumn, biases): read at stage L-1 for tile n\n"
            "(columns n*cols ..), used at stage L; columns at or past n_total get 0. Per output (kPerOutput,\n"
            "routing logits): one code per vector at init_base + b*init_s_b + m*init_s_m, read when the vector\n"
            "is issued, shifted left by init_shift and saturated to psum bits, queued until the vector reaches\n"
            "the accumulators, and given to every column. A descriptor uses one kind (or none).");
  const int wide_bits = psum + 31, queue_depth = 1 << clog2(latency + 3), queue_bits = clog2(queue_depth);
  const Expr bias_n = m.wire("bias_n", addr, "tile index of the vector at stage L-1");
  m.assign(bias_n, zext(p.pn_q.part_from((latency - 1) * entry, entry), addr));
  const Expr bv_q = m.reg("bv_q", 1, "the biases arrive this cycle");
  const Expr bl_q = m.reg("bl_q", count, "valid bias columns: n_total - n*cols");
  FlopGroup init_queue(m);
  const Flop io_arrives = init_queue.flop("init_code_arrives", 1, "a per-output init code arrives this cycle");
  const Expr io_rd = m.wire("io_rd", 1, "per-output init read of the vector issued this cycle");
  const Expr io_code = m.wire("io_code", psum, "the code read (lane 0)");
  const Expr io_wide = m.wire("io_wide", wide_bits, "sign-extended and shifted");
  const Expr io_sat = m.wire("io_sat", psum, "saturated to psum bits");
  const Memory io_fifo_q = m.memory("io_fifo_q", psum, queue_depth, "per-output init values of the vectors in flight");
  const Flop io_write = init_queue.flop("init_queue_write", queue_bits, "io_fifo_q entry of the next code");
  const Flop io_read = init_queue.flop("init_queue_read", queue_bits, "io_fifo_q entry of the oldest code");
  const Expr io_pop = m.wire("io_pop", 1);
  const Expr acc_bias = m.wire("acc_bias", cols * psum);
  const Expr bias_stage = p.pv_q[latency - 1] & ~p.pa_q[latency - 1] & ctl.init_bias.q;
  m.assign(io_rd, s.issue & (ctl.pos.chunk.q == lit(count, 0)) & ctl.init_out.q);
  m.assign(ports.brd_en, paren(bias_stage) | io_rd);
  m.assign(ports.brd_addr,
           ternary(ctl.init_out.q, ctl.pos.init_addr.q, ctl.init_base.q + bare(bias_n * lit(addr, cols))));
  m.assign(io_code, ports.brd_data.part(0, psum));
  m.assign(io_wide, shl(sext(io_code, wide_bits), ctl.init_shift.q));
  m.assign(io_sat, saturate_signed(io_wide, psum));
  m.assign(io_pop, p.pv_q[geo.stages - 1] & ~p.pa_q[geo.stages - 1] & ctl.init_out.q);
  const Expr bias_columns = bare(bias_n.slice(count - 1, 0) * lit(count, cols));
  m.always_ff({nb(bv_q, bias_stage), nb(bl_q, ctl.columns_total.q - bias_columns),
               if_(io_arrives.q, {nb(io_fifo_q[io_write.q], io_sat)})});
  Stmts queue_next = hold_flops(init_queue.flops());
  queue_next.push_back(blk(io_arrives.d, io_rd));
  queue_next.push_back(if_(io_arrives.q, {blk(io_write.d, io_write.q + lit(queue_bits, 1))}));
  queue_next.push_back(if_(io_pop, {blk(io_read.d, io_read.q + lit(queue_bits, 1))}));
  m.always_comb(std::move(queue_next));
  m.always_ff_flops(init_queue.flops());
  for (int c = 0; c < cols; ++c) {
    const Expr column_valid = paren(bv_q & (lit(count, c) < bl_q));
    const Expr bias = ternary(column_valid, ports.brd_data.part(c, psum), lit(psum, 0));
    m.assign(acc_bias.part(c, psum), ternary(ctl.init_out.q, io_fifo_q[io_read.q], bare(bias)));
  }
  return AccumulatorInit{acc_bias};
}

// The accumulators' and the activation bank's outputs.
struct ResultWires {
  Expr acc_out_valid, acc_out_data, a_valid, a_data, a_err;
  Expr acc_out_addr, acc_rd_valid, acc_rd_data, a_last, a_busy;  // unused
};

// The accumulators' and the activation bank's outputs (the unused ones under a lint waiver).
ResultWires declare_result_wires(Module& m, const EngineGeometry& geo) {
  const int cols = geo.cols, psum = geo.psum_bits;
  m.blank();
  const Expr acc_out_valid = m.wire("acc_out_valid", 1), acc_out_data = m.wire("acc_out_data", cols * psum);
  const Expr a_valid = m.wire("a_valid", 1), a_data = m.wire("a_data", cols * geo.result_bits);
  const Expr a_err = m.wire("a_err", 1);
  m.lint_off("UNUSEDSIGNAL", "the accumulators' entry address and read-out port and the activation bank's last/busy\n"
                             "flags are not needed for element-wise (identity, ReLU) outputs in streamer order.");
  const ResultWires r{acc_out_valid, acc_out_data, a_valid, a_data, a_err,
                      m.wire("acc_out_addr", geo.entry_bits), m.wire("acc_rd_valid", 1),
                      m.wire("acc_rd_data", cols * psum),
                      m.wire("a_last", 1), m.wire("a_busy", 1)};
  m.lint_on("UNUSEDSIGNAL");
  return r;
}

// The column accumulators (capsgen_accumulator_bank): the array's sums at the last pipeline stage, with
// the init on chunk 0 (unless the descriptor continues a split reduction), out on the last chunk.
void instantiate_accumulators(Module& m, const Module& accumulators, const EngineGeometry& geo, const ControlState& ctl,
                              const VectorPipeline& p, const ArrayWires& a, const AccumulatorInit& init,
                              const ResultWires& r) {
  const int last = geo.stages - 1, entry = geo.entry_bits;
  m.instance(accumulators, "u_acc")
      .param("PsumWidth", geo.psum_bits)
      .param("Depth", geo.depth)
      .param("AddrWidth", entry)
      .connect("clk_i", m.clk())
      .connect("rst_ni", m.rst_n())
      .connect("in_valid_i", p.pv_q[last])
      .connect("in_accumulate_i", p.pa_q[last] | ctl.acc_continue.q)
      .connect("in_last_i", p.pl_q[last])
      .connect("in_addr_i", p.pe_q.part_from(last * entry, entry))
      .connect("in_psum_i", a.result)
      .connect("in_bias_i", init.acc_bias)
      .connect("out_valid_o", r.acc_out_valid)
      .connect("out_addr_o", r.acc_out_addr)
      .connect("out_data_o", r.acc_out_data)
      .connect("rd_en_i", bit(false))
      .connect("rd_addr_i", lit(entry, 0))
      .connect("rd_valid_o", r.acc_rd_valid)
      .connect("rd_data_o", r.acc_rd_data);
}

// The activation bank (capsgen_activation_bank): the accumulators' results (shift, saturate, ReLU) in a
// Gemm, the Activate/Fill pass's elements and functions while it runs.
void instantiate_activation_bank(Module& m, const Module& activation, const EngineGeometry& geo,
                                 const ControlState& ctl, const ActPassWires& pass, const ResultWires& r) {
  const Expr act_mode_q = ctl.act_mode.q;
  m.instance(activation, "u_act")
      .connect("clk_i", m.clk())
      .connect("rst_ni", m.rst_n())
      .connect("in_valid_i", ternary(act_mode_q, pass.act_valid, r.acc_out_valid))
      .connect("in_data_i", ternary(act_mode_q, pass.act_in, r.acc_out_data))
      .connect("func_i", ternary(act_mode_q, ctl.act_func.q, cat({lit_bin(2, 0), ctl.relu.q})))
      .connect("len_i", ternary(act_mode_q, ctl.act_len.q, lit(geo.act.len_bits, 1)))
      .connect("shift_i", ternary(act_mode_q, lit(geo.shift_bits, 0), ctl.reduce_shift.q))
      .connect("norm_shift_i", ternary(act_mode_q, ctl.act_norm_shift.q, lit(geo.act.nshift_bits, 0)))
      .connect("out_valid_o", r.a_valid)
      .connect("out_last_o", r.a_last)
      .connect("out_data_o", r.a_data)
      .connect("busy_o", r.a_busy)
      .connect("err_o", r.a_err);
}

// The output FIFO's state.
struct OutputFifo {
  Memory fifo_mem;
  Expr read_q, count_q, fifo_overflow;  // the oldest record's entry, the records held
};

// The output FIFO between the activation bank and the writer: Gemm result vectors at act bits per
// column; pushing into a full FIFO is an overflow (the credits rule it out).
OutputFifo build_output_fifo(Module& m, const EngineGeometry& geo, const ControlState& ctl, const StreamerIssue& s,
                             const ResultWires& r) {
  const int cols = geo.cols, act = geo.act_bits, result = geo.result_bits, pointer = geo.fifo_bits;
  m.blank();
  m.comment(fmt::format("Output FIFO: {} result vectors of {} act codes.", geo.fifo_depth, cols));
  const Memory fifo_mem = m.memory("fifo_mem", cols * act, geo.fifo_depth);
  FlopGroup pointers(m);
  const Flop write = pointers.flop("fifo_write", pointer, "fifo_mem entry of the next record");
  const Flop read = pointers.flop("fifo_read", pointer, "fifo_mem entry of the oldest record");
  const Flop count = pointers.flop("fifo_count", pointer + 1, "records held");
  const Expr fifo_in = m.wire("fifo_in", cols * act, "the activation results, act bits per column");
  const Expr fifo_overflow = m.wire("fifo_overflow", 1);
  if (result > act) {
    m.lint_off("UNUSEDSIGNAL", "the activation bank's outputs are wider than act bits only for Norm codes.");
    const Expr a_data_unused = m.wire("a_data_unused", cols * result);
    m.assign(a_data_unused, r.a_data);
    m.lint_on("UNUSEDSIGNAL");
  }
  for (int c = 0; c < cols; ++c)
    m.assign(fifo_in.part(c, act), result == act ? r.a_data.part(c, result) : r.a_data.part_from(c * result, act));
  const Expr fifo_push = m.wire("fifo_push", 1, "a Gemm result vector");
  m.assign(fifo_push, r.a_valid & ~ctl.act_mode.q);
  m.assign(fifo_overflow, fifo_push & (count.q == lit(pointer + 1, geo.fifo_depth)) & ~s.pop);
  Stmts next = hold_flops(pointers.flops());
  next.push_back(if_(fifo_push, {blk(write.d, write.q + lit(pointer, 1))}));
  next.push_back(if_(s.pop, {blk(read.d, read.q + lit(pointer, 1))}));
  next.push_back(blk(count.d, count.q + zext(fifo_push, pointer + 1) - zext(s.pop, pointer + 1)));
  m.always_comb(std::move(next));
  m.always_ff_flops(pointers.flops());
  m.always_ff({if_(fifo_push, {nb(fifo_mem[write.q], fifo_in)})});
  return OutputFifo{fifo_mem, read.q, count.q, fifo_overflow};
}

// The output writer's outputs.
struct WriterWires {
  Expr done, busy, wr_en, wr_addr, wr_data, wr_vec, wr_mask;
};

// The output writer (capsgen_out_writer): pops the FIFO's records and writes them at the descriptor's
// output addresses; with acc_hold it steps through the records without writing, one per cycle (as
// whole records, always ready).
WriterWires instantiate_output_writer(Module& m, const Module& out_writer, const EngineGeometry& geo,
                                      const DescriptorPorts& desc, const MemoryAndStatusPorts& ports,
                                      const ControlState& ctl, const DescriptorDecode& decode, const StreamerIssue& s,
                                      const TileReaderWires& t, const ActPassWires& pass, const OutputFifo& f) {
  const int cols = geo.cols;
  const WriterWires w{m.wire("w_done", 1),
                      m.wire("w_busy", 1),
                      m.wire("w_wr_en", 1),
                      m.wire("w_wr_addr", geo.addr_bits),
                      m.wire("w_wr_data", cols * geo.act_bits),
                      m.wire("w_wr_vec", 1),
                      m.wire("w_wr_mask", cols)};
  m.lint_off("UNUSEDSIGNAL", "the units' busy flags are not needed: the engine is busy until the writer's or the pass's done.");
  const Expr units_busy = m.wire("units_busy", 3);
  m.assign(units_busy, cat({pass.busy, w.busy, t.busy}));
  m.lint_on("UNUSEDSIGNAL");
  const GatherDescriptorPorts& g = desc.gather;
  m.instance(out_writer, "u_writer")
      .connect("clk_i", m.clk())
      .connect("rst_ni", m.rst_n())
      .connect("start_i", decode.start)
      .connect("desc_batch_i", g.batch)
      .connect("desc_m_total_i", g.m_total)
      .connect("desc_m_block_i", g.m_block)
      .connect("desc_n_tiles_i", desc.n_tiles)
      .connect("desc_n_total_i", desc.n_total)
      .connect("desc_base_i", desc.o_base)
      .connect("desc_s_b_i", desc.o_s_b)
      .connect("desc_s_m_i", desc.o_s_m)
      .connect("desc_s_o2_i", desc.o_s_o2)
      .connect("desc_o_wrap_i", desc.o_wrap)
      .connect("desc_o_div_i", desc.o_div)
      .connect("desc_o_sel_i", desc.o_sel)
      .connect("desc_o_vec_i", desc.o_vec | desc.acc_hold)
      .connect("rec_valid_i", f.count_q != lit(geo.fifo_bits + 1, 0))
      .connect("rec_data_i", f.fifo_mem[f.read_q])
      .connect("rec_pop_o", s.pop)
      .connect("wr_ready_i", ports.wr_ready | ctl.acc_hold.q)
      .connect("wr_en_o", w.wr_en)
      .connect("wr_addr_o", w.wr_addr)
      .connect("wr_vec_o", w.wr_vec)
      .connect("wr_mask_o", w.wr_mask)
      .connect("wr_data_o", w.wr_data)
      .connect("busy_o", w.busy)
      .connect("done_o", w.done);
  return w;
}

// The Activate/Fill pass (capsgen_act_pass): its element goes to activation unit 0 sign-extended to
// psum bits (the other units get 0), unit 0's result comes back to it.
void instantiate_act_pass(Module& m, const Module& act_pass, const EngineGeometry& geo, const DescriptorPorts& desc,
                          const ControlState& ctl, const DescriptorDecode& decode, const ActPassWires& pass,
                          const StagingWrite& st, const ResultWires& r) {
  const int cols = geo.cols, psum = geo.psum_bits;
  m.assign(pass.act_in, zext(sext(pass.act_data, psum), cols * psum));
  m.instance(act_pass, "u_act_pass")
      .connect("clk_i", m.clk())
      .connect("rst_ni", m.rst_n())
      .connect("start_i", decode.a_start)
      .connect("fill_i", desc.kind == kind_code(isa::kEngineKindFill))
      .connect("desc_norm_i", desc.a_func == lit(3, 2))
      .connect("desc_count_i", desc.a_count)
      .connect("desc_n_i", desc.a_n)
      .connect("desc_in_base_i", desc.a_in_base)
      .connect("desc_in_s_v_i", desc.a_in_s_v)
      .connect("desc_in_s_e_i", desc.a_in_s_e)
      .connect("desc_out_base_i", desc.a_out_base)
      .connect("desc_out_s_v_i", desc.a_out_s_v)
      .connect("desc_out_s_e_i", desc.a_out_s_e)
      .connect("desc_value_i", desc.f_value)
      .connect("rd_en_o", pass.rd_en)
      .connect("rd_addr_o", pass.rd_addr)
      .connect("rd_data_i", st.drd_elem)
      .connect("act_valid_o", pass.act_valid)
      .connect("act_data_o", pass.act_data)
      .connect("res_valid_i", r.a_valid & ctl.act_mode.q)
      .connect("res_data_i", r.a_data.part(0, geo.result_bits))
      .connect("wr_en_o", pass.wr_en)
      .connect("wr_addr_o", pass.wr_addr)
      .connect("wr_data_o", pass.wr_data)
      .connect("busy_o", pass.busy)
      .connect("done_o", pass.done);
}

// The Gemm writer's data at result width, lane c the writer's act code c sign-extended to result bits.
Expr writer_lanes(const EngineGeometry& geo, const WriterWires& w) {
  const int cols = geo.cols, act = geo.act_bits, result = geo.result_bits;
  std::vector<Expr> lanes;  // lane cols-1 first
  for (int c = cols - 1; c >= 0; --c) {
    const int low = c * act, high = low + act - 1;
    const Expr code = w.wr_data.slice(high, low);
    lanes.push_back(result == act ? code : cat({rep(result - act, w.wr_data[high]), code}));
  }
  return cols == 1 ? lanes.front() : cat(lanes);
}

// The write port: the Gemm writer's results (none while acc_hold) or, while it runs, the Activate/Fill
// pass's (one result in lane 0).
void drive_write_port(Module& m, const EngineGeometry& geo, const MemoryAndStatusPorts& ports, const ControlState& ctl,
                      const ActPassWires& pass, const WriterWires& w) {
  const int cols = geo.cols;
  const Expr act_mode_q = ctl.act_mode.q;
  m.comment("The write port: the Gemm writer's results (act codes, sign-extended) or the pass's.");
  m.assign(ports.wr_en, ternary(act_mode_q, pass.wr_en, paren(w.wr_en & ~ctl.acc_hold.q)));
  m.assign(ports.wr_addr, ternary(act_mode_q, pass.wr_addr, w.wr_addr));
  m.assign(ports.wr_vec, ~act_mode_q & w.wr_vec);
  m.assign(ports.wr_mask, ternary(act_mode_q, lit(cols, 1), w.wr_mask));
  const Expr w_lanes = m.wire("w_lanes", cols * geo.result_bits, "the writer's lanes at result width");
  m.assign(w_lanes, writer_lanes(geo, w));
  m.assign(ports.wr_data, ternary(act_mode_q, zext(pass.wr_data, cols * geo.result_bits), w_lanes));
}

// The Gemm descriptor's load on start: the streamer's copy of the counts, the init, reduction and
// split-reduction fields, the position at vector 0 of tile 0, chunk 0, batch item 0, and every
// output FIFO entry free as a credit.
Stmts gemm_descriptor_load(const EngineGeometry& geo, const DescriptorPorts& desc, const ControlState& ctl) {
  const int entry = geo.entry_bits, count = geo.count_bits;
  const GatherDescriptorPorts& g = desc.gather;
  const StreamerPosition& p = ctl.pos;
  const Expr count_zero = lit(count, 0), count_one = lit(count, 1);
  const Expr first_block = ternary(g.m_total < g.m_block, g.m_total, g.m_block);
  const Expr n_tiles = entry == count ? desc.n_tiles
                       : entry > count ? zext(desc.n_tiles, entry)
                                       : desc.n_tiles.slice(entry - 1, 0);
  return {blk(ctl.busy.d, bit(true)),
          blk(ctl.streaming.d, bit(true)),
          blk(ctl.batch_max.d, g.batch - count_one),
          blk(ctl.vectors_total.d, g.m_total),
          blk(ctl.block_vectors.d, g.m_block),
          blk(ctl.first_block_len.d, first_block),
          blk(p.block_len.d, first_block),
          blk(ctl.chunk_max.d, g.k_chunks - count_one),
          blk(ctl.tile_max.d, desc.n_tiles - count_one),
          blk(ctl.columns_total.d, desc.n_total),
          blk(ctl.tiles.d, n_tiles),
          blk(ctl.init_bias.d, desc.init_bias),
          blk(ctl.init_base.d, desc.init_base),
          blk(ctl.relu.d, desc.relu),
          blk(ctl.acc_continue.d, desc.acc_continue),
          blk(ctl.acc_hold.d, desc.acc_hold),
          blk(ctl.init_out.d, desc.init_out),
          blk(ctl.init_batch_stride.d, desc.init_s_b),
          blk(ctl.init_vector_stride.d, desc.init_s_m),
          blk(ctl.init_shift.d, desc.init_shift),
          blk(p.init_addr.d, desc.init_base),
          blk(p.init_block_addr.d, desc.init_base),
          blk(p.init_batch_addr.d, desc.init_base),
          blk(ctl.reduce_shift.d, desc.shift),
          blk(p.vector.d, count_zero),
          blk(p.tile.d, count_zero),
          blk(p.chunk.d, count_zero),
          blk(p.block_start.d, count_zero),
          blk(p.batch.d, count_zero),
          blk(p.entry.d, lit(entry, 0)),
          blk(ctl.credits.d, lit(geo.fifo_bits + 1, geo.fifo_depth))};
}

// The Activate/Fill descriptor's load on a_start: the activation bank's function, vector length and
// norm shift for the pass; act_mode_q hands the bank and the ports to the pass.
Stmts act_descriptor_load(const EngineGeometry& geo, const DescriptorPorts& desc, const ControlState& ctl) {
  const int len_bits = geo.act.len_bits;
  return {blk(ctl.busy.d, bit(true)), blk(ctl.act_mode.d, bit(true)), blk(ctl.act_func.d, desc.a_func),
          blk(ctl.act_len.d, len_bits >= geo.count_bits ? zext(desc.a_n, len_bits) : desc.a_n.slice(len_bits - 1, 0)),
          blk(ctl.act_norm_shift.d, desc.a_norm_shift)};
}

// The controller: descriptor accept and load, the streamer's counters and the output credits, done
// (the writer's or the pass's), and the sticky error (staging protocol, activation queue, array result
// timing, output FIFO overflow).
void build_controller(Module& m, const EngineGeometry& geo, const DescriptorPorts& desc, const ControlState& ctl,
                      const DescriptorDecode& decode, const StagingWrite& st, const StreamerIssue& s,
                      const ArrayWires& a, const ResultWires& r, const OutputFifo& f, const WriterWires& w,
                      const ActPassWires& pass) {
  const int credit_bits = geo.fifo_bits + 1;
  m.blank();
  m.comment("Descriptor accept, streamer counters, credits, done and the sticky error.");
  const Stmts load = gemm_descriptor_load(geo, desc, ctl);
  const Stmts a_load = act_descriptor_load(geo, desc, ctl);
  const Stmts advance = streamer_advance(geo, ctl, s);
  const Expr lo = bit(false), hi = bit(true);
  const std::vector<Flop>& flops = ctl.flops;
  Stmts next = hold_flops(flops);
  for (Stmt& stmt : Stmts{
           blk(ctl.done.d, decode.accept & decode.empty),
           if_(decode.start, load,
               {if_(s.issue, advance),
                blk(ctl.credits.d, ctl.credits.q - zext(s.issue & s.last_k, credit_bits) + zext(s.pop, credit_bits))}),
           if_(ctl.busy.q & (w.done | pass.done), {blk(ctl.busy.d, lo), blk(ctl.done.d, hi), blk(ctl.act_mode.d, lo)}),
           if_(decode.a_start, a_load),
           if_(st.st_error | r.a_err | a.res_mismatch | f.fifo_overflow, {blk(ctl.error.d, hi)})})
    next.push_back(std::move(stmt));
  m.always_comb(std::move(next));
  m.always_ff_flops(flops);
}

// The statistics counters of the last descriptor, cleared on accept.
void build_statistics(Module& m, const MemoryAndStatusPorts& ports, const ControlState& ctl,
                      const DescriptorDecode& decode, const StagingWrite& st, const StreamerIssue& s,
                      const WriterWires& w) {
  const Statistics& stat = ctl.stat;
  const Expr zero = lit(32, 0), one = lit(32, 1);
  m.blank();
  m.comment("Statistics of the last descriptor (why the streamer did not issue, by first missing condition).");
  const Expr waiting = ctl.streaming.q & st.st_rd_avail;
  const auto count_up = [&](const Flop& f) { return blk(f.d, f.q + one); };
  Stmts next = hold_flops(stat.flops);
  next.push_back(
      if_(decode.start | decode.a_start,
          {blk(stat.cycles.d, one), blk(stat.vectors.d, zero), blk(stat.stall_data.d, zero),
           blk(stat.stall_tile.d, zero), blk(stat.stall_out.d, zero), blk(stat.wr_wait.d, zero)},
          {if_(ctl.busy.q, {count_up(stat.cycles)}),
           if_(~ctl.act_mode.q & ~ctl.acc_hold.q & w.wr_en & ~ports.wr_ready, {count_up(stat.wr_wait)}),
           if_(s.issue, {count_up(stat.vectors)}), if_(ctl.streaming.q & ~st.st_rd_avail, {count_up(stat.stall_data)}),
           if_(waiting & ~s.tile_ok, {count_up(stat.stall_tile)}),
           if_(waiting & s.tile_ok & ~s.credit_ok, {count_up(stat.stall_out)})}));
  m.always_comb(std::move(next));
  m.always_ff_flops(stat.flops);
}

// The handshake, status and statistics outputs from their registers.
void drive_status_ports(Module& m, const DescriptorPorts& desc, const MemoryAndStatusPorts& ports,
                        const ControlState& ctl) {
  m.assign(desc.ready, ~ctl.busy.q);
  m.assign(ports.busy, ctl.busy.q);
  m.assign(ports.done, ctl.done.q);
  m.assign(ports.error, ctl.error.q);
  m.assign(ports.stat_cycles, ctl.stat.cycles.q);
  m.assign(ports.stat_vectors, ctl.stat.vectors.q);
  m.assign(ports.stat_stall_data, ctl.stat.stall_data.q);
  m.assign(ports.stat_stall_tile, ctl.stat.stall_tile.q);
  m.assign(ports.stat_stall_out, ctl.stat.stall_out.q);
  m.assign(ports.stat_wr_wait, ctl.stat.wr_wait.q);
}

}  // namespace

// The pieces are built in the order the module prints them (declarations, assigns and instances as
// added): reordering the calls changes the generated Verilog.
Module build_engine(const AccelConfig& cfg) {
  const EngineGeometry geo = engine_geometry(cfg);
  if (geo.stages < 3) throw std::logic_error("build_engine: array latency below 2");
  const EngineChildren child = engine_children(cfg);

  Module m(kEngineModule, engine_description(geo));
  const DescriptorPorts desc = declare_descriptor_ports(m, geo);
  const MemoryAndStatusPorts ports = declare_memory_and_status_ports(m, geo);
  const ControlState ctl = declare_control_state(m, geo);
  const DescriptorDecode decode = build_descriptor_decode(m, geo, desc, ctl);
  const ActPassWires pass = declare_act_pass_wires(m, geo);

  // Operands in: data through the (vector-wide) gather into the staging buffer, weights through the
  // tile reader.
  const VectorGather vector = build_vector_gather(m, geo, desc, ctl, decode);
  const GatherToStaging gather = build_gather_to_staging(m, geo, ports, ctl, pass, vector);
  instantiate_gather(m, child.gather, desc, decode, gather.element);
  const StreamerIssue issue = build_streamer_issue(m, geo, ctl, gather.staging);
  instantiate_staging(m, child.staging, geo, ports, ctl, vector, gather.staging, issue);
  const TileReaderWires tiles = instantiate_tile_reader(m, child.tile_reader, geo, desc, ports, ctl, decode, issue);

  // The array and what follows it: accumulators (with their init) and the activation bank.
  const VectorPipeline pipe = build_vector_pipeline(m, geo, ctl, issue);
  const ArrayWires array = instantiate_array(m, child.array, geo, gather.staging, tiles, pipe);
  const AccumulatorInit init = build_accumulator_init(m, geo, ports, ctl, issue, pipe);
  const ResultWires results = declare_result_wires(m, geo);
  instantiate_accumulators(m, child.accumulators, geo, ctl, pipe, array, init, results);
  instantiate_activation_bank(m, child.activation, geo, ctl, pass, results);

  // Results out: the output FIFO and writer, the Activate/Fill pass, the write port.
  const OutputFifo fifo = build_output_fifo(m, geo, ctl, issue, results);
  const WriterWires writer =
      instantiate_output_writer(m, child.out_writer, geo, desc, ports, ctl, decode, issue, tiles, pass, fifo);
  instantiate_act_pass(m, child.act_pass, geo, desc, ctl, decode, pass, gather.staging, results);
  drive_write_port(m, geo, ports, ctl, pass, writer);

  build_controller(m, geo, desc, ctl, decode, gather.staging, issue, array, results, fifo, writer, pass);
  build_statistics(m, ports, ctl, decode, gather.staging, issue, writer);
  drive_status_ports(m, desc, ports, ctl);
  return m;
}

void emit_engine(const AccelConfig& cfg, Design& design) {
  design.add_module(build_tile_reader(cfg));
  design.add_module(build_out_writer(cfg));
  design.add_module(build_act_pass(cfg));
  design.add_module(build_engine(cfg));
}

}  // namespace capsgen::emit

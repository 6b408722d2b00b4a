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

// The reset statements of a control block: `reset` (the state that must start idle), then a zero for
// every register of `regs` that `reset` does not set. Descriptor fields and position counters start
// at zero; a descriptor's start loads them before they are used.
Stmts with_zero_reset(const Module& m, Stmts reset, const std::vector<std::string>& regs) {
  const std::vector<std::string> have = assigned_signals(reset);
  std::vector<std::string> rest;
  for (const std::string& r : regs)
    if (std::find(have.begin(), have.end(), r) == have.end()) rest.push_back(r);
  for (Stmt& z : m.reset_to_zero(rest)) reset.push_back(std::move(z));
  return reset;
}

// The same for registers given by their handles.
Stmts with_zero_reset(const Module& m, Stmts reset, const std::vector<Expr>& regs) {
  std::vector<std::string> names;
  for (const Expr& r : regs) names.push_back(r.text());
  return with_zero_reset(m, std::move(reset), names);
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

// The descriptor as the tile reader keeps it: counts minus one where the loops compare with the last
// value, the strides, and the derived offsets of the first row read of a tile.
struct TileDescriptorRegisters {
  Expr bm1_q, mtot_q, mblk_q, kcm1_q, ntm1_q, rt_q, ntot_q, grm1_q, gtop_q, etop_q;
  Expr s_b_q, s_k_q, s_n_q, s_r_q, s_c_q, top_q, dtop_q, dwrap_q;
  Expr diag_q, strided_q;
};

TileDescriptorRegisters declare_tile_descriptor_registers(Module& m) {
  const int count = kCountBits, addr = kAddrBits;
  m.comment("Descriptor.");
  return TileDescriptorRegisters{
      m.reg("bm1_q", count),  m.reg("mtot_q", count), m.reg("mblk_q", count), m.reg("kcm1_q", count),
      m.reg("ntm1_q", count), m.reg("rt_q", count),   m.reg("ntot_q", count), m.reg("grm1_q", count),
      m.reg("gtop_q", count), m.reg("etop_q", count), m.reg("s_b_q", addr),   m.reg("s_k_q", addr),
      m.reg("s_n_q", addr),   m.reg("s_r_q", addr),   m.reg("s_c_q", addr),   m.reg("top_q", addr),
      m.reg("dtop_q", addr),  m.reg("dwrap_q", addr), m.reg("diag_q", 1),     m.reg("strided_q", 1)};
}

// The reader's state, its tile loop counters and offsets, and the row walker (the row, diag group and
// element, strided column and address of the next read).
struct TileLoopRegisters {
  Expr busy_q, loading_q, held_q;
  Expr n_q, k_q, b_q, m0_q, rem_q, lanes_q, bb_q, kofs_q, nofs_q, first_q, raddr_q;
  Expr r_q, g_q, e_q, sc_q, laddr_q;
  Memory rowbuf_q;
};

TileLoopRegisters declare_tile_loop_registers(Module& m, const TileGeometry& g) {
  const int count = kCountBits, addr = kAddrBits;
  m.comment("State: busy, reading a tile's rows after its first, a tile loaded (or loading) and not yet started.");
  const Expr busy_q = m.reg("busy_q", 1), loading_q = m.reg("loading_q", 1), held_q = m.reg("held_q", 1);
  m.comment(
      "Tile counters and offsets; rem_q = r_total - k*rows and lanes_q = n_total - n*cols (floored at 0);\n"
      "first_q = address of the current tile's first row read (row rows-1), kept ready so that the read can\n"
      "go out in the cycle the previous tile starts (the load then ends in time for a swap every rows cycles).");
  return TileLoopRegisters{busy_q,
                           loading_q,
                           held_q,
                           m.reg("n_q", count),
                           m.reg("k_q", count),
                           m.reg("b_q", count),
                           m.reg("m0_q", count),
                           m.reg("rem_q", count),
                           m.reg("lanes_q", count),
                           m.reg("bb_q", addr),
                           m.reg("kofs_q", addr),
                           m.reg("nofs_q", addr),
                           m.reg("first_q", addr),
                           m.reg("raddr_q", addr),
                           m.reg("r_q", g.row_index_bits, "next row to read"),
                           m.reg("g_q", count, "diag: group of row r_q"),
                           m.reg("e_q", count, "diag: element of row r_q within its group"),
                           m.reg("sc_q", g.col_index_bits, "strided: next column of the row"),
                           m.reg("laddr_q", addr, "strided: its address"),
                           m.memory("rowbuf_q", g.weight_bits, g.cols, "strided: the columns of the row read so far")};
}

// The row (strided: the column) read in the previous cycle, on its way to the array.
struct TileInFlightRegisters {
  Expr p_valid_q, p_read_q, p_diag_q, p_strided_q, p_lanes_q, p_g_q, p_sc_q;
};

TileInFlightRegisters declare_tile_in_flight_registers(Module& m, const TileGeometry& g) {
  m.comment("The row (strided: the column) in flight, read in the previous cycle.");
  return TileInFlightRegisters{m.reg("p_valid_q", 1, "a whole row goes to the array this cycle"),
                               m.reg("p_read_q", 1),
                               m.reg("p_diag_q", 1),
                               m.reg("p_strided_q", 1),
                               m.reg("p_lanes_q", kCountBits),
                               m.reg("p_g_q", kCountBits),
                               m.reg("p_sc_q", g.col_index_bits)};
}

// The address walker's and the tile loops' combinational signals.
struct TileWalkerWires {
  Expr begin_tile, row_rd, cur_r, cur_g, cur_e, cur_addr, cur_sc, cur_laddr, row_done, row_ok;
  Expr last_row, last_block, last_tile, n_wrap, k_wrap, nofs_next, kofs_next, bb_next;
};

TileWalkerWires declare_tile_walker_wires(Module& m, const TileGeometry& g) {
  const int count = kCountBits, addr = kAddrBits;
  return TileWalkerWires{m.wire("begin_tile", 1, "the next tile's first row is read this cycle"),
                         m.wire("row_rd", 1, "a tile row is handled this cycle (read, or zeros)"),
                         m.wire("cur_r", g.row_index_bits, "its row"),
                         m.wire("cur_g", count),
                         m.wire("cur_e", count),
                         m.wire("cur_addr", addr),
                         m.wire("cur_sc", g.col_index_bits, "strided: column read this cycle"),
                         m.wire("cur_laddr", addr, "strided: its address"),
                         m.wire("row_done", 1, "the row's last read (every row but a strided one: its only one)"),
                         m.wire("row_ok", 1, "the row holds elements (else zeros, no read)"),
                         m.wire("last_row", 1),
                         m.wire("last_block", 1),
                         m.wire("last_tile", 1),
                         m.wire("n_wrap", 1),
                         m.wire("k_wrap", 1),
                         m.wire("nofs_next", addr),
                         m.wire("kofs_next", addr),
                         m.wire("bb_next", addr)};
}

// Every signal of the tile reader.
struct TileReader {
  TileGeometry geometry;
  TileReaderPorts port;
  TileDescriptorRegisters desc;
  TileLoopRegisters loop;
  TileInFlightRegisters flight;
  TileWalkerWires walk;
};

// The address walker: which row (group, element, column) is read this cycle and where, whether the
// row holds elements, and where the tile loops go after the tile's last row.
void build_tile_address_walker(Module& m, const TileReader& t) {
  const TileGeometry& g = t.geometry;
  const TileReaderPorts& p = t.port;
  const TileDescriptorRegisters& d = t.desc;
  const TileLoopRegisters& loop = t.loop;
  const TileWalkerWires& w = t.walk;
  const Expr first_column = lit(g.col_index_bits, 0), zero_addr = lit(kAddrBits, 0);
  m.assign(w.begin_tile, loop.busy_q & ~loop.loading_q & (~loop.held_q | p.tile_start_i));
  m.assign(w.row_rd, w.begin_tile | loop.loading_q);
  m.assign(w.cur_r, ternary(loop.loading_q, loop.r_q, lit(g.row_index_bits, g.rows - 1)));
  m.assign(w.cur_g, ternary(loop.loading_q, loop.g_q, d.gtop_q));
  m.assign(w.cur_e, ternary(loop.loading_q, loop.e_q, d.etop_q));
  m.assign(w.cur_addr, ternary(loop.loading_q, loop.raddr_q, loop.first_q));
  m.assign(w.cur_sc, ternary(loop.loading_q, loop.sc_q, first_column));
  m.assign(w.cur_laddr, ternary(w.cur_sc == first_column, w.cur_addr, loop.laddr_q));
  m.assign(w.row_ok,
           ternary(d.diag_q, paren((w.cur_e < d.rt_q) & (w.cur_g < d.ntot_q) & (w.cur_g < lit(kCountBits, g.cols))),
                   zext(w.cur_r, kCountBits) < loop.rem_q));
  m.assign(w.last_row, w.cur_r == lit(g.row_index_bits, 0));
  m.assign(w.last_block, sum_at_least(loop.m0_q, d.mblk_q, d.mtot_q));
  m.assign(w.n_wrap, loop.n_q == d.ntm1_q);
  m.assign(w.k_wrap, loop.k_q == d.kcm1_q);
  m.assign(w.last_tile, w.n_wrap & w.k_wrap & w.last_block & (loop.b_q == d.bm1_q));
  m.assign(w.nofs_next, ternary(w.n_wrap, zero_addr, loop.nofs_q + d.s_n_q));
  m.assign(w.kofs_next, ternary(w.n_wrap, ternary(w.k_wrap, zero_addr, loop.kofs_q + d.s_k_q), loop.kofs_q));
  m.assign(w.bb_next, ternary(paren(w.n_wrap & w.k_wrap & w.last_block), loop.bb_q + d.s_b_q, loop.bb_q));
  m.assign(w.row_done, ~d.strided_q | d.diag_q | ~w.row_ok | (w.cur_sc == lit(g.col_index_bits, g.cols - 1)) |
                           (bare(zext(w.cur_sc, kCountBits) + lit(kCountBits, 1)) >= loop.lanes_q));
  m.assign(p.rd_en_o, w.row_rd & w.row_ok);
  m.assign(p.rd_addr_o, ternary(paren(d.strided_q & ~d.diag_q), w.cur_laddr, w.cur_addr));
}

// start_i: the descriptor registers and the loops' first tile.
Stmts tile_descriptor_load(const TileReader& t) {
  const TileReaderPorts& p = t.port;
  const TileDescriptorRegisters& d = t.desc;
  const TileLoopRegisters& loop = t.loop;
  const Expr one = lit(kCountBits, 1), zero_count = lit(kCountBits, 0), zero_addr = lit(kAddrBits, 0);
  return {nb(d.bm1_q, p.desc_batch_i - one),
          nb(d.mtot_q, p.desc_m_total_i),
          nb(d.mblk_q, p.desc_m_block_i),
          nb(d.kcm1_q, p.desc_k_chunks_i - one),
          nb(d.ntm1_q, p.desc_n_tiles_i - one),
          nb(d.rt_q, p.desc_r_total_i),
          nb(d.ntot_q, p.desc_n_total_i),
          nb(d.grm1_q, p.desc_group_rows_i - one),
          nb(d.gtop_q, p.desc_gtop_i),
          nb(d.etop_q, p.desc_etop_i),
          nb(d.s_b_q, p.desc_s_b_i),
          nb(d.s_k_q, p.desc_s_k_i),
          nb(d.s_n_q, p.desc_s_n_i),
          nb(d.s_r_q, p.desc_s_r_i),
          nb(d.top_q, p.desc_top_i),
          nb(d.dtop_q, p.desc_dtop_i),
          nb(d.dwrap_q, p.desc_dwrap_i),
          nb(d.diag_q, p.desc_diag_i),
          nb(d.strided_q, p.desc_strided_i),
          nb(d.s_c_q, p.desc_s_c_i),
          nb(loop.sc_q, lit(t.geometry.col_index_bits, 0)),
          nb(loop.n_q, zero_count),
          nb(loop.k_q, zero_count),
          nb(loop.b_q, zero_count),
          nb(loop.m0_q, zero_count),
          nb(loop.rem_q, p.desc_r_total_i),
          nb(loop.lanes_q, p.desc_n_total_i),
          nb(loop.bb_q, p.desc_base_i),
          nb(loop.kofs_q, zero_addr),
          nb(loop.nofs_q, zero_addr),
          nb(loop.first_q, ternary(p.desc_diag_i, p.desc_base_i + p.desc_dtop_i, p.desc_base_i + p.desc_top_i))};
}

// After a tile's last row: the loop counters (n innermost, then k, then the block and the batch item)
// and the offsets of the next tile.
Stmts tile_loop_advance(const TileReader& t) {
  const TileGeometry& g = t.geometry;
  const TileDescriptorRegisters& d = t.desc;
  const TileLoopRegisters& loop = t.loop;
  const TileWalkerWires& w = t.walk;
  const Expr one = lit(kCountBits, 1), zero_count = lit(kCountBits, 0);
  const Expr rows = lit(kCountBits, g.rows), cols = lit(kCountBits, g.cols);
  return {nb(loop.nofs_q, w.nofs_next),
          nb(loop.kofs_q, w.kofs_next),
          nb(loop.bb_q, w.bb_next),
          nb(loop.first_q, ternary(d.diag_q, w.bb_next + d.dtop_q, w.bb_next + w.kofs_next + w.nofs_next + d.top_q)),
          if_(w.n_wrap,
              {nb(loop.n_q, zero_count), nb(loop.lanes_q, d.ntot_q),
               if_(w.k_wrap,
                   {nb(loop.k_q, zero_count), nb(loop.rem_q, d.rt_q),
                    if_(w.last_block, {nb(loop.m0_q, zero_count), nb(loop.b_q, loop.b_q + one)},
                        {nb(loop.m0_q, loop.m0_q + d.mblk_q)})},
                   {nb(loop.k_q, loop.k_q + one),
                    nb(loop.rem_q, ternary(loop.rem_q > rows, loop.rem_q - rows, zero_count))})},
              {nb(loop.n_q, loop.n_q + one),
               nb(loop.lanes_q, ternary(loop.lanes_q > cols, loop.lanes_q - cols, zero_count))}),
          if_(w.last_tile, {nb(loop.busy_q, bit(false))})};
}

// The row walker's step after each read: the next column of a strided row, or the next row (diag: the
// next element, or the previous group's last), and the next tile after the last row.
Stmts tile_row_step(const TileReader& t) {
  const TileGeometry& g = t.geometry;
  const TileDescriptorRegisters& d = t.desc;
  const TileLoopRegisters& loop = t.loop;
  const TileWalkerWires& w = t.walk;
  const Expr one = lit(kCountBits, 1), first_column = lit(g.col_index_bits, 0);
  return {
      if_(w.row_rd & ~w.row_done, {nb(loop.loading_q, bit(true)), nb(loop.sc_q, w.cur_sc + lit(g.col_index_bits, 1)),
                                   nb(loop.laddr_q, w.cur_laddr + d.s_c_q), nb(loop.raddr_q, w.cur_addr),
                                   nb(loop.r_q, w.cur_r), nb(loop.g_q, w.cur_g), nb(loop.e_q, w.cur_e)}),
      if_(w.row_rd & w.row_done,
          {nb(loop.loading_q, ~w.last_row), nb(loop.sc_q, first_column),
           nb(loop.r_q, w.cur_r - lit(g.row_index_bits, 1)),
           if_(d.diag_q & (w.cur_e == lit(kCountBits, 0)),
               {nb(loop.e_q, d.grm1_q), nb(loop.g_q, w.cur_g - one), nb(loop.raddr_q, loop.bb_q + d.dwrap_q)},
               {nb(loop.e_q, w.cur_e - one), nb(loop.g_q, w.cur_g), nb(loop.raddr_q, w.cur_addr - d.s_r_q)}),
           if_(w.last_row, tile_loop_advance(t))})};
}

// The control registers: descriptor load, tile handshake (held_q), row walker and tile loops.
void build_tile_reader_control(Module& m, const TileReader& t) {
  const TileLoopRegisters& loop = t.loop;
  const TileWalkerWires& w = t.walk;
  const Expr lo = bit(false), hi = bit(true);
  Stmts load = tile_descriptor_load(t);
  Stmts reset =
      with_zero_reset(m, {nb(loop.busy_q, lo), nb(loop.loading_q, lo), nb(loop.held_q, lo), nb(t.flight.p_valid_q, lo)},
                      assigned_signals(load));
  reset = with_zero_reset(m, std::move(reset), {loop.raddr_q, loop.r_q, loop.g_q, loop.e_q, loop.laddr_q});
  load.push_back(nb(loop.busy_q, hi));
  load.push_back(nb(loop.loading_q, lo));
  load.push_back(nb(loop.held_q, lo));
  Stmts run = {nb(loop.held_q, (loop.held_q & ~t.port.tile_start_i) | w.begin_tile)};
  for (Stmt& s : tile_row_step(t)) run.push_back(std::move(s));
  m.always_ff_reset(std::move(reset), {nb(t.flight.p_valid_q, w.row_rd & w.row_done), if_(t.port.start_i, load, run)});
}

// The row in flight and its placement on weight_o: masked (columns past n_total), lane g only (diag),
// or gathered column by column in rowbuf_q (strided).
void build_tile_row_output(Module& m, const TileReader& t) {
  const TileGeometry& g = t.geometry;
  const TileReaderPorts& p = t.port;
  const TileInFlightRegisters& f = t.flight;
  const Expr lane0 = p.rd_data_i.part(0, g.weight_bits);
  m.always_ff({nb(f.p_read_q, p.rd_en_o), nb(f.p_diag_q, t.desc.diag_q),
               nb(f.p_strided_q, t.desc.strided_q & ~t.desc.diag_q), nb(f.p_lanes_q, t.loop.lanes_q),
               nb(f.p_g_q, t.walk.cur_g), nb(f.p_sc_q, t.walk.cur_sc),
               if_(f.p_read_q & f.p_strided_q, {nb(t.loop.rowbuf_q[f.p_sc_q], lane0)})});
  m.blank();
  m.comment(
      "The row read in the previous cycle, masked (columns past n_total) or placed (diag: lane g only;\n"
      "strided: the columns read before from rowbuf_q, the last one from rd_data_i).");
  for (int c = 0; c < g.cols; ++c) {
    const Expr column = lit(kCountBits, c);
    const Expr strided_lane = ternary(f.p_sc_q == lit(g.col_index_bits, c), lane0, t.loop.rowbuf_q.word(c));
    const Expr placed =
        ternary_chain({{f.p_diag_q, lane0}, {f.p_strided_q, strided_lane}}, p.rd_data_i.part(c, g.weight_bits));
    m.assign(p.weight_o.part(c, g.weight_bits),
             ternary(paren(f.p_read_q & ternary(f.p_diag_q, f.p_g_q == column, column < f.p_lanes_q)), placed,
                     lit(g.weight_bits, 0)));
  }
  m.assign(p.weight_load_o, f.p_valid_q);
  m.assign(p.tile_ready_o, t.loop.held_q & ~t.loop.loading_q);
  m.assign(p.busy_o, t.loop.busy_q | f.p_valid_q);
}

}  // namespace

Module build_tile_reader(const AccelConfig& cfg) {
  const TileGeometry geometry = tile_geometry(cfg);
  Module m(kTileReaderModule, tile_reader_description(geometry));
  TileReaderPorts port = declare_tile_reader_ports(m, geometry);
  TileDescriptorRegisters desc = declare_tile_descriptor_registers(m);
  TileLoopRegisters loop = declare_tile_loop_registers(m, geometry);
  TileInFlightRegisters flight = declare_tile_in_flight_registers(m, geometry);
  TileWalkerWires walk = declare_tile_walker_wires(m, geometry);
  const TileReader t{geometry, port, desc, loop, flight, walk};
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

// The descriptor as the writer keeps it (counts minus one where the loops compare with the last value).
struct OutDescriptorRegisters {
  Expr bm1_q, mtot_q, mblk_q, ntm1_q, ntot_q, odm1_q, mb0_q, sel_q, vec_q, s_b_q, s_m_q, s_o2_q, o_wrap_q;
};

OutDescriptorRegisters declare_out_descriptor_registers(Module& m) {
  const int count = kCountBits, addr = kAddrBits;
  m.comment("Descriptor.");
  return OutDescriptorRegisters{m.reg("bm1_q", count),  m.reg("mtot_q", count), m.reg("mblk_q", count),
                                m.reg("ntm1_q", count), m.reg("ntot_q", count), m.reg("odm1_q", count),
                                m.reg("mb0_q", count),  m.reg("sel_q", count),  m.reg("vec_q", 1, "whole records"),
                                m.reg("s_b_q", addr),   m.reg("s_m_q", addr),   m.reg("s_o2_q", addr),
                                m.reg("o_wrap_q", addr)};
}

// The record walker's position (column, vector, tile, block, batch item), its output offsets and
// addresses, and the select_mod state.
struct OutPositionRegisters {
  Expr busy_q, done_q, c_q;
  Expr mi_q, n_q, m0_q, b_q, mb_q, rem_q, nrem_q, lanes_q;
  Expr off_q, noff_q, maddr_q, blk_q, bb_q;
  Expr mmod_q, mmblk_q, nbase_q;
};

OutPositionRegisters declare_out_position_registers(Module& m, const OutGeometry& g) {
  const int count = kCountBits, addr = kAddrBits;
  m.comment(
      "Position: column c_q of record (vector mi_q of the block at m0_q, tile n_q, batch b_q); mb_q vectors\n"
      "in this block. off_q/rem_q: offset and o % o_div of output o = n*cols + c; noff_q/nrem_q: the same\n"
      "for o = n*cols (restored for every vector of the tile). maddr_q = base + b*s_b + m*s_m, blk_q its\n"
      "value for the block's first vector, bb_q = base + b*s_b.");
  const Expr busy_q = m.reg("busy_q", 1), done_q = m.reg("done_q", 1), c_q = m.reg("c_q", g.col_index_bits);
  const Expr mi_q = m.reg("mi_q", count), n_q = m.reg("n_q", count), m0_q = m.reg("m0_q", count),
             b_q = m.reg("b_q", count), mb_q = m.reg("mb_q", count), rem_q = m.reg("rem_q", count),
             nrem_q = m.reg("nrem_q", count), lanes_q = m.reg("lanes_q", count);
  const Expr off_q = m.reg("off_q", addr), noff_q = m.reg("noff_q", addr), maddr_q = m.reg("maddr_q", addr),
             blk_q = m.reg("blk_q", addr), bb_q = m.reg("bb_q", addr);
  m.comment(
      "select_mod: mmod_q = m % J of the record's vector, mmblk_q the same for the block's first vector,\n"
      "nbase_q = n*cols (the first output of the record's tile).");
  const Expr mmod_q = m.reg("mmod_q", count), mmblk_q = m.reg("mmblk_q", count), nbase_q = m.reg("nbase_q", count);
  return OutPositionRegisters{busy_q,  done_q, c_q,    mi_q,    n_q,   m0_q, b_q,    mb_q,    rem_q,  nrem_q,
                              lanes_q, off_q,  noff_q, maddr_q, blk_q, bb_q, mmod_q, mmblk_q, nbase_q};
}

// The record walker's combinational signals.
struct OutWalkerWires {
  Expr sel_on, sel_hit, sel_lane, mmod_next, active, step, lane_last, wrap, off_next, rem_next, m0_next, m_left;
};

OutWalkerWires declare_out_walker_wires(Module& m, const OutGeometry& g) {
  const int count = kCountBits;
  return OutWalkerWires{m.wire("sel_on", 1),
                        m.wire("sel_hit", 1, "the selected output is in this record"),
                        m.wire("sel_lane", g.col_index_bits),
                        m.wire("mmod_next", count, "(m + 1) % J"),
                        m.wire("active", 1, "an element is waiting to be handled"),
                        m.wire("step", 1, "it is handled this cycle: nothing to write, or the write is taken"),
                        m.wire("lane_last", 1, "last element of the record"),
                        m.wire("wrap", 1, "o % o_div wraps after this element"),
                        m.wire("off_next", kAddrBits),
                        m.wire("rem_next", count),
                        m.wire("m0_next", count),
                        m.wire("m_left", count, "vectors after this block")};
}

// Every signal of the output writer.
struct OutWriter {
  OutGeometry geometry;
  OutWriterPorts port;
  OutDescriptorRegisters desc;
  OutPositionRegisters pos;
  OutWalkerWires walk;
};

// select_mod: whether output m % J of the record's vector is in this record, and its column.
void build_out_select_decoder(Module& m, const OutWriter& o) {
  const OutGeometry& g = o.geometry;
  const OutPositionRegisters& pos = o.pos;
  const OutWalkerWires& w = o.walk;
  const Expr one = lit(kCountBits, 1);
  m.assign(w.sel_on, o.desc.sel_q != lit(kCountBits, 0));
  const Expr past_tile = bare(cat({bit(false), pos.nbase_q}) + lit(kCountBits + 1, g.cols));  // n*cols + cols
  m.assign(w.sel_hit,
           (pos.mmod_q >= pos.nbase_q) & (cat({bit(false), pos.mmod_q}) < past_tile) & (pos.mmod_q < o.desc.ntot_q));
  const Expr sel_diff = m.wire("sel_diff", kCountBits);
  m.assign(sel_diff, paren(pos.mmod_q - pos.nbase_q));
  m.lint_off("UNUSEDSIGNAL", "only the low bits of mmod - n*cols index a column (it is < cols when used).");
  const Expr sel_diff_unused = m.wire("sel_diff_unused", kCountBits);
  m.assign(sel_diff_unused, sel_diff);
  m.lint_on("UNUSEDSIGNAL");
  m.assign(w.sel_lane, g.col_index_bits == kCountBits ? sel_diff : sel_diff.slice(g.col_index_bits - 1, 0));
  m.assign(w.mmod_next, ternary(bare(pos.mmod_q + one) == o.desc.sel_q, lit(kCountBits, 0), pos.mmod_q + one));
}

// The record walker and the write port: which element (or whole record) is written this cycle, where,
// and the next output's offset.
void build_out_record_walker(Module& m, const OutWriter& o) {
  const OutGeometry& g = o.geometry;
  const OutWriterPorts& p = o.port;
  const OutDescriptorRegisters& d = o.desc;
  const OutPositionRegisters& pos = o.pos;
  const OutWalkerWires& w = o.walk;
  const Expr one = lit(kCountBits, 1);
  m.assign(w.lane_last, w.sel_on | d.vec_q | (pos.c_q == lit(g.col_index_bits, g.cols - 1)) |
                            (bare(zext(pos.c_q, kCountBits) + one) >= pos.lanes_q));
  m.assign(w.wrap, pos.rem_q == d.odm1_q);
  m.assign(w.off_next, pos.off_q + ternary(w.wrap, d.o_wrap_q, d.s_o2_q));
  m.assign(w.rem_next, ternary(w.wrap, lit(kCountBits, 0), pos.rem_q + one));
  m.assign(w.m0_next, pos.m0_q + d.mblk_q);
  m.assign(w.m_left, d.mtot_q - w.m0_next);
  m.assign(p.wr_en_o, w.active & ternary(w.sel_on, w.sel_hit, zext(pos.c_q, kCountBits) < pos.lanes_q));
  m.assign(p.wr_vec_o, d.vec_q);
  for (int c = 0; c < g.cols; ++c)
    m.assign(g.cols == 1 ? p.wr_mask_o : p.wr_mask_o[c], lit(kCountBits, c) < pos.lanes_q);
  m.assign(p.wr_addr_o, ternary(w.sel_on, pos.maddr_q, pos.maddr_q + pos.off_q));
  if (g.cols == 1) {
    m.lint_off("UNUSEDSIGNAL", "one column: the column index is always 0.");
    const Expr lane_idx_unused = m.wire("lane_idx_unused", g.col_index_bits);
    m.assign(lane_idx_unused, ternary(w.sel_on, w.sel_lane, pos.c_q));
    m.lint_on("UNUSEDSIGNAL");
    m.assign(p.wr_data_o, p.rec_data_i);
  } else {
    const Expr lane_idx = m.wire("lane_idx", g.col_index_bits, "column written");
    m.assign(lane_idx, ternary(w.sel_on, w.sel_lane, pos.c_q));
    // text API: the column's part-select prints `lane_idx * A +: A` (Expr::part_at prints `lane_idx*A`,
    // and refuses a column index that can reach past the record when cols is not a power of two).
    const std::string column =
        fmt::format("{}[{} * {} +: {}]", p.rec_data_i.text(), lane_idx.text(), g.act_bits, g.act_bits);
    m.assign(p.wr_data_o.text(), fmt::format("{} ? {} : {{{}, {}}}", d.vec_q.text(), p.rec_data_i.text(),
                                             zero((g.cols - 1) * g.act_bits).text(), column));
  }
  m.assign(w.step, w.active & (~p.wr_en_o | p.wr_ready_i));
  m.assign(p.rec_pop_o, w.step & w.lane_last);
}

// start_i: the descriptor registers and the position of the first record.
Stmts out_descriptor_load(const OutWriter& o) {
  const OutWriterPorts& p = o.port;
  const OutDescriptorRegisters& d = o.desc;
  const OutPositionRegisters& pos = o.pos;
  const Expr one = lit(kCountBits, 1), zero_count = lit(kCountBits, 0), zero_addr = lit(kAddrBits, 0);
  const Expr first_block = ternary(p.desc_m_total_i < p.desc_m_block_i, p.desc_m_total_i, p.desc_m_block_i);
  return {nb(pos.busy_q, bit(true)),
          nb(d.bm1_q, p.desc_batch_i - one),
          nb(d.mtot_q, p.desc_m_total_i),
          nb(d.mblk_q, p.desc_m_block_i),
          nb(d.ntm1_q, p.desc_n_tiles_i - one),
          nb(d.ntot_q, p.desc_n_total_i),
          nb(d.odm1_q, p.desc_o_div_i - one),
          nb(d.vec_q, p.desc_o_vec_i),
          nb(d.mb0_q, first_block),
          nb(pos.mb_q, first_block),
          nb(d.s_b_q, p.desc_s_b_i),
          nb(d.s_m_q, p.desc_s_m_i),
          nb(d.s_o2_q, p.desc_s_o2_i),
          nb(d.o_wrap_q, p.desc_o_wrap_i),
          nb(pos.c_q, lit(o.geometry.col_index_bits, 0)),
          nb(pos.mi_q, zero_count),
          nb(pos.n_q, zero_count),
          nb(pos.m0_q, zero_count),
          nb(pos.b_q, zero_count),
          nb(pos.off_q, zero_addr),
          nb(pos.noff_q, zero_addr),
          nb(pos.rem_q, zero_count),
          nb(pos.nrem_q, zero_count),
          nb(pos.lanes_q, p.desc_n_total_i),
          nb(pos.maddr_q, p.desc_base_i),
          nb(pos.blk_q, p.desc_base_i),
          nb(pos.bb_q, p.desc_base_i),
          nb(d.sel_q, p.desc_o_sel_i),
          nb(pos.mmod_q, zero_count),
          nb(pos.mmblk_q, zero_count),
          nb(pos.nbase_q, zero_count)};
}

// After a block's last record: the next block of the batch item, or the next batch item (the last one
// ends the descriptor).
Stmts out_next_block(const OutWriter& o) {
  const OutDescriptorRegisters& d = o.desc;
  const OutPositionRegisters& pos = o.pos;
  const OutWalkerWires& w = o.walk;
  const Expr zero_count = lit(kCountBits, 0), zero_addr = lit(kAddrBits, 0);
  return {nb(pos.n_q, zero_count),
          nb(pos.noff_q, zero_addr),
          nb(pos.nrem_q, zero_count),
          nb(pos.off_q, zero_addr),
          nb(pos.rem_q, zero_count),
          nb(pos.lanes_q, d.ntot_q),
          if_(~sum_at_least(pos.m0_q, d.mblk_q, d.mtot_q),
              {nb(pos.m0_q, w.m0_next), nb(pos.mb_q, ternary(w.m_left < d.mblk_q, w.m_left, d.mblk_q)),
               nb(pos.blk_q, pos.maddr_q + d.s_m_q), nb(pos.maddr_q, pos.maddr_q + d.s_m_q),
               nb(pos.mmblk_q, w.mmod_next), nb(pos.mmod_q, w.mmod_next), nb(pos.nbase_q, zero_count)},
              {nb(pos.m0_q, zero_count), nb(pos.mb_q, d.mb0_q), nb(pos.b_q, pos.b_q + lit(kCountBits, 1)),
               nb(pos.bb_q, pos.bb_q + d.s_b_q), nb(pos.blk_q, pos.bb_q + d.s_b_q), nb(pos.maddr_q, pos.bb_q + d.s_b_q),
               nb(pos.mmblk_q, zero_count), nb(pos.mmod_q, zero_count), nb(pos.nbase_q, zero_count),
               if_(pos.b_q == d.bm1_q, {nb(pos.busy_q, bit(false)), nb(pos.done_q, bit(true))})})};
}

// A handled element: the next column of the record, or after the record's last the next vector of the
// block, the next tile (back to the block's first vector) or the next block.
Stmts out_record_step(const OutWriter& o) {
  const OutGeometry& g = o.geometry;
  const OutDescriptorRegisters& d = o.desc;
  const OutPositionRegisters& pos = o.pos;
  const OutWalkerWires& w = o.walk;
  const Expr one = lit(kCountBits, 1), cols = lit(kCountBits, g.cols);
  const Expr next_tile_offset = ternary(d.vec_q, pos.noff_q + lit(kAddrBits, g.cols), w.off_next);
  return {
      if_(~w.lane_last,
          {nb(pos.c_q, pos.c_q + lit(g.col_index_bits, 1)), nb(pos.off_q, w.off_next), nb(pos.rem_q, w.rem_next)},
          {nb(pos.c_q, lit(g.col_index_bits, 0)),
           if_(bare(pos.mi_q + one) != pos.mb_q,
               {nb(pos.mi_q, pos.mi_q + one), nb(pos.maddr_q, pos.maddr_q + d.s_m_q), nb(pos.off_q, pos.noff_q),
                nb(pos.rem_q, pos.nrem_q), nb(pos.mmod_q, w.mmod_next)},
               {nb(pos.mi_q, lit(kCountBits, 0)),
                if_(pos.n_q != d.ntm1_q,
                    {nb(pos.n_q, pos.n_q + one), nb(pos.noff_q, next_tile_offset), nb(pos.nrem_q, w.rem_next),
                     nb(pos.off_q, next_tile_offset), nb(pos.rem_q, w.rem_next), nb(pos.lanes_q, pos.lanes_q - cols),
                     nb(pos.maddr_q, pos.blk_q), nb(pos.mmod_q, pos.mmblk_q), nb(pos.nbase_q, pos.nbase_q + cols)},
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
  const OutDescriptorRegisters desc = declare_out_descriptor_registers(m);
  const OutPositionRegisters pos = declare_out_position_registers(m, geometry);
  const OutWalkerWires walk = declare_out_walker_wires(m, geometry);
  const OutWriter o{geometry, port, desc, pos, walk};
  m.blank();
  m.assign(walk.active, pos.busy_q & port.rec_valid_i);
  build_out_select_decoder(m, o);
  build_out_record_walker(m, o);
  const Stmts load = out_descriptor_load(o);
  const Expr lo = bit(false);
  m.always_ff_reset(with_zero_reset(m, {nb(pos.busy_q, lo), nb(pos.done_q, lo)}, assigned_signals(load)),
                    {nb(pos.done_q, lo), if_(port.start_i, load, {if_(walk.step, out_record_step(o))})});
  m.assign(port.busy_o, pos.busy_q);
  m.assign(port.done_o, pos.done_q);
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

// The descriptor, the reader (element re_q of vector rv_q) and the writer (result we_q of vector wv_q).
struct ActPassRegisters {
  Expr fill_q, norm_q, cm1_q, nm1_q, s_iv_q, s_ie_q, s_ov_q, s_oe_q, value_q;
  Expr reading_q, rv_q, re_q, raddr_q, rvaddr_q, p_q;
  Expr busy_q, done_q, wv_q, we_q, waddr_q, wvaddr_q;
};

ActPassRegisters declare_act_pass_registers(Module& m, const AccelConfig& cfg) {
  const int count = kCountBits, addr = kAddrBits;
  m.comment("Descriptor.");
  const Expr fill_q = m.reg("fill_q", 1), norm_q = m.reg("norm_q", 1);
  const Expr cm1_q = m.reg("cm1_q", kVectorCountBits, "count - 1"), nm1_q = m.reg("nm1_q", count, "n - 1");
  const Expr s_iv_q = m.reg("s_iv_q", addr), s_ie_q = m.reg("s_ie_q", addr), s_ov_q = m.reg("s_ov_q", addr),
             s_oe_q = m.reg("s_oe_q", addr), value_q = m.reg("value_q", cfg.widths.act);
  m.comment("Reader: element re_q of vector rv_q at raddr_q (rvaddr_q: the vector's element 0).");
  const Expr reading_q = m.reg("reading_q", 1), rv_q = m.reg("rv_q", kVectorCountBits), re_q = m.reg("re_q", count),
             raddr_q = m.reg("raddr_q", addr), rvaddr_q = m.reg("rvaddr_q", addr),
             p_q = m.reg("p_q", 1, "the element read in the previous cycle goes to the unit");
  m.comment("Writer: result we_q of vector wv_q at waddr_q (wvaddr_q: the vector's result 0).");
  const Expr busy_q = m.reg("busy_q", 1), done_q = m.reg("done_q", 1), wv_q = m.reg("wv_q", kVectorCountBits),
             we_q = m.reg("we_q", count), waddr_q = m.reg("waddr_q", addr), wvaddr_q = m.reg("wvaddr_q", addr);
  return ActPassRegisters{fill_q, norm_q,  cm1_q,    nm1_q, s_iv_q, s_ie_q, s_ov_q, s_oe_q, value_q, reading_q, rv_q,
                          re_q,   raddr_q, rvaddr_q, p_q,   busy_q, done_q, wv_q,   we_q,   waddr_q, wvaddr_q};
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
  const ActPassRegisters regs = declare_act_pass_registers(m, cfg);
  const Expr r_vlast = m.wire("r_vlast", 1, "the reader's element is its vector's last");
  const Expr w_take = m.wire("w_take", 1, "a result (or a Fill element) is written this cycle");
  const Expr w_vlast = m.wire("w_vlast", 1, "it is its vector's last");
  const Expr w_last = m.wire("w_last", 1, "it is the descriptor's last");
  m.blank();
  m.assign(r_vlast, regs.re_q == regs.nm1_q);
  m.assign(p.rd_en_o, regs.reading_q);
  m.assign(p.rd_addr_o, regs.raddr_q);
  m.assign(p.act_valid_o, regs.p_q);
  m.assign(p.act_data_o, p.rd_data_i);
  m.assign(w_take, regs.busy_q & (regs.fill_q | p.res_valid_i));
  m.assign(w_vlast, regs.fill_q | regs.norm_q | (regs.we_q == regs.nm1_q));
  m.assign(w_last, w_vlast & (regs.wv_q == regs.cm1_q));
  m.assign(p.wr_en_o, w_take);
  m.assign(p.wr_addr_o, regs.waddr_q);
  m.assign(p.wr_data_o, ternary(regs.fill_q, sext(regs.value_q, p.wr_data_o.width()), p.res_data_i));

  const Expr lo = bit(false), hi = bit(true), one = lit(kCountBits, 1), one_vector = lit(kVectorCountBits, 1);
  const Expr zero_count = lit(kCountBits, 0), zero_vector = lit(kVectorCountBits, 0);
  const Stmts load = {nb(regs.busy_q, hi),
                      nb(regs.reading_q, ~p.fill_i),
                      nb(regs.fill_q, p.fill_i),
                      nb(regs.norm_q, p.desc_norm_i),
                      nb(regs.cm1_q, p.desc_count_i - one_vector),
                      nb(regs.nm1_q, p.desc_n_i - one),
                      nb(regs.s_iv_q, p.desc_in_s_v_i),
                      nb(regs.s_ie_q, p.desc_in_s_e_i),
                      nb(regs.s_ov_q, p.desc_out_s_v_i),
                      nb(regs.s_oe_q, p.desc_out_s_e_i),
                      nb(regs.value_q, p.desc_value_i),
                      nb(regs.rv_q, zero_vector),
                      nb(regs.re_q, zero_count),
                      nb(regs.raddr_q, p.desc_in_base_i),
                      nb(regs.rvaddr_q, p.desc_in_base_i),
                      nb(regs.wv_q, zero_vector),
                      nb(regs.we_q, zero_count),
                      nb(regs.waddr_q, p.desc_out_base_i),
                      nb(regs.wvaddr_q, p.desc_out_base_i)};
  const Stmt read_step =
      if_(regs.reading_q,
          {if_(r_vlast,
               {nb(regs.re_q, zero_count), nb(regs.rv_q, regs.rv_q + one_vector),
                nb(regs.rvaddr_q, regs.rvaddr_q + regs.s_iv_q), nb(regs.raddr_q, regs.rvaddr_q + regs.s_iv_q),
                if_(regs.rv_q == regs.cm1_q, {nb(regs.reading_q, lo)})},
               {nb(regs.re_q, regs.re_q + one), nb(regs.raddr_q, regs.raddr_q + regs.s_ie_q)})});
  const Stmt write_step = if_(
      w_take, {if_(w_last, {nb(regs.busy_q, lo), nb(regs.done_q, hi)}),
               if_(regs.fill_q, {nb(regs.wv_q, regs.wv_q + one_vector), nb(regs.waddr_q, regs.waddr_q + regs.s_oe_q)},
                   {if_(w_vlast,
                        {nb(regs.we_q, zero_count), nb(regs.wv_q, regs.wv_q + one_vector),
                         nb(regs.wvaddr_q, regs.wvaddr_q + regs.s_ov_q), nb(regs.waddr_q, regs.wvaddr_q + regs.s_ov_q)},
                        {nb(regs.we_q, regs.we_q + one), nb(regs.waddr_q, regs.waddr_q + regs.s_oe_q)})})});
  m.always_ff_reset(
      with_zero_reset(m, {nb(regs.busy_q, lo), nb(regs.done_q, lo), nb(regs.reading_q, lo), nb(regs.p_q, lo)},
                      assigned_signals(load)),
      {nb(regs.done_q, lo), nb(regs.p_q, regs.reading_q), if_(p.start_i, load, {read_step, write_step})});
  m.assign(p.busy_o, regs.busy_q);
  m.assign(p.done_o, regs.done_q);
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

// The gather unit's descriptor inputs the engine reads itself (gather_descriptor_ports declares them,
// shared with capsgen_gather, and returns no handles).
struct GatherDescriptorPorts {
  Expr batch, m_total, m_block, k_chunks, r_total, group_rows, base, s_b, s_m, s_k;
};

GatherDescriptorPorts gather_descriptor_handles(const Module& m) {
  return GatherDescriptorPorts{m.port("desc_batch_i"),   m.port("desc_m_total_i"),    m.port("desc_m_block_i"),
                               m.port("desc_k_chunks_i"), m.port("desc_r_total_i"),   m.port("desc_group_rows_i"),
                               m.port("desc_base_i"),     m.port("desc_s_b_i"),       m.port("desc_s_m_i"),
                               m.port("desc_s_k_i")};
}

// The descriptor inputs, in port order.
struct DescriptorPorts {
  Expr valid, ready, kind;
  GatherDescriptorPorts gather;
  Expr n_tiles, n_total;
  Expr t_base, t_s_b, t_s_k, t_s_n, t_s_r, t_strided, t_s_c, t_top, t_diag, t_gtop, t_etop, t_dtop, t_dwrap;
  Expr init_bias, init_base, init_out, init_s_b, init_s_m, init_shift;
  Expr o_base, o_s_b, o_s_m, o_s_o2, o_wrap, o_div, o_sel;
  Expr shift, relu;
  Expr a_func, a_norm_shift, a_count, a_n, a_in_base, a_in_s_v, a_in_s_e, a_out_base, a_out_s_v, a_out_s_e, f_value;
  Expr v_mode, o_vec, v_len, acc_continue, acc_hold;
};

// The descriptor ports: the handshake and the kind, the gather unit's fields (gather_descriptor_ports),
// then the other pieces' fields (tiles, accumulator init, outputs, reduction, Activate/Fill, vector-wide
// gather, split reduction).
DescriptorPorts declare_descriptor_ports(Module& m, const EngineGeometry& geo) {
  const int count = geo.count_bits, addr = geo.addr_bits;
  m.clock_and_reset();
  const Expr valid = m.input("desc_valid_i", 1, "descriptor valid");
  const Expr ready = m.output("desc_ready_o", 1, "idle: the descriptor is accepted");
  const Expr kind =
      m.input("desc_kind_i", isa::kEngineKindBits, "0 Gemm, 1 Activate, 2 Fill (isa::EngineDescriptor::kind)");
  gather_descriptor_ports(m);  // data source and counts, passed to capsgen_gather (docs/rtl-gather.md)
  // A braced list evaluates its elements in order: the ports are declared in this order.
  return DescriptorPorts{
      valid,
      ready,
      kind,
      gather_descriptor_handles(m),
      m.input("desc_n_tiles_i", count, "tiles per chunk"),
      m.input("desc_n_total_i", count, "output columns"),
      m.input("desc_t_base_i", addr, "tiles: base"),
      m.input("desc_t_s_b_i", addr, "tiles: batch stride"),
      m.input("desc_t_s_k_i", addr, "tiles: chunk stride"),
      m.input("desc_t_s_n_i", addr, "tiles: tile stride"),
      m.input("desc_t_s_r_i", addr, "tiles: row stride"),
      m.input("desc_t_strided_i", 1, "tiles: rows not contiguous (read column by column, s_c)"),
      m.input("desc_t_s_c_i", addr, "tiles: column stride (strided rows)"),
      m.input("desc_t_top_i", addr, "tiles, derived: (rows - 1) * s_r"),
      m.input("desc_t_diag_i", 1, "block-diagonal tiles"),
      m.input("desc_t_gtop_i", count, "tiles, diag, derived: (rows - 1) / group_rows"),
      m.input("desc_t_etop_i", count, "tiles, diag, derived: (rows - 1) % group_rows"),
      m.input("desc_t_dtop_i", addr, "tiles, diag, derived: etop * s_r"),
      m.input("desc_t_dwrap_i", addr, "tiles, diag, derived: (group_rows - 1) * s_r"),
      m.input("desc_init_bias_i", 1, "accumulators start at the column's bias (else 0)"),
      m.input("desc_init_base_i", addr, "bias of output column 0 (per output: of vector 0)"),
      m.input("desc_init_out_i", 1, "accumulators start at a per-output code (AccInit::kPerOutput)"),
      m.input("desc_init_s_b_i", addr, "per-output init: batch stride"),
      m.input("desc_init_s_m_i", addr, "per-output init: vector stride"),
      m.input("desc_init_shift_i", 5, "per-output init: left shift before saturating to psum bits"),
      m.input("desc_o_base_i", addr, "outputs: base"),
      m.input("desc_o_s_b_i", addr, "outputs: batch stride"),
      m.input("desc_o_s_m_i", addr, "outputs: vector stride"),
      m.input("desc_o_s_o2_i", addr, "outputs: step within o_div"),
      m.input("desc_o_wrap_i", addr, "outputs, derived: s_o1 - (o_div - 1) * s_o2"),
      m.input("desc_o_div_i", count, "outputs: o_div (>= 1)"),
      m.input("desc_o_sel_i", count, "outputs: select_mod J (0: off; else only column m % J, at base + b*s_b + m*s_m)"),
      m.input("desc_shift_i", geo.shift_bits, "reduction right shift"),
      m.input("desc_relu_i", 1, "ReLU after the reduction"),
      m.input("desc_a_func_i", kActFunctionBits, "Activate: unit function (2 norm, 3 squash, 4 softmax)"),
      m.input("desc_a_norm_shift_i", geo.act.nshift_bits, "Activate: norm shift (norm, squash), the activation unit's norm_shift_i"),
      m.input("desc_a_count_i", kVectorCountBits, "Activate: vectors; Fill: elements"),
      m.input("desc_a_n_i", count, "Activate: elements per vector"),
      m.input("desc_a_in_base_i", addr, "Activate: input base"),
      m.input("desc_a_in_s_v_i", addr, "Activate: input vector stride"),
      m.input("desc_a_in_s_e_i", addr, "Activate: input element stride"),
      m.input("desc_a_out_base_i", addr, "Activate, Fill: output base"),
      m.input("desc_a_out_s_v_i", addr, "Activate: output vector stride"),
      m.input("desc_a_out_s_e_i", addr, "Activate, Fill: output element stride"),
      m.input("desc_f_value_i", geo.act_bits, "Fill: value"),
      m.input("desc_v_mode_i", 1, "vector-wide gather: one read of rows consecutive elements per vector"),
      m.input("desc_o_vec_i", 1, "outputs: consecutive (offset of output o is o): one record per write"),
      m.input("desc_v_len_i", count, "vector-wide gather: elements of a vector's reduction (rows past it are zero)"),
      m.input("desc_acc_continue_i", 1, "split reduction: chunk 0 adds onto the accumulator entries the previous Gemm left"),
      m.input("desc_acc_hold_i", 1, "split reduction: write no output (the entries keep the sums for the next Gemm)")};
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
  Expr mi_q, n_q, k_q, m0_q, b_q, mb_q, ent_q, ia_q, iblk_q, ib_q;
};

StreamerPosition declare_streamer_position(Module& m, const EngineGeometry& geo) {
  const int count = geo.count_bits, addr = geo.addr_bits;
  m.comment("Streamer position: vector mi_q of the block at m0_q (mb_q vectors), tile n_q, chunk k_q, batch b_q;\n"
            "ent_q = mi_q * n_tiles + n_q, the accumulator entry.");
  return StreamerPosition{m.reg("mi_q", count),
                          m.reg("n_q", count),
                          m.reg("k_q", count),
                          m.reg("m0_q", count),
                          m.reg("b_q", count),
                          m.reg("mb_q", count),
                          m.reg("ent_q", geo.entry_bits),
                          m.reg("ia_q", addr, "per-output init address of the vector: init_base + b*init_s_b + m*init_s_m"),
                          m.reg("iblk_q", addr, "... of the block's first vector"),
                          m.reg("ib_q", addr, "... of the batch item's first vector")};
}

// The statistics counters of the last descriptor.
struct Statistics {
  Expr cycles, vectors, stall_data, stall_tile, stall_out, wr_wait;
};

// The controller's registers, in declaration order.
struct ControlState {
  Expr busy_q, done_q, err_q, run_q;
  Expr bm1_q, mtot_q, mblk_q, mb0_q, kcm1_q, ntm1_q, ntot_q, nt_q;  // the streamer's copy of the counts
  Expr init_bias_q, init_base_q, init_out_q, init_s_b_q, init_s_m_q, init_shift_q, relu_q, cont_q, hold_q;
  Expr act_mode_q, a_func_q, a_len_q, a_ns_q, shift_q;
  StreamerPosition pos;
  Expr credits_q;
  Statistics stat;
};

// The controller's registers: busy/done/error, the streamer's copy of the descriptor's counts and the
// init, reduction and Activate fields, the streamer's position, the output credits and the statistics.
ControlState declare_control_state(Module& m, const EngineGeometry& geo) {
  const int count = geo.count_bits, addr = geo.addr_bits;
  m.comment("Control state and the streamer's copy of the counts.");
  // A braced list evaluates its elements in order: the registers are declared in this order.
  return ControlState{
      m.reg("busy_q", 1),
      m.reg("done_q", 1),
      m.reg("err_q", 1),
      m.reg("run_q", 1, "the streamer has vectors left"),
      m.reg("bm1_q", count),
      m.reg("mtot_q", count),
      m.reg("mblk_q", count),
      m.reg("mb0_q", count),
      m.reg("kcm1_q", count),
      m.reg("ntm1_q", count),
      m.reg("ntot_q", count),
      m.reg("nt_q", geo.entry_bits, "n_tiles mod 2^AddrWidth (only added while m_block > 1, i.e. n_tiles < depth)"),
      m.reg("init_bias_q", 1),
      m.reg("init_base_q", addr),
      m.reg("init_out_q", 1),
      m.reg("init_s_b_q", addr),
      m.reg("init_s_m_q", addr),
      m.reg("init_shift_q", 5),
      m.reg("relu_q", 1),
      m.reg("cont_q", 1, "acc_continue: chunk 0 accumulates onto the entries (no init)"),
      m.reg("hold_q", 1, "acc_hold: the writer steps through the records without writing them"),
      m.reg("act_mode_q", 1, "an Activate or Fill runs (the activation bank, data port and write port are the pass's)"),
      m.reg("a_func_q", 3),
      m.reg("a_len_q", geo.act.len_bits),
      m.reg("a_ns_q", geo.act.nshift_bits),
      m.reg("shift_q", geo.shift_bits),
      declare_streamer_position(m, geo),
      m.reg("credits_q", geo.fifo_bits + 1, "output FIFO entries not yet promised to a last-chunk vector"),
      Statistics{m.reg("stat_cycles_q", 32), m.reg("stat_vectors_q", 32), m.reg("stat_stall_data_q", 32),
                 m.reg("stat_stall_tile_q", 32), m.reg("stat_stall_out_q", 32), m.reg("stat_wr_wait_q", 32)}};
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
  m.assign(accept, desc.valid & ~ctl.busy_q);
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
  Expr vmode_q, v_busy_q;
  Expr v_b_q, v_m0_q, v_mb_q, v_k_q, v_mi_q, v_rem_q;  // counts
  Expr v_s_b_q, v_s_m_q, v_s_k_q, v_baddr_q, v_kaddr_q, v_addr_q, v_nblk_q;  // strides and addresses
  Expr v_take, v_chunk_last, v_zero, v_nblk;
  Expr s1_vall_q, s1_vzero_q;
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
Stmts vector_gather_next_block(const EngineGeometry& geo, const VectorGather& v, const Expr& v_len_q,
                               const ControlState& ctl) {
  const Expr count_zero = lit(geo.count_bits, 0), count_one = lit(geo.count_bits, 1);
  const Stmts next_batch = {nb(v.v_m0_q, count_zero), nb(v.v_mb_q, ctl.mb0_q), nb(v.v_b_q, v.v_b_q + count_one),
                            nb(v.v_baddr_q, v.v_baddr_q + v.v_s_b_q), nb(v.v_kaddr_q, v.v_baddr_q + v.v_s_b_q),
                            nb(v.v_addr_q, v.v_baddr_q + v.v_s_b_q), if_(v.v_b_q == ctl.bm1_q, {nb(v.v_busy_q, bit(false))})};
  return {nb(v.v_k_q, count_zero), nb(v.v_rem_q, v_len_q),
          if_(sum_below(v.v_m0_q, ctl.mblk_q, ctl.mtot_q),
              {nb(v.v_m0_q, v.v_m0_q + ctl.mblk_q), nb(v.v_mb_q, next_block_length(ctl.mtot_q, v.v_m0_q, ctl.mblk_q)),
               nb(v.v_kaddr_q, v.v_nblk), nb(v.v_addr_q, v.v_nblk)},
              next_batch)};
}

// The vector-wide gather after a vector was read: the block's next vector, or after its last one the
// next chunk (v_rem_q drops by rows) or the next block.
Stmts vector_gather_advance(const EngineGeometry& geo, const VectorGather& v, const Expr& v_len_q,
                            const ControlState& ctl) {
  const Expr count_zero = lit(geo.count_bits, 0), count_one = lit(geo.count_bits, 1);
  const Expr rows = lit(geo.count_bits, geo.rows);
  Stmts chunk_done = {nb(v.v_mi_q, count_zero), if_(v.v_k_q == count_zero, {nb(v.v_nblk_q, v.v_addr_q + v.v_s_m_q)})};
  chunk_done.push_back(if_(v.v_k_q == ctl.kcm1_q, vector_gather_next_block(geo, v, v_len_q, ctl),
                           {nb(v.v_k_q, v.v_k_q + count_one),
                            nb(v.v_rem_q, ternary(v.v_rem_q > rows, v.v_rem_q - rows, count_zero)),
                            nb(v.v_kaddr_q, v.v_kaddr_q + v.v_s_k_q), nb(v.v_addr_q, v.v_kaddr_q + v.v_s_k_q)}));
  return {if_(v.v_chunk_last, chunk_done, {nb(v.v_mi_q, v.v_mi_q + count_one), nb(v.v_addr_q, v.v_addr_q + v.v_s_m_q)})};
}

// The vector-wide gather's registers and wires, and its rows past the reduction.
VectorGather declare_vector_gather(Module& m, const EngineGeometry& geo) {
  const int rows = geo.rows, count = geo.count_bits, addr = geo.addr_bits;
  m.blank();
  m.comment(fmt::format(
      "Vector-wide gather (desc_v_mode_i, docs/rtl-engine.md): for an affine source whose vector elements are\n"
      "consecutive, one data read of {0} elements per vector instead of the gather unit's one per element, in the\n"
      "gather unit's order (b, block, chunk, vector). Vector m of batch item b, chunk k starts at base + b*s_b +\n"
      "m*s_m + k*s_k; rows at or past v_len - k*{0} are zero. The address steps by s_m within a block, the\n"
      "block's successor address (v_nblk_q) is noted on chunk 0.",
      rows));
  // A braced list evaluates its elements in order: the signals are declared in this order.
  const VectorGather v{m.reg("vmode_q", 1, "the running Gemm uses the vector-wide gather"),
                       m.reg("v_busy_q", 1),
                       m.reg("v_b_q", count),
                       m.reg("v_m0_q", count),
                       m.reg("v_mb_q", count),
                       m.reg("v_k_q", count),
                       m.reg("v_mi_q", count),
                       m.reg("v_rem_q", count),
                       m.reg("v_s_b_q", addr),
                       m.reg("v_s_m_q", addr),
                       m.reg("v_s_k_q", addr),
                       m.reg("v_baddr_q", addr),
                       m.reg("v_kaddr_q", addr),
                       m.reg("v_addr_q", addr),
                       m.reg("v_nblk_q", addr),
                       m.wire("v_take", 1, "a vector is read this cycle"),
                       m.wire("v_chunk_last", 1, "the block's last vector of the chunk"),
                       m.wire("v_zero", rows, "rows past the reduction"),
                       m.wire("v_nblk", addr, "the next block's first vector (chunk 0): noted now when this is chunk 0"),
                       m.reg("s1_vall_q", 1),
                       m.reg("s1_vzero_q", rows)};
  m.blank();
  m.assign(v.v_take, v.v_busy_q & m.forward_wire("g_ready", 1));  // declared with the gather unit's wires
  m.assign(v.v_chunk_last, bare(v.v_mi_q + lit(count, 1)) == v.v_mb_q);
  m.assign(v.v_nblk, ternary(v.v_k_q == lit(count, 0), v.v_addr_q + v.v_s_m_q, v.v_nblk_q));
  for (int r = 0; r < rows; ++r) m.assign(rows == 1 ? v.v_zero : v.v_zero[r], ~(lit(count, r) < v.v_rem_q));
  return v;
}

// The vector-wide gather: its position registers, the rows past the reduction, and the walk over
// (b, block, chunk, vector), one vector read per cycle the staging buffer takes it.
VectorGather build_vector_gather(Module& m, const EngineGeometry& geo, const DescriptorPorts& desc,
                                 const ControlState& ctl, const DescriptorDecode& decode) {
  const VectorGather v = declare_vector_gather(m, geo);
  const Expr v_len_q = m.reg("v_len_q", geo.count_bits);
  const Expr count_zero = lit(geo.count_bits, 0);
  const GatherDescriptorPorts& g = desc.gather;
  const Stmts load = {
      nb(v.vmode_q, desc.v_mode), nb(v.v_busy_q, desc.v_mode), nb(v.v_b_q, count_zero), nb(v.v_m0_q, count_zero),
      nb(v.v_mb_q, ternary(g.m_total < g.m_block, g.m_total, g.m_block)), nb(v.v_k_q, count_zero),
      nb(v.v_mi_q, count_zero), nb(v_len_q, desc.v_len), nb(v.v_rem_q, desc.v_len),
      nb(v.v_s_b_q, g.s_b), nb(v.v_s_m_q, g.s_m), nb(v.v_s_k_q, g.s_k),
      nb(v.v_baddr_q, g.base), nb(v.v_kaddr_q, g.base), nb(v.v_addr_q, g.base)};
  Stmts reset = with_zero_reset(m, {nb(v.vmode_q, bit(false)), nb(v.v_busy_q, bit(false))}, assigned_signals(load));
  reset = with_zero_reset(m, std::move(reset), {v.v_nblk_q.text()});
  m.always_ff_reset(std::move(reset),
                    {if_(decode.start, load, {if_(v.v_take, vector_gather_advance(geo, v, v_len_q, ctl))})});
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
  m.assign(ports.drd_en, ternary(ctl.act_mode_q, pass.rd_en, (g.take & ~g.zero) | v.v_take));
  m.assign(ports.drd_vec, ~ctl.act_mode_q & v.v_take);
  const Expr gather_addr = ternary(v.vmode_q, v.v_addr_q, g.addr);
  m.assign(ports.drd_addr, ternary(ctl.act_mode_q, pass.rd_addr, bare(gather_addr)));
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
  m.always_ff_reset({nb(s1_valid_q, bit(false)), nb(v.s1_vall_q, bit(false))},
                    {nb(s1_valid_q, take | v.v_take), nb(v.s1_vall_q, v.v_take)});
  const bool whole = geo.vec_bits == geo.count_bits;
  m.always_ff({nb(s1_zero_q, zero), nb(s1_commit_q, ternary(v.vmode_q, v.v_chunk_last, chunk_last)), nb(s1_row_q, row),
               nb(s1_vec_q, whole ? ternary(v.vmode_q, v.v_mi_q, vec)
                                  : ternary(v.vmode_q, v.v_mi_q.slice(geo.vec_bits - 1, 0), vec.slice(geo.vec_bits - 1, 0))),
               nb(v.s1_vzero_q, v.v_zero)});
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
  for (const std::string& f : gather_descriptor_fields()) {
    const std::string port = "desc_" + f + "_i";  // the same port on the engine and the gather unit
    inst.connect(port, m.port(port));
  }
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
  m.assign(s.last_k, pos.k_q == ctl.kcm1_q);
  m.assign(s.tile_ok, (pos.mi_q != lit(geo.count_bits, 0)) | s.tile_ready);
  m.assign(s.credit_ok, ~s.last_k | (ctl.credits_q != lit(geo.fifo_bits + 1, 0)));
  m.assign(s.issue, ctl.run_q & st.st_rd_avail & s.tile_ok & s.credit_ok);
  m.assign(s.mi_last, bare(pos.mi_q + lit(geo.count_bits, 1)) == pos.mb_q);
  m.assign(s.n_last, pos.n_q == ctl.ntm1_q);
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
      .connect("rd_vec_i", staged_vector(geo, ctl.pos.mi_q))
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
  return {nb(p.k_q, count_zero),
          if_(sum_below(p.m0_q, ctl.mblk_q, ctl.mtot_q),
              {nb(p.m0_q, p.m0_q + ctl.mblk_q), nb(p.mb_q, next_block_length(ctl.mtot_q, p.m0_q, ctl.mblk_q)),
               nb(p.ia_q, p.ia_q + ctl.init_s_m_q), nb(p.iblk_q, p.ia_q + ctl.init_s_m_q)},
              {nb(p.m0_q, count_zero), nb(p.mb_q, ctl.mb0_q), nb(p.b_q, p.b_q + lit(geo.count_bits, 1)),
               nb(p.ib_q, p.ib_q + ctl.init_s_b_q), nb(p.iblk_q, p.ib_q + ctl.init_s_b_q),
               nb(p.ia_q, p.ib_q + ctl.init_s_b_q), if_(p.b_q == ctl.bm1_q, {nb(ctl.run_q, bit(false))})})};
}

// The streamer's position after it issued a vector: the block's next vector (entry + n_tiles), else
// vector 0 of the next tile (entry n + 1), of the next chunk or of the next block (entry 0).
Stmts streamer_advance(const EngineGeometry& geo, const ControlState& ctl, const StreamerIssue& s) {
  const StreamerPosition& p = ctl.pos;
  const Expr count_zero = lit(geo.count_bits, 0), count_one = lit(geo.count_bits, 1);
  return {if_(s.mi_last,
              {nb(p.mi_q, count_zero),
               if_(s.n_last,
                   {nb(p.n_q, count_zero), nb(p.ent_q, lit(geo.entry_bits, 0)),
                    if_(s.last_k, streamer_next_block(geo, ctl), {nb(p.k_q, p.k_q + count_one), nb(p.ia_q, p.iblk_q)})},
                   {nb(p.n_q, p.n_q + count_one), nb(p.ia_q, p.iblk_q),
                    nb(p.ent_q, tile_entry(geo, p.n_q) + lit(geo.entry_bits, 1))})},
              {nb(p.mi_q, p.mi_q + count_one), nb(p.ent_q, p.ent_q + ctl.nt_q), nb(p.ia_q, p.ia_q + ctl.init_s_m_q)})};
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
      .connect("tile_start_i", s.issue & (ctl.pos.mi_q == lit(geo.count_bits, 0)))
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
  m.always_ff_reset({nb(p.pv_q, lit(stages, 0))}, {nb(p.pv_q, cat({p.pv_q.slice(stages - 2, 0), s.issue}))});
  m.always_ff({nb(p.pf_q, ctl.pos.mi_q == count_zero),
               nb(p.pa_q, cat({p.pa_q.slice(stages - 2, 0), ctl.pos.k_q != count_zero})),
               nb(p.pl_q, cat({p.pl_q.slice(stages - 2, 0), s.last_k})),
               nb(p.pe_q, cat({p.pe_q.slice((stages - 1) * entry - 1, 0), ctl.pos.ent_q})),
               nb(p.pn_q, cat({p.pn_q.slice((latency - 1) * entry - 1, 0), tile_entry(geo, ctl.pos.n_q)}))});
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
  const Expr io_v_q = m.reg("io_v_q", 1, "a per-output init code arrives this cycle");
  const Expr io_rd = m.wire("io_rd", 1, "per-output init read of the vector issued this cycle");
  const Expr io_code = m.wire("io_code", psum, "the code read (lane 0)");
  const Expr io_wide = m.wire("io_wide", wide_bits, "sign-extended and shifted");
  const Expr io_sat = m.wire("io_sat", psum, "saturated to psum bits");
  const Memory io_fifo_q = m.memory("io_fifo_q", psum, queue_depth, "per-output init values of the vectors in flight");
  const Expr io_wp_q = m.reg("io_wp_q", queue_bits);
  const Expr io_rp_q = m.reg("io_rp_q", queue_bits);
  const Expr io_pop = m.wire("io_pop", 1);
  const Expr acc_bias = m.wire("acc_bias", cols * psum);
  const Expr bias_stage = p.pv_q[latency - 1] & ~p.pa_q[latency - 1] & ctl.init_bias_q;
  m.assign(io_rd, s.issue & (ctl.pos.k_q == lit(count, 0)) & ctl.init_out_q);
  m.assign(ports.brd_en, paren(bias_stage) | io_rd);
  m.assign(ports.brd_addr,
           ternary(ctl.init_out_q, ctl.pos.ia_q, ctl.init_base_q + bare(bias_n * lit(addr, cols))));
  m.assign(io_code, ports.brd_data.part(0, psum));
  m.assign(io_wide, shl(sext(io_code, wide_bits), ctl.init_shift_q));
  m.assign(io_sat, saturate_signed(io_wide, psum));
  m.assign(io_pop, p.pv_q[geo.stages - 1] & ~p.pa_q[geo.stages - 1] & ctl.init_out_q);
  const Expr bias_columns = bare(bias_n.slice(count - 1, 0) * lit(count, cols));
  m.always_ff({nb(bv_q, bias_stage), nb(bl_q, ctl.ntot_q - bias_columns),
               if_(io_v_q, {nb(io_fifo_q[io_wp_q], io_sat)})});
  m.always_ff_reset({nb(io_v_q, bit(false)), nb(io_wp_q, lit(queue_bits, 0)), nb(io_rp_q, lit(queue_bits, 0))},
                    {nb(io_v_q, io_rd), if_(io_v_q, {nb(io_wp_q, io_wp_q + lit(queue_bits, 1))}),
                     if_(io_pop, {nb(io_rp_q, io_rp_q + lit(queue_bits, 1))})});
  for (int c = 0; c < cols; ++c) {
    const Expr column_valid = paren(bv_q & (lit(count, c) < bl_q));
    const Expr bias = ternary(column_valid, ports.brd_data.part(c, psum), lit(psum, 0));
    m.assign(acc_bias.part(c, psum), ternary(ctl.init_out_q, io_fifo_q[io_rp_q], bare(bias)));
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
      .connect("in_accumulate_i", p.pa_q[last] | ctl.cont_q)
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
  const Expr act_mode_q = ctl.act_mode_q;
  m.instance(activation, "u_act")
      .connect("clk_i", m.clk())
      .connect("rst_ni", m.rst_n())
      .connect("in_valid_i", ternary(act_mode_q, pass.act_valid, r.acc_out_valid))
      .connect("in_data_i", ternary(act_mode_q, pass.act_in, r.acc_out_data))
      .connect("func_i", ternary(act_mode_q, ctl.a_func_q, cat({lit_bin(2, 0), ctl.relu_q})))
      .connect("len_i", ternary(act_mode_q, ctl.a_len_q, lit(geo.act.len_bits, 1)))
      .connect("shift_i", ternary(act_mode_q, lit(geo.shift_bits, 0), ctl.shift_q))
      .connect("norm_shift_i", ternary(act_mode_q, ctl.a_ns_q, lit(geo.act.nshift_bits, 0)))
      .connect("out_valid_o", r.a_valid)
      .connect("out_last_o", r.a_last)
      .connect("out_data_o", r.a_data)
      .connect("busy_o", r.a_busy)
      .connect("err_o", r.a_err);
}

// The output FIFO's state.
struct OutputFifo {
  Memory fifo_mem;
  Expr fifo_rp_q, fifo_cnt_q, fifo_overflow;
};

// The output FIFO between the activation bank and the writer: Gemm result vectors at act bits per
// column; pushing into a full FIFO is an overflow (the credits rule it out).
OutputFifo build_output_fifo(Module& m, const EngineGeometry& geo, const ControlState& ctl, const StreamerIssue& s,
                             const ResultWires& r) {
  const int cols = geo.cols, act = geo.act_bits, result = geo.result_bits, pointer = geo.fifo_bits;
  m.blank();
  m.comment(fmt::format("Output FIFO: {} result vectors of {} act codes.", geo.fifo_depth, cols));
  const Memory fifo_mem = m.memory("fifo_mem", cols * act, geo.fifo_depth);
  const Expr fifo_wp_q = m.reg("fifo_wp_q", pointer), fifo_rp_q = m.reg("fifo_rp_q", pointer);
  const Expr fifo_cnt_q = m.reg("fifo_cnt_q", pointer + 1);
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
  m.assign(fifo_push, r.a_valid & ~ctl.act_mode_q);
  m.assign(fifo_overflow, fifo_push & (fifo_cnt_q == lit(pointer + 1, geo.fifo_depth)) & ~s.pop);
  m.always_ff_reset({nb(fifo_wp_q, lit(pointer, 0)), nb(fifo_rp_q, lit(pointer, 0)),
                     nb(fifo_cnt_q, lit(pointer + 1, 0))},
                    {if_(fifo_push, {nb(fifo_wp_q, fifo_wp_q + lit(pointer, 1))}),
                     if_(s.pop, {nb(fifo_rp_q, fifo_rp_q + lit(pointer, 1))}),
                     nb(fifo_cnt_q, fifo_cnt_q + zext(fifo_push, pointer + 1) - zext(s.pop, pointer + 1))});
  m.always_ff({if_(fifo_push, {nb(fifo_mem[fifo_wp_q], fifo_in)})});
  return OutputFifo{fifo_mem, fifo_rp_q, fifo_cnt_q, fifo_overflow};
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
      .connect("rec_valid_i", f.fifo_cnt_q != lit(geo.fifo_bits + 1, 0))
      .connect("rec_data_i", f.fifo_mem[f.fifo_rp_q])
      .connect("rec_pop_o", s.pop)
      .connect("wr_ready_i", ports.wr_ready | ctl.hold_q)
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
      .connect("res_valid_i", r.a_valid & ctl.act_mode_q)
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
  const Expr act_mode_q = ctl.act_mode_q;
  m.comment("The write port: the Gemm writer's results (act codes, sign-extended) or the pass's.");
  m.assign(ports.wr_en, ternary(act_mode_q, pass.wr_en, paren(w.wr_en & ~ctl.hold_q)));
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
  return {nb(ctl.busy_q, bit(true)), nb(ctl.run_q, bit(true)), nb(ctl.bm1_q, g.batch - count_one),
          nb(ctl.mtot_q, g.m_total), nb(ctl.mblk_q, g.m_block), nb(ctl.mb0_q, first_block), nb(p.mb_q, first_block),
          nb(ctl.kcm1_q, g.k_chunks - count_one), nb(ctl.ntm1_q, desc.n_tiles - count_one),
          nb(ctl.ntot_q, desc.n_total), nb(ctl.nt_q, n_tiles),
          nb(ctl.init_bias_q, desc.init_bias), nb(ctl.init_base_q, desc.init_base), nb(ctl.relu_q, desc.relu),
          nb(ctl.cont_q, desc.acc_continue), nb(ctl.hold_q, desc.acc_hold),
          nb(ctl.init_out_q, desc.init_out), nb(ctl.init_s_b_q, desc.init_s_b), nb(ctl.init_s_m_q, desc.init_s_m),
          nb(ctl.init_shift_q, desc.init_shift), nb(p.ia_q, desc.init_base), nb(p.iblk_q, desc.init_base),
          nb(p.ib_q, desc.init_base),
          nb(ctl.shift_q, desc.shift), nb(p.mi_q, count_zero), nb(p.n_q, count_zero), nb(p.k_q, count_zero),
          nb(p.m0_q, count_zero), nb(p.b_q, count_zero), nb(p.ent_q, lit(entry, 0)),
          nb(ctl.credits_q, lit(geo.fifo_bits + 1, geo.fifo_depth))};
}

// The Activate/Fill descriptor's load on a_start: the activation bank's function, vector length and
// norm shift for the pass; act_mode_q hands the bank and the ports to the pass.
Stmts act_descriptor_load(const EngineGeometry& geo, const DescriptorPorts& desc, const ControlState& ctl) {
  const int len_bits = geo.act.len_bits;
  return {nb(ctl.busy_q, bit(true)), nb(ctl.act_mode_q, bit(true)), nb(ctl.a_func_q, desc.a_func),
          nb(ctl.a_len_q, len_bits >= geo.count_bits ? zext(desc.a_n, len_bits) : desc.a_n.slice(len_bits - 1, 0)),
          nb(ctl.a_ns_q, desc.a_norm_shift)};
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
  Stmts reset = with_zero_reset(
      m, {nb(ctl.busy_q, lo), nb(ctl.done_q, lo), nb(ctl.err_q, lo), nb(ctl.run_q, lo), nb(ctl.act_mode_q, lo)},
      assigned_signals(load));
  reset = with_zero_reset(m, std::move(reset), assigned_signals(advance));
  reset = with_zero_reset(m, std::move(reset), assigned_signals(a_load));
  m.always_ff_reset(
      std::move(reset),
      {nb(ctl.done_q, decode.accept & decode.empty),
       if_(decode.start, load,
           {if_(s.issue, advance),
            nb(ctl.credits_q, ctl.credits_q - zext(s.issue & s.last_k, credit_bits) + zext(s.pop, credit_bits))}),
       if_(ctl.busy_q & (w.done | pass.done), {nb(ctl.busy_q, lo), nb(ctl.done_q, hi), nb(ctl.act_mode_q, lo)}),
       if_(decode.a_start, a_load),
       if_(st.st_error | r.a_err | a.res_mismatch | f.fifo_overflow, {nb(ctl.err_q, hi)})});
}

// The statistics counters of the last descriptor, cleared on accept.
void build_statistics(Module& m, const MemoryAndStatusPorts& ports, const ControlState& ctl,
                      const DescriptorDecode& decode, const StagingWrite& st, const StreamerIssue& s,
                      const WriterWires& w) {
  const Statistics& stat = ctl.stat;
  const Expr zero = lit(32, 0), one = lit(32, 1);
  m.blank();
  m.comment("Statistics of the last descriptor (why the streamer did not issue, by first missing condition).");
  const Stmts clear = {nb(stat.cycles, zero),     nb(stat.vectors, zero),   nb(stat.stall_data, zero),
                       nb(stat.stall_tile, zero), nb(stat.stall_out, zero), nb(stat.wr_wait, zero)};
  const Expr waiting = ctl.run_q & st.st_rd_avail;
  m.always_ff_reset(
      clear,
      {if_(decode.start | decode.a_start,
           {nb(stat.cycles, one), nb(stat.vectors, zero), nb(stat.stall_data, zero), nb(stat.stall_tile, zero),
            nb(stat.stall_out, zero), nb(stat.wr_wait, zero)},
           {if_(ctl.busy_q, {nb(stat.cycles, stat.cycles + one)}),
            if_(~ctl.act_mode_q & ~ctl.hold_q & w.wr_en & ~ports.wr_ready, {nb(stat.wr_wait, stat.wr_wait + one)}),
            if_(s.issue, {nb(stat.vectors, stat.vectors + one)}),
            if_(ctl.run_q & ~st.st_rd_avail, {nb(stat.stall_data, stat.stall_data + one)}),
            if_(waiting & ~s.tile_ok, {nb(stat.stall_tile, stat.stall_tile + one)}),
            if_(waiting & s.tile_ok & ~s.credit_ok, {nb(stat.stall_out, stat.stall_out + one)})})});
}

// The handshake, status and statistics outputs from their registers.
void drive_status_ports(Module& m, const DescriptorPorts& desc, const MemoryAndStatusPorts& ports,
                        const ControlState& ctl) {
  m.assign(desc.ready, ~ctl.busy_q);
  m.assign(ports.busy, ctl.busy_q);
  m.assign(ports.done, ctl.done_q);
  m.assign(ports.error, ctl.err_q);
  m.assign(ports.stat_cycles, ctl.stat.cycles);
  m.assign(ports.stat_vectors, ctl.stat.vectors);
  m.assign(ports.stat_stall_data, ctl.stat.stall_data);
  m.assign(ports.stat_stall_tile, ctl.stat.stall_tile);
  m.assign(ports.stat_stall_out, ctl.stat.stall_out);
  m.assign(ports.stat_wr_wait, ctl.stat.wr_wait);
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

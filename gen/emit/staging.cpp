#include "emit/staging.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace capsgen::emit {

int staging_vec_bits(const AccelConfig& cfg) { return std::max(1, clog2(cfg.accumulator.depth)); }

Module build_staging_ram() {
  Module m(kStagingRamModule,
           "One array row's staging RAM: a simple dual-port memory (one write port, one read port with a\n"
           "registered output) that FPGA tools infer as block RAM and an ASIC flow maps to a two-port SRAM\n"
           "macro. A read of the word written in the same cycle returns the old word (the staging buffer\n"
           "never does that: writer and reader own different buffers).");
  const Param width = m.parameter("Width", 8, "element bits");
  const Param depth = m.parameter("Depth", 512, "words");
  const Param addr_width = m.parameter("AddrWidth", 9, "address bits");
  m.input("clk_i", 1, "clock");
  const Expr we_i = m.input("we_i", 1, "write enable");
  const Expr waddr_i = m.input("waddr_i", addr_width, "write address (< Depth)");
  const Expr wdata_i = m.input("wdata_i", width, "write data");
  const Expr re_i = m.input("re_i", 1, "read enable");
  const Expr raddr_i = m.input("raddr_i", addr_width, "read address (< Depth)");
  const Expr rdata_o = m.output("rdata_o", width, "read data, one cycle after re_i (held otherwise)");
  const Memory mem = m.memory("mem", width, depth, "the words");
  const Expr rdata_q = m.reg("rdata_q", width);
  m.blank();
  m.always_ff({if_(we_i, {nb(mem[waddr_i], wdata_i)}), if_(re_i, {nb(rdata_q, mem[raddr_i])})});
  m.assign(rdata_o, rdata_q);
  return m;
}

namespace {

// The staging buffer's ports.
struct StagingPorts {
  Expr wr_en_i, wr_row_i, wr_vec_i, wr_zero_i, wr_data_i, wr_vall_i, wr_vdata_i, wr_vzero_i, wr_commit_i, wr_free_o;
  Expr rd_en_i, rd_vec_i, rd_data_o, rd_release_i, rd_avail_o, wr_buf_o, rd_buf_o, error_o;
};

StagingPorts declare_staging_ports(Module& m, int R, int D, int N, int RB, int VB) {
  m.clock_and_reset();
  return StagingPorts{
      m.input("wr_en_i", 1, "write one element"),
      m.input("wr_row_i", RB, fmt::format("array row of the element (< {})", R)),
      m.input("wr_vec_i", VB, fmt::format("vector within the block (< {})", N)),
      m.input("wr_zero_i", 1, "write zero instead of wr_data_i"),
      m.input("wr_data_i", D, "element (signed data code)"),
      m.input("wr_vall_i", 1, "with wr_en_i: write the whole vector wr_vec_i (every row) from wr_vdata_i"),
      m.input("wr_vdata_i", R * D, "the vector (row r in bits [r*D +: D])"),
      m.input("wr_vzero_i", R, "rows written as zero (bit r: row r) in a whole-vector write"),
      m.input("wr_commit_i", 1, "the write buffer holds a complete block: hand it to the reader"),
      m.output("wr_free_o", 1, "the write buffer may be written"),
      m.input("rd_en_i", 1, "read one vector"),
      m.input("rd_vec_i", VB, fmt::format("vector within the block (< {})", N)),
      m.output("rd_data_o", R * D, "the vector, one cycle after rd_en_i (held otherwise)"),
      m.input("rd_release_i", 1, "the reader is done with the read buffer"),
      m.output("rd_avail_o", 1, "the read buffer holds a committed block"),
      m.output("wr_buf_o", 1, "buffer the writer is on"),
      m.output("rd_buf_o", 1, "buffer the reader is on"),
      m.output("error_o", 1, "sticky: a request in the wrong buffer state (or index out of range)")};
}

}  // namespace

Module build_staging(const AccelConfig& cfg) {
  const int R = cfg.array.rows, D = cfg.widths.data, N = cfg.accumulator.depth;
  const int RB = std::max(1, clog2(R)), VB = staging_vec_bits(cfg), AB = clog2(2LL * N);  // >= 1: N >= 1
  if (R < 1 || D < 2 || N < 1) throw std::logic_error("build_staging: bad config");
  const bool row_check = (1 << RB) != R, vec_check = (1LL << VB) != N;

  Module m(kStagingModule,
           fmt::format(
               "Staging buffer between the gather unit and the array's data input (docs/rtl-staging.md):\n"
               "{0} row RAMs (capsgen_staging_ram) of 2 x {1} elements of {2} bits, i.e. two buffers of up to {1}\n"
               "vectors of {0} elements. Writer (gather side): one element per cycle into row wr_row_i, vector\n"
               "wr_vec_i of the write buffer (zero when wr_zero_i: padding, rows outside the reduction), or with\n"
               "wr_vall_i a whole vector per cycle (rows in wr_vzero_i zero: the vector-wide gather);\n"
               "wr_commit_i hands the write buffer to the reader (it becomes full) and the writer moves to the\n"
               "other buffer. Reader (array side): rd_en_i reads vector rd_vec_i of the read buffer from every\n"
               "row at once, rd_data_o one cycle later (row r in bits [r*{2} +: {2}]); rd_release_i empties the\n"
               "read buffer and the reader moves to the other one. wr_free_o: the write buffer may be written\n"
               "(not full); rd_avail_o: the read buffer holds a committed block. Both buffers start empty, the\n"
               "writer and the reader on buffer 0, so blocks are read in the order they were committed.\n"
               "A write, commit, read or release while the buffer is not in the needed state{3} is ignored\n"
               "and sets the sticky error_o (a protocol bug in the controller; the testbenches fail on it).",
               R, N, D,
               row_check || vec_check ? ", or with an index out of range," : ""));
  const StagingPorts p = declare_staging_ports(m, R, D, N, RB, VB);

  m.comment("Buffer state: full flag per buffer, the writer's and the reader's buffer, sticky error.");
  FlopGroup group(m);
  const Flop full = group.flop("buffer_full", 2, "per buffer: holds a committed block");
  const Flop write_buffer = group.flop("write_buffer", 1, "the buffer the writer fills");
  const Flop read_buffer = group.flop("read_buffer", 1, "the buffer the reader reads");
  const Flop error = group.flop("error", 1, "sticky error_o");
  const Expr full_q = full.q, wr_buf_q = write_buffer.q, rd_buf_q = read_buffer.q;
  const Expr wr_free = m.wire("wr_free", 1);
  const Expr rd_avail = m.wire("rd_avail", 1);
  const Expr do_write = m.wire("do_write", 1);
  const Expr bad = m.wire("bad", 1, "a request in the wrong state this cycle");
  const Expr wdata = m.wire("wdata", D);
  const Expr waddr =
      m.wire("waddr", AB, fmt::format("word of the write: wr_vec_i (buffer 0) or {} + wr_vec_i (buffer 1)", N));
  const Expr raddr = m.wire("raddr", AB);
  m.blank();
  m.assign(wr_free, ternary(wr_buf_q, ~full_q[1], ~full_q[0]));
  m.assign(rd_avail, ternary(rd_buf_q, full_q[1], full_q[0]));
  Expr write_ok = p.wr_en_i & wr_free;
  if (row_check) write_ok = write_ok & (p.wr_vall_i | (p.wr_row_i < lit(RB, R)));
  if (vec_check) write_ok = write_ok & (p.wr_vec_i < lit(VB, N));
  m.assign(do_write, write_ok);
  Expr wrong = (p.wr_en_i & ~wr_free) | (p.wr_commit_i & ~wr_free) | (p.rd_en_i & ~rd_avail) |
               (p.rd_release_i & ~rd_avail);
  if (row_check) wrong = wrong | (p.wr_en_i & ~p.wr_vall_i & (p.wr_row_i >= lit(RB, R)));
  if (vec_check) wrong = wrong | (p.wr_en_i & (p.wr_vec_i >= lit(VB, N))) | (p.rd_en_i & (p.rd_vec_i >= lit(VB, N)));
  m.assign(bad, wrong);
  m.assign(wdata, ternary(p.wr_zero_i, lit(D, 0), p.wr_data_i));
  m.assign(waddr, ternary(wr_buf_q, zext(p.wr_vec_i, AB) + lit(AB, N), zext(p.wr_vec_i, AB)));
  m.assign(raddr, ternary(rd_buf_q, zext(p.rd_vec_i, AB) + lit(AB, N), zext(p.rd_vec_i, AB)));
  const std::vector<Flop>& flops = group.flops();
  Stmts next = hold_flops(flops);
  next.push_back(stmt_comment("commit and release in one cycle touch different buffers (one full, one empty)"));
  next.push_back(if_(p.wr_commit_i & wr_free, {blk(full.d.at(wr_buf_q), bit(true)), blk(write_buffer.d, ~wr_buf_q)}));
  next.push_back(if_(p.rd_release_i & rd_avail, {blk(full.d.at(rd_buf_q), bit(false)), blk(read_buffer.d, ~rd_buf_q)}));
  next.push_back(if_(bad, {blk(error.d, bit(true))}));
  m.blank();
  m.comment("Next buffer state.");
  m.always_comb(std::move(next));
  m.always_ff_flops(flops);

  m.blank();
  m.comment("One RAM per array row.");
  const Module ram = build_staging_ram();
  for (int r = 0; r < R; ++r) {
    const Expr zero_row = R == 1 ? p.wr_vzero_i : p.wr_vzero_i[r];
    m.instance(ram, fmt::format("u_row{}", r))
        .param("Width", D)
        .param("Depth", 2 * N)
        .param("AddrWidth", AB)
        .connect("clk_i", m.clk())
        .connect("we_i", R == 1 ? do_write : do_write & (p.wr_vall_i | (p.wr_row_i == lit(RB, r))))
        .connect("waddr_i", waddr)
        .connect("wdata_i", ternary(p.wr_vall_i, ternary(zero_row, lit(D, 0), p.wr_vdata_i.part(r, D)), wdata))
        .connect("re_i", p.rd_en_i & rd_avail)
        .connect("raddr_i", raddr)
        .connect("rdata_o", p.rd_data_o.part(r, D));
  }
  m.blank();
  m.assign(p.wr_free_o, wr_free);
  m.assign(p.rd_avail_o, rd_avail);
  m.assign(p.wr_buf_o, wr_buf_q);
  m.assign(p.rd_buf_o, rd_buf_q);
  m.assign(p.error_o, error.q);
  return m;
}

void emit_staging(const AccelConfig& cfg, Design& design) {
  design.add_module(build_staging_ram());
  design.add_module(build_staging(cfg));
}

}  // namespace capsgen::emit

#include "emit/staging.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "emit/activation_internal.hpp"

namespace capsgen::emit {

using detail::lit;
using detail::zext;

int staging_vec_bits(const AccelConfig& cfg) { return std::max(1, clog2(cfg.accumulator.depth)); }

Module build_staging_ram() {
  Module m(kStagingRamModule,
           "One array row's staging RAM: a simple dual-port memory (one write port, one read port with a\n"
           "registered output) that FPGA tools infer as block RAM and an ASIC flow maps to a two-port SRAM\n"
           "macro. A read of the word written in the same cycle returns the old word (the staging buffer\n"
           "never does that: writer and reader own different buffers).");
  m.parameter("Width", "8", "element bits").parameter("Depth", "512", "words").parameter("AddrWidth", "9", "address bits");
  m.input("clk_i", "1", "clock");
  m.input("we_i", "1", "write enable");
  m.input("waddr_i", "AddrWidth", "write address (< Depth)");
  m.input("wdata_i", "Width", "write data");
  m.input("re_i", "1", "read enable");
  m.input("raddr_i", "AddrWidth", "read address (< Depth)");
  m.output("rdata_o", "Width", "read data, one cycle after re_i (held otherwise)");
  m.memory("mem", "Width", "Depth", "the words");
  m.reg("rdata_q", "Width");
  m.blank();
  m.always_ff({if_("we_i", {nb("mem[waddr_i]", "wdata_i")}), if_("re_i", {nb("rdata_q", "mem[raddr_i]")})});
  m.assign("rdata_o", "rdata_q");
  return m;
}

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
  m.clock_and_reset()
      .input("wr_en_i", "1", "write one element")
      .input("wr_row_i", str(RB), fmt::format("array row of the element (< {})", R))
      .input("wr_vec_i", str(VB), fmt::format("vector within the block (< {})", N))
      .input("wr_zero_i", "1", "write zero instead of wr_data_i")
      .input("wr_data_i", str(D), "element (signed data code)")
      .input("wr_vall_i", "1", "with wr_en_i: write the whole vector wr_vec_i (every row) from wr_vdata_i")
      .input("wr_vdata_i", str(R * D), "the vector (row r in bits [r*D +: D])")
      .input("wr_vzero_i", str(R), "rows written as zero (bit r: row r) in a whole-vector write")
      .input("wr_commit_i", "1", "the write buffer holds a complete block: hand it to the reader")
      .output("wr_free_o", "1", "the write buffer may be written")
      .input("rd_en_i", "1", "read one vector")
      .input("rd_vec_i", str(VB), fmt::format("vector within the block (< {})", N))
      .output("rd_data_o", str(R * D), "the vector, one cycle after rd_en_i (held otherwise)")
      .input("rd_release_i", "1", "the reader is done with the read buffer")
      .output("rd_avail_o", "1", "the read buffer holds a committed block")
      .output("wr_buf_o", "1", "buffer the writer is on")
      .output("rd_buf_o", "1", "buffer the reader is on")
      .output("error_o", "1", "sticky: a request in the wrong buffer state (or index out of range)");

  m.comment("Buffer state: full flag per buffer, the writer's and the reader's buffer, sticky error.");
  m.reg("full_q", "2");
  m.reg("wr_buf_q", "1");
  m.reg("rd_buf_q", "1");
  m.reg("error_q", "1");
  m.wire("wr_free", "1");
  m.wire("rd_avail", "1");
  m.wire("do_write", "1");
  m.wire("bad", "1", "a request in the wrong state this cycle");
  m.wire("wdata", str(D));
  m.wire("waddr", str(AB), fmt::format("word of the write: wr_vec_i (buffer 0) or {} + wr_vec_i (buffer 1)", N));
  m.wire("raddr", str(AB));
  m.blank();
  m.assign("wr_free", "wr_buf_q ? ~full_q[1] : ~full_q[0]");
  m.assign("rd_avail", "rd_buf_q ? full_q[1] : full_q[0]");
  std::string range_ok;
  if (row_check) range_ok += fmt::format(" & (wr_vall_i | (wr_row_i < {}))", lit(RB, R));
  if (vec_check) range_ok += fmt::format(" & (wr_vec_i < {})", lit(VB, N));
  m.assign("do_write", "wr_en_i & wr_free" + range_ok);
  {
    std::string bad = "(wr_en_i & ~wr_free) | (wr_commit_i & ~wr_free) | (rd_en_i & ~rd_avail) | (rd_release_i & ~rd_avail)";
    if (row_check) bad += fmt::format(" | (wr_en_i & ~wr_vall_i & (wr_row_i >= {}))", lit(RB, R));
    if (vec_check)
      bad += fmt::format(" | (wr_en_i & (wr_vec_i >= {0})) | (rd_en_i & (rd_vec_i >= {0}))", lit(VB, N));
    m.assign("bad", bad);
  }
  m.assign("wdata", fmt::format("wr_zero_i ? {} : wr_data_i", lit(D, 0)));
  m.assign("waddr", fmt::format("wr_buf_q ? {} + {} : {}", zext("wr_vec_i", VB, AB), lit(AB, N), zext("wr_vec_i", VB, AB)));
  m.assign("raddr", fmt::format("rd_buf_q ? {} + {} : {}", zext("rd_vec_i", VB, AB), lit(AB, N), zext("rd_vec_i", VB, AB)));
  m.always_ff_reset({nb("full_q", "2'b00"), nb("wr_buf_q", "1'b0"), nb("rd_buf_q", "1'b0"), nb("error_q", "1'b0")},
                    {stmt_comment("commit and release in one cycle touch different buffers (one full, one empty)"),
                     if_("wr_commit_i & wr_free", {nb("full_q[wr_buf_q]", "1'b1"), nb("wr_buf_q", "~wr_buf_q")}),
                     if_("rd_release_i & rd_avail", {nb("full_q[rd_buf_q]", "1'b0"), nb("rd_buf_q", "~rd_buf_q")}),
                     if_("bad", {nb("error_q", "1'b1")})});

  m.blank();
  m.comment("One RAM per array row.");
  for (int r = 0; r < R; ++r) {
    m.instance(kStagingRamModule, fmt::format("u_row{}", r))
        .param("Width", str(D))
        .param("Depth", str(2 * N))
        .param("AddrWidth", str(AB))
        .connect("clk_i", "clk_i")
        .connect("we_i", R == 1 ? "do_write" : fmt::format("do_write & (wr_vall_i | (wr_row_i == {}))", lit(RB, r)))
        .connect("waddr_i", "waddr")
        .connect("wdata_i", fmt::format("wr_vall_i ? ({} ? {} : {}) : wdata", R == 1 ? std::string("wr_vzero_i")
                                                                                  : fmt::format("wr_vzero_i[{}]", r),
                                        lit(D, 0), expr_slice("wr_vdata_i", r, str(D))))
        .connect("re_i", "rd_en_i & rd_avail")
        .connect("raddr_i", "raddr")
        .connect("rdata_o", expr_slice("rd_data_o", r, str(D)));
  }
  m.blank();
  m.assign("wr_free_o", "wr_free");
  m.assign("rd_avail_o", "rd_avail");
  m.assign("wr_buf_o", "wr_buf_q");
  m.assign("rd_buf_o", "rd_buf_q");
  m.assign("error_o", "error_q");
  return m;
}

void emit_staging(const AccelConfig& cfg, Design& design) {
  design.add_module(build_staging_ram());
  design.add_module(build_staging(cfg));
}

}  // namespace capsgen::emit

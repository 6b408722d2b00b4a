#include "emit/accumulator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

namespace capsgen::emit {

int accumulator_addr_bits(const AccelConfig& cfg) { return std::max(1, clog2(cfg.accumulator.depth)); }

Module build_accumulator(const AccelConfig& cfg) {
  Module m(kAccumulatorModule,
           "Column accumulator (CapsAcc Fig. 11c): a RAM of Depth partial sums and a saturating adder.\n"
           "An input (in_valid_i) either loads   entry[addr] = sat(in_bias_i + in_psum_i)   (in_accumulate_i = 0)\n"
           "or accumulates                        entry[addr] = sat(entry[addr] + in_psum_i) (in_accumulate_i = 1),\n"
           "saturating to PsumWidth bits. Inputs may come every cycle, also to the same address (forwarding).\n"
           "When in_last_i marks the final chunk, the written value leaves on out_* 2 cycles later: the stream of\n"
           "finished entries for the activation unit. rd_en_i reads any entry (1 cycle, RAM contents before the\n"
           "writes of that cycle); it shares the RAM read port and is ignored (rd_valid_o stays low) in a cycle\n"
           "with an accumulate input. The RAM has one read and one write port: FPGA tools infer block RAM.");
  const Param psum_width = m.parameter("PsumWidth", cfg.widths.psum, "signed partial-sum bits");
  const Param depth = m.parameter("Depth", cfg.accumulator.depth, "partial-sum entries");
  const Param addr_width = m.parameter("AddrWidth", accumulator_addr_bits(cfg), "entry address bits (>= log2(Depth))");
  m.clock_and_reset();
  const Expr in_valid_i = m.input("in_valid_i", 1, "an input this cycle");
  const Expr in_accumulate_i = m.input("in_accumulate_i", 1, "1: add to the entry; 0: load bias + psum");
  const Expr in_last_i = m.input("in_last_i", 1, "final chunk: stream the result on out_*");
  const Expr in_addr_i = m.input("in_addr_i", addr_width, "entry address (< Depth)");
  const Expr in_psum_i = m.input("in_psum_i", psum_width, "partial sum from the array column", true);
  const Expr in_bias_i = m.input("in_bias_i", psum_width, "bias added by a load (0 when there is none)", true);
  const Expr out_valid_o = m.output("out_valid_o", 1, "out_data_o holds a finished entry");
  const Expr out_addr_o = m.output("out_addr_o", addr_width, "its address");
  const Expr out_data_o = m.output("out_data_o", psum_width, "its value", true);
  const Expr rd_en_i = m.input("rd_en_i", 1, "read request");
  const Expr rd_addr_i = m.input("rd_addr_i", addr_width, "read address");
  const Expr rd_valid_o = m.output("rd_valid_o", 1, "rd_data_o holds the entry requested in the previous cycle");
  const Expr rd_data_o = m.output("rd_data_o", psum_width, "entry value", true);

  const Memory mem = m.memory("mem", psum_width, depth, "partial-sum RAM");
  const Expr ram_rdata_q = m.reg("ram_rdata_q", psum_width, "registered RAM read data", true);
  const Expr acc_read = m.wire("acc_read", 1, "an accumulate input reads its entry this cycle");
  const Expr ram_re = m.wire("ram_re", 1);
  const Expr ram_raddr = m.wire("ram_raddr", addr_width);
  const Expr s1_valid_q = m.reg("s1_valid_q", 1, "stage 1: input waiting for its RAM read");
  const Expr s1_acc_q = m.reg("s1_acc_q", 1);
  const Expr s1_last_q = m.reg("s1_last_q", 1);
  const Expr s1_addr_q = m.reg("s1_addr_q", addr_width);
  const Expr s1_psum_q = m.reg("s1_psum_q", psum_width, "", true);
  const Expr s1_bias_q = m.reg("s1_bias_q", psum_width, "", true);
  const Expr s1_rd_q = m.reg("s1_rd_q", 1, "read-out request in flight");
  const Expr fwd_hit_q =
      m.reg("fwd_hit_q", 1, "the stage-1 input accumulates onto the entry written last cycle (RAM data stale)");
  const Expr fwd_data_q = m.reg("fwd_data_q", psum_width, "the value written last cycle", true);
  const Expr out_valid_q = m.reg("out_valid_q", 1);
  const Expr out_addr_q = m.reg("out_addr_q", addr_width);
  const Expr out_data_q = m.reg("out_data_q", psum_width, "", true);
  const Expr operand =
      m.wire("operand", psum_width, "entry (accumulate, forwarded or from the RAM) or bias (load)", true);
  const Expr sum_wide = m.wire("sum_wide", psum_width + 1, "exact sum", true);
  const Expr overflow = m.wire("overflow", 1);
  const Expr sum_sat = m.wire("sum_sat", psum_width, "sum saturated to PsumWidth bits", true);
  m.blank();
  m.assign(acc_read, in_valid_i & in_accumulate_i);
  m.assign(ram_re, acc_read | rd_en_i);
  m.assign(ram_raddr, ternary(acc_read, in_addr_i, rd_addr_i));
  m.always_ff({if_(ram_re, {nb(ram_rdata_q, mem[ram_raddr])}), if_(s1_valid_q, {nb(mem[s1_addr_q], sum_sat)})});
  m.blank();
  m.comment("Stage 2: add and saturate, write back. The forwarding decision was registered in stage 1 (the\n"
            "entry written at the end of this cycle's predecessor is the one in stage 1 then), so only\n"
            "the operand multiplexer, the adder and the saturation sit on the path to the RAM write data.");
  const Dim msb = psum_width - 1;
  m.assign(operand, ternary(fwd_hit_q, fwd_data_q, ternary(s1_acc_q, ram_rdata_q, s1_bias_q)));
  m.assign(sum_wide, cat({operand[msb], operand}) + cat({s1_psum_q[msb], s1_psum_q}));
  m.assign(overflow, sum_wide[psum_width] ^ sum_wide[msb]);
  m.assign(sum_sat, ternary(overflow, cat({sum_wide[psum_width], rep(msb, ~sum_wide[psum_width])}),
                            sum_wide.slice(msb, 0)));
  m.blank();
  m.always_ff_next(
      {nb(s1_valid_q, bit(false)), nb(s1_rd_q, bit(false)), nb(fwd_hit_q, bit(false)), nb(out_valid_q, bit(false))},
      {nb(s1_valid_q, in_valid_i), nb(s1_rd_q, rd_en_i & ~acc_read),
       nb(fwd_hit_q, acc_read & s1_valid_q & (s1_addr_q == in_addr_i)), nb(out_valid_q, s1_valid_q & s1_last_q)});
  m.always_ff({nb(s1_acc_q, in_accumulate_i), nb(s1_last_q, in_last_i), nb(s1_addr_q, in_addr_i),
               nb(s1_psum_q, in_psum_i), nb(s1_bias_q, in_bias_i), nb(fwd_data_q, sum_sat), nb(out_addr_q, s1_addr_q),
               nb(out_data_q, sum_sat)});
  m.blank();
  m.assign(out_valid_o, out_valid_q);
  m.assign(out_addr_o, out_addr_q);
  m.assign(out_data_o, out_data_q);
  m.assign(rd_valid_o, s1_rd_q);
  m.assign(rd_data_o, ram_rdata_q);
  return m;
}

Module build_accumulator_bank(const AccelConfig& cfg) {
  const int cols = cfg.array.cols;
  Module m(kAccumulatorBankModule,
           fmt::format("Bank of {} column accumulators sharing one control stream (mode, address, last, read-out):\n"
                       "column c takes in_psum_i/in_bias_i bits [c*PsumWidth +: PsumWidth]. Latencies and\n"
                       "contract as in {}.",
                       cols, kAccumulatorModule));
  const Param psum_width = m.parameter("PsumWidth", cfg.widths.psum, "signed partial-sum bits");
  const Param depth = m.parameter("Depth", cfg.accumulator.depth, "partial-sum entries per column");
  const Param addr_width = m.parameter("AddrWidth", accumulator_addr_bits(cfg), "entry address bits (>= log2(Depth))");
  const Dim vw = cols * psum_width;
  m.clock_and_reset();
  const Expr in_valid_i = m.input("in_valid_i", 1, "an input this cycle (all columns)");
  const Expr in_accumulate_i = m.input("in_accumulate_i", 1, "1: add to the entries; 0: load bias + psum");
  const Expr in_last_i = m.input("in_last_i", 1, "final chunk: stream the results on out_*");
  const Expr in_addr_i = m.input("in_addr_i", addr_width, "entry address (< Depth)");
  const Expr in_psum_i = m.input("in_psum_i", vw, "partial sums, column c in bits [c*PsumWidth +: PsumWidth]");
  const Expr in_bias_i = m.input("in_bias_i", vw, "biases, column c in bits [c*PsumWidth +: PsumWidth]");
  const Expr out_valid_o = m.output("out_valid_o", 1, "out_data_o holds finished entries");
  const Expr out_addr_o = m.output("out_addr_o", addr_width, "their address");
  const Expr out_data_o = m.output("out_data_o", vw, "their values, column c in bits [c*PsumWidth +: PsumWidth]");
  const Expr rd_en_i = m.input("rd_en_i", 1, "read request");
  const Expr rd_addr_i = m.input("rd_addr_i", addr_width, "read address");
  const Expr rd_valid_o = m.output("rd_valid_o", 1, "rd_data_o holds the entries requested in the previous cycle");
  const Expr rd_data_o = m.output("rd_data_o", vw, "entry values, column c in bits [c*PsumWidth +: PsumWidth]");
  // Column 0 drives the bank's valid/address outputs; the other columns' copies go to unused wires.
  std::vector<Expr> out_valid = {out_valid_o}, out_addr = {out_addr_o}, rd_valid = {rd_valid_o};
  if (cols > 1) {
    m.lint_off("UNUSEDSIGNAL",
               "every column computes the same valid/address outputs; column 0 drives the\n"
               "bank's, synthesis merges the others away.");
    for (int c = 1; c < cols; ++c) {
      out_valid.push_back(m.wire(fmt::format("out_valid_c{}", c), 1));
      out_addr.push_back(m.wire(fmt::format("out_addr_c{}", c), addr_width));
      rd_valid.push_back(m.wire(fmt::format("rd_valid_c{}", c), 1));
    }
    m.lint_on("UNUSEDSIGNAL");
  }
  const Module column = build_accumulator(cfg);
  for (int c = 0; c < cols; ++c) {
    m.instance(column, fmt::format("u_acc_c{}", c))
        .param(psum_width)
        .param(depth)
        .param(addr_width)
        .connect("clk_i", m.clk())
        .connect("rst_ni", m.rst_n())
        .connect("in_valid_i", in_valid_i)
        .connect("in_accumulate_i", in_accumulate_i)
        .connect("in_last_i", in_last_i)
        .connect("in_addr_i", in_addr_i)
        .connect("in_psum_i", in_psum_i.part(c, psum_width))
        .connect("in_bias_i", in_bias_i.part(c, psum_width))
        .connect("out_valid_o", out_valid[c])
        .connect("out_addr_o", out_addr[c])
        .connect("out_data_o", out_data_o.part(c, psum_width))
        .connect("rd_en_i", rd_en_i)
        .connect("rd_addr_i", rd_addr_i)
        .connect("rd_valid_o", rd_valid[c])
        .connect("rd_data_o", rd_data_o.part(c, psum_width));
  }
  return m;
}

void emit_accumulator(const AccelConfig& cfg, Design& design) {
  design.add_module(build_accumulator(cfg));
  design.add_module(build_accumulator_bank(cfg));
}

}  // namespace capsgen::emit

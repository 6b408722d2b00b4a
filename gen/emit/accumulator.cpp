#include "emit/accumulator.hpp"

#include <fmt/format.h>

#include <algorithm>

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
  m.parameter("PsumWidth", str(cfg.widths.psum), "signed partial-sum bits")
      .parameter("Depth", str(cfg.accumulator.depth), "partial-sum entries")
      .parameter("AddrWidth", str(accumulator_addr_bits(cfg)), "entry address bits (>= log2(Depth))");
  m.clock_and_reset()
      .input("in_valid_i", "1", "an input this cycle")
      .input("in_accumulate_i", "1", "1: add to the entry; 0: load bias + psum")
      .input("in_last_i", "1", "final chunk: stream the result on out_*")
      .input("in_addr_i", "AddrWidth", "entry address (< Depth)")
      .input("in_psum_i", "PsumWidth", "partial sum from the array column", true)
      .input("in_bias_i", "PsumWidth", "bias added by a load (0 when there is none)", true)
      .output("out_valid_o", "1", "out_data_o holds a finished entry")
      .output("out_addr_o", "AddrWidth", "its address")
      .output("out_data_o", "PsumWidth", "its value", true)
      .input("rd_en_i", "1", "read request")
      .input("rd_addr_i", "AddrWidth", "read address")
      .output("rd_valid_o", "1", "rd_data_o holds the entry requested in the previous cycle")
      .output("rd_data_o", "PsumWidth", "entry value", true);

  m.memory("mem", "PsumWidth", "Depth", "partial-sum RAM");
  m.reg("ram_rdata_q", "PsumWidth", "registered RAM read data", true);
  m.wire("acc_read", "1", "an accumulate input reads its entry this cycle");
  m.wire("ram_re", "1");
  m.wire("ram_raddr", "AddrWidth");
  m.reg("s1_valid_q", "1", "stage 1: input waiting for its RAM read");
  m.reg("s1_acc_q", "1");
  m.reg("s1_last_q", "1");
  m.reg("s1_addr_q", "AddrWidth");
  m.reg("s1_psum_q", "PsumWidth", "", true);
  m.reg("s1_bias_q", "PsumWidth", "", true);
  m.reg("s1_rd_q", "1", "read-out request in flight");
  m.reg("fwd_hit_q", "1", "the stage-1 input accumulates onto the entry written last cycle (RAM data stale)");
  m.reg("fwd_data_q", "PsumWidth", "the value written last cycle", true);
  m.reg("out_valid_q", "1");
  m.reg("out_addr_q", "AddrWidth");
  m.reg("out_data_q", "PsumWidth", "", true);
  m.wire("operand", "PsumWidth", "entry (accumulate, forwarded or from the RAM) or bias (load)", true);
  m.wire("sum_wide", "PsumWidth + 1", "exact sum", true);
  m.wire("overflow", "1");
  m.wire("sum_sat", "PsumWidth", "sum saturated to PsumWidth bits", true);
  m.blank();
  m.assign("acc_read", "in_valid_i & in_accumulate_i");
  m.assign("ram_re", "acc_read | rd_en_i");
  m.assign("ram_raddr", "acc_read ? in_addr_i : rd_addr_i");
  m.always_ff({if_("ram_re", {nb("ram_rdata_q", "mem[ram_raddr]")}), if_("s1_valid_q", {nb("mem[s1_addr_q]", "sum_sat")})});
  m.blank();
  m.comment("Stage 2: add and saturate, write back. The forwarding decision was registered in stage 1 (the\n"
            "entry written at the end of this cycle's predecessor is the one in stage 1 then), so only\n"
            "the operand multiplexer, the adder and the saturation sit on the path to the RAM write data.");
  m.assign("operand", "fwd_hit_q ? fwd_data_q : (s1_acc_q ? ram_rdata_q : s1_bias_q)");
  m.assign("sum_wide", "{operand[PsumWidth-1], operand} + {s1_psum_q[PsumWidth-1], s1_psum_q}");
  m.assign("overflow", "sum_wide[PsumWidth] ^ sum_wide[PsumWidth-1]");
  m.assign("sum_sat",
           "overflow ? {sum_wide[PsumWidth], {(PsumWidth-1){~sum_wide[PsumWidth]}}} : sum_wide[PsumWidth-1:0]");
  m.blank();
  m.always_ff_reset({nb("s1_valid_q", "1'b0"), nb("s1_rd_q", "1'b0"), nb("fwd_hit_q", "1'b0"),
                     nb("out_valid_q", "1'b0")},
                    {nb("s1_valid_q", "in_valid_i"), nb("s1_rd_q", "rd_en_i & ~acc_read"),
                     nb("fwd_hit_q", "acc_read & s1_valid_q & (s1_addr_q == in_addr_i)"),
                     nb("out_valid_q", "s1_valid_q & s1_last_q")});
  m.always_ff({nb("s1_acc_q", "in_accumulate_i"), nb("s1_last_q", "in_last_i"), nb("s1_addr_q", "in_addr_i"),
               nb("s1_psum_q", "in_psum_i"), nb("s1_bias_q", "in_bias_i"),
               nb("fwd_data_q", "sum_sat"), nb("out_addr_q", "s1_addr_q"), nb("out_data_q", "sum_sat")});
  m.blank();
  m.assign("out_valid_o", "out_valid_q");
  m.assign("out_addr_o", "out_addr_q");
  m.assign("out_data_o", "out_data_q");
  m.assign("rd_valid_o", "s1_rd_q");
  m.assign("rd_data_o", "ram_rdata_q");
  return m;
}

Module build_accumulator_bank(const AccelConfig& cfg) {
  const int cols = cfg.array.cols;
  Module m(kAccumulatorBankModule,
           fmt::format("Bank of {} column accumulators sharing one control stream (mode, address, last, read-out):\n"
                       "column c takes in_psum_i/in_bias_i bits [c*PsumWidth +: PsumWidth]. Latencies and\n"
                       "contract as in {}.",
                       cols, kAccumulatorModule));
  m.parameter("PsumWidth", str(cfg.widths.psum), "signed partial-sum bits")
      .parameter("Depth", str(cfg.accumulator.depth), "partial-sum entries per column")
      .parameter("AddrWidth", str(accumulator_addr_bits(cfg)), "entry address bits (>= log2(Depth))");
  const std::string vw = fmt::format("{}*PsumWidth", cols);
  m.clock_and_reset()
      .input("in_valid_i", "1", "an input this cycle (all columns)")
      .input("in_accumulate_i", "1", "1: add to the entries; 0: load bias + psum")
      .input("in_last_i", "1", "final chunk: stream the results on out_*")
      .input("in_addr_i", "AddrWidth", "entry address (< Depth)")
      .input("in_psum_i", vw, "partial sums, column c in bits [c*PsumWidth +: PsumWidth]")
      .input("in_bias_i", vw, "biases, column c in bits [c*PsumWidth +: PsumWidth]")
      .output("out_valid_o", "1", "out_data_o holds finished entries")
      .output("out_addr_o", "AddrWidth", "their address")
      .output("out_data_o", vw, "their values, column c in bits [c*PsumWidth +: PsumWidth]")
      .input("rd_en_i", "1", "read request")
      .input("rd_addr_i", "AddrWidth", "read address")
      .output("rd_valid_o", "1", "rd_data_o holds the entries requested in the previous cycle")
      .output("rd_data_o", vw, "entry values, column c in bits [c*PsumWidth +: PsumWidth]");
  if (cols > 1) {
    m.lint_off("UNUSEDSIGNAL",
               "every column computes the same valid/address outputs; column 0 drives the\n"
               "bank's, synthesis merges the others away.");
    for (int c = 1; c < cols; ++c) {
      m.wire(fmt::format("out_valid_c{}", c), "1");
      m.wire(fmt::format("out_addr_c{}", c), "AddrWidth");
      m.wire(fmt::format("rd_valid_c{}", c), "1");
    }
    m.lint_on("UNUSEDSIGNAL");
  }
  for (int c = 0; c < cols; ++c) {
    m.instance(kAccumulatorModule, fmt::format("u_acc_c{}", c))
        .param("PsumWidth", "PsumWidth")
        .param("Depth", "Depth")
        .param("AddrWidth", "AddrWidth")
        .connect("clk_i", "clk_i")
        .connect("rst_ni", "rst_ni")
        .connect("in_valid_i", "in_valid_i")
        .connect("in_accumulate_i", "in_accumulate_i")
        .connect("in_last_i", "in_last_i")
        .connect("in_addr_i", "in_addr_i")
        .connect("in_psum_i", expr_slice("in_psum_i", c, "PsumWidth"))
        .connect("in_bias_i", expr_slice("in_bias_i", c, "PsumWidth"))
        .connect("out_valid_o", c == 0 ? "out_valid_o" : fmt::format("out_valid_c{}", c))
        .connect("out_addr_o", c == 0 ? "out_addr_o" : fmt::format("out_addr_c{}", c))
        .connect("out_data_o", expr_slice("out_data_o", c, "PsumWidth"))
        .connect("rd_en_i", "rd_en_i")
        .connect("rd_addr_i", "rd_addr_i")
        .connect("rd_valid_o", c == 0 ? "rd_valid_o" : fmt::format("rd_valid_c{}", c))
        .connect("rd_data_o", expr_slice("rd_data_o", c, "PsumWidth"));
  }
  return m;
}

void emit_accumulator(const AccelConfig& cfg, Design& design) {
  design.add_module(build_accumulator(cfg));
  design.add_module(build_accumulator_bank(cfg));
}

}  // namespace capsgen::emit

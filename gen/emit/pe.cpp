#include "emit/pe.hpp"

#include <stdexcept>

namespace capsgen::emit {

Module build_pe(const AccelConfig& cfg) {
  const bool pipe = cfg.array.pe_pipeline;
  if (cfg.widths.psum < cfg.widths.data + cfg.widths.weight)
    throw std::logic_error("emit_pe: psum narrower than a product (config not validated?)");
  Module m(kPeModule,
           "Processing element (CapsAcc Fig. 11b): psum_o <= psum_i + data * weight, one MAC per cycle.\n"
           "Data (and the weight-swap token travelling with it) moves right through data_q/swap_q, partial\n"
           "sums move down through sum_q. weight1_q is one stage of the column's weight shift chain (loads the\n"
           "next tile while the current one computes); weight2_q holds the weight in use and takes weight1_q\n"
           "when the swap token arrives with the new tile's first data. Timing: docs/rtl-datapath.md." +
               std::string(pipe ? "\nPipelined variant: a product register sits between multiplier and adder." : ""));
  m.parameter("DataWidth", str(cfg.widths.data), "signed data bits")
      .parameter("WeightWidth", str(cfg.widths.weight), "signed weight bits")
      .parameter("PsumWidth", str(cfg.widths.psum), "signed partial-sum bits (>= DataWidth + WeightWidth)");
  m.clock_and_reset()
      .input("data_i", "DataWidth", "data from the left neighbour", true)
      .input("swap_i", "1", "weight-swap token travelling with data_i")
      .output("data_o", "DataWidth", "data to the right neighbour", true)
      .output("swap_o", "1", "weight-swap token to the right neighbour")
      .input("weight_i", "WeightWidth", "weight shift chain from the PE above", true)
      .input("weight_load_i", "1", "column weight-load cycle (broadcast down the column)")
      .input("weight_last_i", "1", "last cycle of a tile load (broadcast down the column)")
      .input("weight_arm_i", "1", "this row shifts in the current load (from the PE above; 1 in row 0)")
      .output("weight_o", "WeightWidth", "weight shift chain to the PE below", true)
      .output("weight_arm_o", "1", "arm flag for the row below")
      .input("psum_i", "PsumWidth", "partial sum from the PE above (0 in row 0)", true)
      .output("psum_o", "PsumWidth", "partial sum to the PE below", true);

  m.localparam("ProdWidth", "DataWidth + WeightWidth", "exact product width");
  m.blank();
  m.reg("data_q", "DataWidth", "data register (passes data right)", true);
  m.reg("swap_q", "1", "swap token register");
  m.reg("weight1_q", "WeightWidth", "Weight1: shifts weights down the column while loading", true);
  m.reg("weight2_q", "WeightWidth", "Weight2: holds the weight in use", true);
  m.reg("arm_q", "1", "row below shifts in this load (set once this row has shifted)");
  if (pipe) m.reg("prod_q", "ProdWidth", "product register (pe_pipeline)", true);
  m.reg("sum_q", "PsumWidth", "sum register (passes the partial sum down)", true);
  m.wire("weight_en", "1", "this row's Weight1 shifts in this cycle");
  m.wire("product", "ProdWidth", "data_q * weight2_q, exact", true);
  m.wire("product_ext", "PsumWidth", "product sign-extended to PsumWidth", true);
  m.wire("sum_d", "PsumWidth", "psum_i + product; wraps (the config guarantees no overflow)", true);
  m.blank();
  m.assign("weight_en", "weight_load_i & weight_arm_i");
  m.assign("product", "data_q * weight2_q");
  m.assign("product_ext", expr_sext(pipe ? "prod_q" : "product", "ProdWidth", "PsumWidth"));
  m.assign("sum_d", "psum_i + product_ext");
  m.blank();
  m.comment("Datapath registers: no reset (only values marked valid by the control path are used).");
  Stmts dp = {nb("data_q", "data_i"), if_("weight_en", {nb("weight1_q", "weight_i")}),
              if_("swap_i", {nb("weight2_q", "weight1_q")})};
  if (pipe) dp.push_back(nb("prod_q", "product"));
  dp.push_back(nb("sum_q", "sum_d"));
  m.always_ff(dp);
  m.blank();
  m.comment("Control registers.");
  m.always_ff_reset({nb("swap_q", "1'b0"), nb("arm_q", "1'b0")},
                    {nb("swap_q", "swap_i"), if_("weight_load_i", {nb("arm_q", "weight_arm_i & ~weight_last_i")})});
  m.blank();
  m.assign("data_o", "data_q");
  m.assign("swap_o", "swap_q");
  m.assign("weight_o", "weight1_q");
  m.assign("weight_arm_o", "arm_q");
  m.assign("psum_o", "sum_q");
  return m;
}

void emit_pe(const AccelConfig& cfg, Design& design) { design.add_module(build_pe(cfg)); }

}  // namespace capsgen::emit

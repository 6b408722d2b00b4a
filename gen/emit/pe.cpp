#include "emit/pe.hpp"

#include <optional>
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
  const Param data_width = m.parameter("DataWidth", cfg.widths.data, "signed data bits");
  const Param weight_width = m.parameter("WeightWidth", cfg.widths.weight, "signed weight bits");
  const Param psum_width =
      m.parameter("PsumWidth", cfg.widths.psum, "signed partial-sum bits (>= DataWidth + WeightWidth)");
  m.clock_and_reset();
  const Expr data_i = m.input("data_i", data_width, "data from the left neighbour", true);
  const Expr swap_i = m.input("swap_i", 1, "weight-swap token travelling with data_i");
  const Expr data_o = m.output("data_o", data_width, "data to the right neighbour", true);
  const Expr swap_o = m.output("swap_o", 1, "weight-swap token to the right neighbour");
  const Expr weight_i = m.input("weight_i", weight_width, "weight shift chain from the PE above", true);
  const Expr weight_load_i = m.input("weight_load_i", 1, "column weight-load cycle (broadcast down the column)");
  const Expr weight_last_i = m.input("weight_last_i", 1, "last cycle of a tile load (broadcast down the column)");
  const Expr weight_arm_i =
      m.input("weight_arm_i", 1, "this row shifts in the current load (from the PE above; 1 in row 0)");
  const Expr weight_o = m.output("weight_o", weight_width, "weight shift chain to the PE below", true);
  const Expr weight_arm_o = m.output("weight_arm_o", 1, "arm flag for the row below");
  const Expr psum_i = m.input("psum_i", psum_width, "partial sum from the PE above (0 in row 0)", true);
  const Expr psum_o = m.output("psum_o", psum_width, "partial sum to the PE below", true);

  const Param prod_width = m.localparam("ProdWidth", data_width + weight_width, "exact product width");
  m.blank();
  const Expr data_q = m.reg("data_q", data_width, "data register (passes data right)", true);
  const Expr swap_q = m.reg("swap_q", 1, "swap token register");
  const Expr weight1_q = m.reg("weight1_q", weight_width, "Weight1: shifts weights down the column while loading", true);
  const Expr weight2_q = m.reg("weight2_q", weight_width, "Weight2: holds the weight in use", true);
  const Expr arm_q = m.reg("arm_q", 1, "row below shifts in this load (set once this row has shifted)");
  std::optional<Expr> prod_q;
  if (pipe) prod_q = m.reg("prod_q", prod_width, "product register (pe_pipeline)", true);
  const Expr sum_q = m.reg("sum_q", psum_width, "sum register (passes the partial sum down)", true);
  const Expr weight_en = m.wire("weight_en", 1, "this row's Weight1 shifts in this cycle");
  const Expr product = m.wire("product", prod_width, "data_q * weight2_q, exact", true);
  const Expr product_ext = m.wire("product_ext", psum_width, "product sign-extended to PsumWidth", true);
  const Expr sum_d = m.wire("sum_d", psum_width, "psum_i + product; wraps (the config guarantees no overflow)", true);
  m.blank();
  m.assign(weight_en, weight_load_i & weight_arm_i);
  m.assign(product, full_product(data_q, weight2_q));
  m.assign(product_ext, sext(pipe ? *prod_q : product, psum_width));
  m.assign(sum_d, psum_i + product_ext);
  m.blank();
  m.comment("Datapath registers: no reset (only values marked valid by the control path are used).");
  Stmts dp = {nb(data_q, data_i), if_(weight_en, {nb(weight1_q, weight_i)}), if_(swap_i, {nb(weight2_q, weight1_q)})};
  if (pipe) dp.push_back(nb(*prod_q, product));
  dp.push_back(nb(sum_q, sum_d));
  m.always_ff(dp);
  m.blank();
  m.comment("Control registers.");
  m.always_ff_reset({nb(swap_q, bit(false)), nb(arm_q, bit(false))},
                    {nb(swap_q, swap_i), if_(weight_load_i, {nb(arm_q, weight_arm_i & ~weight_last_i)})});
  m.blank();
  m.assign(data_o, data_q);
  m.assign(swap_o, swap_q);
  m.assign(weight_o, weight1_q);
  m.assign(weight_arm_o, arm_q);
  m.assign(psum_o, sum_q);
  return m;
}

void emit_pe(const AccelConfig& cfg, Design& design) { design.add_module(build_pe(cfg)); }

}  // namespace capsgen::emit

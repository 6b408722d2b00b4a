#include "emit/systolic_array.hpp"

#include <fmt/format.h>

#include "emit/pe.hpp"

namespace capsgen::emit {
namespace {

std::string pe_sig(const char* what, int r, int c) { return fmt::format("pe_{}_r{}_c{}", what, r, c); }

}  // namespace

int systolic_array_latency(const AccelConfig& cfg) {
  return cfg.array.rows + cfg.array.cols + (cfg.array.pe_pipeline ? 1 : 0);
}

Module build_systolic_array(const AccelConfig& cfg) {
  const int rows = cfg.array.rows;
  const int cols = cfg.array.cols;
  const int latency = systolic_array_latency(cfg);
  const int cnt_bits = clog2(rows);

  Module m(kSystolicArrayModule,
           fmt::format(
               "Systolic array of {0} x {1} PEs (CapsAcc Fig. 11a): data enters from the left (one element per row),\n"
               "weights and partial sums from the top, dot products leave at the bottom. Input skew and output\n"
               "de-skew registers make it look like a {2}-cycle pipeline: the data vector at data_i in cycle t gives\n"
               "all {1} dot products at result_o in cycle t + {2} (result_valid_o follows data_valid_i).\n"
               "Weight tiles: weight_load_i high for {0} cycles (not necessarily consecutive) shifts a tile into the\n"
               "Weight1 chains, bottom row first (cycle k of the load presents row {0}-1-k of the tile for every\n"
               "column). weight_swap_i with a data vector makes that vector the first one computed with the loaded\n"
               "tile. A load may start in the cycle of the previous swap; the next swap may come in the cycle after\n"
               "the last load cycle: tiles of >= {0} vectors run back to back with no bubble.\n"
               "Rows and columns are fixed by the generator; the widths may be overridden.",
               rows, cols, latency));
  m.parameter("DataWidth", str(cfg.widths.data), "signed data bits")
      .parameter("WeightWidth", str(cfg.widths.weight), "signed weight bits")
      .parameter("PsumWidth", str(cfg.widths.psum), "signed partial-sum bits");
  const std::string data_w = fmt::format("{}*DataWidth", rows);
  const std::string weight_w = fmt::format("{}*WeightWidth", cols);
  const std::string result_w = fmt::format("{}*PsumWidth", cols);
  m.clock_and_reset()
      .input("data_i", data_w, "data vector, row r in bits [r*DataWidth +: DataWidth]")
      .input("data_valid_i", "1", "data_i holds a vector")
      .input("weight_swap_i", "1", "data_i is the first vector of the tile loaded last")
      .input("weight_i", weight_w, "one tile row, column c in bits [c*WeightWidth +: WeightWidth]")
      .input("weight_load_i", "1", "weight_i is the next row of the tile being loaded (bottom row first)")
      .output("result_o", result_w, "dot products, column c in bits [c*PsumWidth +: PsumWidth]")
      .output("result_valid_o", "1", fmt::format("result_o holds the products of the vector of cycle t-{}", latency));


  // ---- weight-load control: counts load cycles to mark the last one of each tile ----
  m.comment("Weight-load control: the last of every Rows load cycles ends a tile load.");
  m.wire("weight_last", "1", "this load cycle completes a tile");
  if (rows > 1) {
    const std::string cw = str(cnt_bits);
    m.reg("load_count_q", cw, "load cycles of the current tile so far");
    m.assign("weight_last", fmt::format("weight_load_i & (load_count_q == {}'d{})", cnt_bits, rows - 1));
    m.always_ff_reset({nb("load_count_q", expr_zero(cw))},
                      {if_("weight_load_i", {nb("load_count_q", fmt::format("weight_last ? {} : load_count_q + {}'d1",
                                                                             expr_zero(cw), cnt_bits))})});
  } else {
    m.assign("weight_last", "weight_load_i");
  }
  m.blank();

  // ---- column skew of the weight inputs and their load/last strobes ----
  if (cols > 1) {
    m.comment("Column skew: column c sees weight_i, load and last c cycles late (matching the data wavefront).");
    for (int c = 1; c < cols; ++c) {
      m.reg(fmt::format("load_col_c{}_q", c), "1");
      m.reg(fmt::format("last_col_c{}_q", c), "1");
    }
    Stmts rst, body;
    for (int c = 1; c < cols; ++c) {
      const std::string prev_load = c == 1 ? "weight_load_i" : fmt::format("load_col_c{}_q", c - 1);
      const std::string prev_last = c == 1 ? "weight_last" : fmt::format("last_col_c{}_q", c - 1);
      rst.push_back(nb(fmt::format("load_col_c{}_q", c), "1'b0"));
      rst.push_back(nb(fmt::format("last_col_c{}_q", c), "1'b0"));
      body.push_back(nb(fmt::format("load_col_c{}_q", c), prev_load));
      body.push_back(nb(fmt::format("last_col_c{}_q", c), prev_last));
    }
    m.always_ff_reset(rst, body);
    Stmts wbody;
    for (int c = 1; c < cols; ++c) {
      for (int s = 0; s < c; ++s) {
        const std::string name = fmt::format("wskew_c{}_s{}_q", c, s);
        m.reg(name, "WeightWidth", "", true);
        wbody.push_back(nb(name, s == 0 ? expr_slice("weight_i", c, "WeightWidth")
                                        : fmt::format("wskew_c{}_s{}_q", c, s - 1)));
      }
    }
    m.always_ff(wbody);
    m.blank();
  }

  // ---- row skew of the data and the swap token ----
  if (rows > 1) {
    m.comment("Row skew: row r sees its data element and the swap token r cycles late.");
    Stmts dbody, srst, sbody;
    for (int r = 1; r < rows; ++r) {
      for (int s = 0; s < r; ++s) {
        const std::string name = fmt::format("dskew_r{}_s{}_q", r, s);
        m.reg(name, "DataWidth", "", true);
        dbody.push_back(
            nb(name, s == 0 ? expr_slice("data_i", r, "DataWidth") : fmt::format("dskew_r{}_s{}_q", r, s - 1)));
      }
      const std::string sw = fmt::format("swap_row_r{}_q", r);
      m.reg(sw, "1");
      srst.push_back(nb(sw, "1'b0"));
      sbody.push_back(nb(sw, r == 1 ? "weight_swap_i" : fmt::format("swap_row_r{}_q", r - 1)));
    }
    m.always_ff(dbody);
    m.always_ff_reset(srst, sbody);
    m.blank();
  }

  // ---- PE grid ----
  m.comment("PE grid: pe_<signal>_r<row>_c<col> is the output <signal> of PE (row, col).");
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      if (c + 1 < cols) {
        m.wire(pe_sig("data", r, c), "DataWidth", "", true);
        m.wire(pe_sig("swap", r, c), "1");
      }
      if (r + 1 < rows) {
        m.wire(pe_sig("weight", r, c), "WeightWidth", "", true);
        m.wire(pe_sig("arm", r, c), "1");
      }
      m.wire(pe_sig("psum", r, c), "PsumWidth", "", true);
    }
  }
  m.lint_off("UNUSEDSIGNAL",
             "outputs of the last PE column (data, swap) and the last PE row (weight, arm)\n"
             "have no consumer; synthesis removes the registers behind them.");
  for (int r = 0; r < rows; ++r) {
    m.wire(pe_sig("data", r, cols - 1), "DataWidth", "", true);
    m.wire(pe_sig("swap", r, cols - 1), "1");
  }
  for (int c = 0; c < cols; ++c) {
    m.wire(pe_sig("weight", rows - 1, c), "WeightWidth", "", true);
    m.wire(pe_sig("arm", rows - 1, c), "1");
  }
  m.lint_on("UNUSEDSIGNAL");
  m.blank();
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      const std::string data_in =
          c > 0 ? pe_sig("data", r, c - 1)
                : (r == 0 ? expr_slice("data_i", 0, "DataWidth") : fmt::format("dskew_r{}_s{}_q", r, r - 1));
      const std::string swap_in =
          c > 0 ? pe_sig("swap", r, c - 1) : (r == 0 ? "weight_swap_i" : fmt::format("swap_row_r{}_q", r));
      const std::string weight_in =
          r > 0 ? pe_sig("weight", r - 1, c)
                : (c == 0 ? expr_slice("weight_i", 0, "WeightWidth") : fmt::format("wskew_c{}_s{}_q", c, c - 1));
      const std::string load = c == 0 ? "weight_load_i" : fmt::format("load_col_c{}_q", c);
      const std::string last = c == 0 ? "weight_last" : fmt::format("last_col_c{}_q", c);
      m.instance(kPeModule, fmt::format("u_pe_r{}_c{}", r, c))
          .param("DataWidth", "DataWidth")
          .param("WeightWidth", "WeightWidth")
          .param("PsumWidth", "PsumWidth")
          .connect("clk_i", "clk_i")
          .connect("rst_ni", "rst_ni")
          .connect("data_i", data_in)
          .connect("swap_i", swap_in)
          .connect("data_o", pe_sig("data", r, c))
          .connect("swap_o", pe_sig("swap", r, c))
          .connect("weight_i", weight_in)
          .connect("weight_load_i", load)
          .connect("weight_last_i", last)
          .connect("weight_arm_i", r == 0 ? "1'b1" : pe_sig("arm", r - 1, c))
          .connect("weight_o", pe_sig("weight", r, c))
          .connect("weight_arm_o", pe_sig("arm", r, c))
          .connect("psum_i", r == 0 ? expr_zero("PsumWidth") : pe_sig("psum", r - 1, c))
          .connect("psum_o", pe_sig("psum", r, c));
    }
  }
  m.blank();

  // ---- output de-skew ----
  m.comment("Output de-skew: column c waits Cols-1-c cycles so that all columns leave together.");
  Stmts obody;
  for (int c = 0; c + 1 < cols; ++c) {
    for (int s = 0; s < cols - 1 - c; ++s) {
      const std::string name = fmt::format("oskew_c{}_s{}_q", c, s);
      m.reg(name, "PsumWidth", "", true);
      obody.push_back(nb(name, s == 0 ? pe_sig("psum", rows - 1, c) : fmt::format("oskew_c{}_s{}_q", c, s - 1)));
    }
  }
  if (!obody.empty()) m.always_ff(obody);
  for (int c = 0; c < cols; ++c) {
    const std::string src =
        c + 1 < cols ? fmt::format("oskew_c{}_s{}_q", c, cols - 2 - c) : pe_sig("psum", rows - 1, c);
    m.assign(expr_slice("result_o", c, "PsumWidth"), src);
  }
  m.blank();

  // ---- valid pipeline ----
  m.comment(fmt::format("result_valid_o: data_valid_i delayed by {} cycles.", latency));
  const std::string lw = str(latency);
  m.reg("valid_pipe_q", lw, "valid_pipe_q[k]: data_valid_i of cycle t-1-k");
  m.always_ff_reset({nb("valid_pipe_q", expr_zero(lw))},
                    {nb("valid_pipe_q", fmt::format("{{valid_pipe_q[{}:0], data_valid_i}}", latency - 2))});
  m.assign("result_valid_o", fmt::format("valid_pipe_q[{}]", latency - 1));
  return m;
}

void emit_systolic_array(const AccelConfig& cfg, Design& design) { design.add_module(build_systolic_array(cfg)); }

}  // namespace capsgen::emit

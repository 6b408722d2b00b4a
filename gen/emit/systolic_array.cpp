#include "emit/systolic_array.hpp"

#include <fmt/format.h>

#include <optional>
#include <vector>

#include "emit/pe.hpp"

namespace capsgen::emit {
namespace {

// The ports and parameters of the array module.
struct ArrayPorts {
  Param data_width, weight_width, psum_width;
  Expr data_i, data_valid_i, weight_swap_i, weight_i, weight_load_i, result_o, result_valid_o;
};

// Per column c: the weight-load strobe, the tile-complete strobe and the weight row as column c
// sees them (c cycles late); per row r: the data element and the swap token as row r sees them.
struct Skewed {
  std::vector<Expr> load, last, weight;  // by column
  std::vector<Expr> data, swap;          // by row
};

// Outputs of PE (r, c), named pe_<signal>_r<r>_c<c>.
struct PeOutputs {
  std::vector<std::vector<Expr>> data, swap, weight, arm, psum;  // [row][col]
};

ArrayPorts declare_ports(Module& m, const AccelConfig& cfg, int latency) {
  const int rows = cfg.array.rows, cols = cfg.array.cols;
  const Param dw = m.parameter("DataWidth", cfg.widths.data, "signed data bits");
  const Param ww = m.parameter("WeightWidth", cfg.widths.weight, "signed weight bits");
  const Param pw = m.parameter("PsumWidth", cfg.widths.psum, "signed partial-sum bits");
  m.clock_and_reset();
  return ArrayPorts{
      dw, ww, pw, m.input("data_i", rows * dw, "data vector, row r in bits [r*DataWidth +: DataWidth]"),
      m.input("data_valid_i", 1, "data_i holds a vector"),
      m.input("weight_swap_i", 1, "data_i is the first vector of the tile loaded last"),
      m.input("weight_i", cols * ww, "one tile row, column c in bits [c*WeightWidth +: WeightWidth]"),
      m.input("weight_load_i", 1, "weight_i is the next row of the tile being loaded (bottom row first)"),
      m.output("result_o", cols * pw, "dot products, column c in bits [c*PsumWidth +: PsumWidth]"),
      m.output("result_valid_o", 1, fmt::format("result_o holds the products of the vector of cycle t-{}", latency))};
}

// Counts load cycles to mark the last one of each tile; returns the weight_last strobe.
Expr weight_load_control(Module& m, const ArrayPorts& p, int rows) {
  m.comment("Weight-load control: the last of every Rows load cycles ends a tile load.");
  const Expr weight_last = m.wire("weight_last", 1, "this load cycle completes a tile");
  if (rows > 1) {
    const Dim cw = clog2(rows);
    const Expr count = m.reg("load_count_q", cw, "load cycles of the current tile so far");
    m.assign(weight_last, p.weight_load_i & (count == lit(cw, rows - 1)));
    m.always_ff_reset({nb(count, zero(cw))},
                      {if_(p.weight_load_i, {nb(count, ternary(weight_last, zero(cw), count + lit(cw, 1)))})});
  } else {
    m.assign(weight_last, p.weight_load_i);
  }
  m.blank();
  return weight_last;
}

// Column skew of the weight inputs and their load/last strobes, row skew of the data and the swap token.
Skewed input_skew(Module& m, const ArrayPorts& p, const Expr& weight_last, int rows, int cols) {
  Skewed s{{p.weight_load_i}, {weight_last}, {p.weight_i.part(0, p.weight_width)}, {p.data_i.part(0, p.data_width)},
           {p.weight_swap_i}};
  if (cols > 1) {
    m.comment("Column skew: column c sees weight_i, load and last c cycles late (matching the data wavefront).");
    for (int c = 1; c < cols; ++c) {
      s.load.push_back(m.reg(fmt::format("load_col_c{}_q", c), 1));
      s.last.push_back(m.reg(fmt::format("last_col_c{}_q", c), 1));
    }
    Stmts rst, body;
    for (int c = 1; c < cols; ++c) {
      rst.push_back(nb(s.load[c], bit(false)));
      rst.push_back(nb(s.last[c], bit(false)));
      body.push_back(nb(s.load[c], s.load[c - 1]));
      body.push_back(nb(s.last[c], s.last[c - 1]));
    }
    m.always_ff_reset(rst, body);
    Stmts wbody;
    for (int c = 1; c < cols; ++c) {
      Expr prev = p.weight_i.part(c, p.weight_width);
      for (int k = 0; k < c; ++k) {
        const Expr stage = m.reg(fmt::format("wskew_c{}_s{}_q", c, k), p.weight_width, "", true);
        wbody.push_back(nb(stage, prev));
        prev = stage;
      }
      s.weight.push_back(prev);
    }
    m.always_ff(wbody);
    m.blank();
  }
  if (rows > 1) {
    m.comment("Row skew: row r sees its data element and the swap token r cycles late.");
    Stmts dbody, srst, sbody;
    for (int r = 1; r < rows; ++r) {
      Expr prev = p.data_i.part(r, p.data_width);
      for (int k = 0; k < r; ++k) {
        const Expr stage = m.reg(fmt::format("dskew_r{}_s{}_q", r, k), p.data_width, "", true);
        dbody.push_back(nb(stage, prev));
        prev = stage;
      }
      s.data.push_back(prev);
      s.swap.push_back(m.reg(fmt::format("swap_row_r{}_q", r), 1));
      srst.push_back(nb(s.swap[r], bit(false)));
      sbody.push_back(nb(s.swap[r], s.swap[r - 1]));
    }
    m.always_ff(dbody);
    m.always_ff_reset(srst, sbody);
    m.blank();
  }
  return s;
}

// The wires pe_<signal>_r<row>_c<col>; those without a consumer under a lint waiver.
PeOutputs declare_pe_outputs(Module& m, const ArrayPorts& p, int rows, int cols) {
  const auto grid = [&] { return std::vector<std::vector<Expr>>(rows, std::vector<Expr>()); };
  PeOutputs o{grid(), grid(), grid(), grid(), grid()};
  const auto name = [](const char* what, int r, int c) { return fmt::format("pe_{}_r{}_c{}", what, r, c); };
  // Declared in the order the text shows them: inner wires row by row, then the unused edges.
  std::vector<std::vector<std::optional<Expr>>> data(rows), swap(rows), weight(rows), arm(rows);
  for (int r = 0; r < rows; ++r) {
    data[r].resize(cols), swap[r].resize(cols), weight[r].resize(cols), arm[r].resize(cols);
    for (int c = 0; c < cols; ++c) {
      if (c + 1 < cols) {
        data[r][c] = m.wire(name("data", r, c), p.data_width, "", true);
        swap[r][c] = m.wire(name("swap", r, c), 1);
      }
      if (r + 1 < rows) {
        weight[r][c] = m.wire(name("weight", r, c), p.weight_width, "", true);
        arm[r][c] = m.wire(name("arm", r, c), 1);
      }
      o.psum[r].push_back(m.wire(name("psum", r, c), p.psum_width, "", true));
    }
  }
  m.lint_off("UNUSEDSIGNAL",
             "outputs of the last PE column (data, swap) and the last PE row (weight, arm)\n"
             "have no consumer; synthesis removes the registers behind them.");
  for (int r = 0; r < rows; ++r) {
    data[r][cols - 1] = m.wire(name("data", r, cols - 1), p.data_width, "", true);
    swap[r][cols - 1] = m.wire(name("swap", r, cols - 1), 1);
  }
  for (int c = 0; c < cols; ++c) {
    weight[rows - 1][c] = m.wire(name("weight", rows - 1, c), p.weight_width, "", true);
    arm[rows - 1][c] = m.wire(name("arm", rows - 1, c), 1);
  }
  m.lint_on("UNUSEDSIGNAL");
  m.blank();
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      o.data[r].push_back(*data[r][c]);
      o.swap[r].push_back(*swap[r][c]);
      o.weight[r].push_back(*weight[r][c]);
      o.arm[r].push_back(*arm[r][c]);
    }
  return o;
}

void pe_grid(Module& m, const AccelConfig& cfg, const ArrayPorts& p, const Skewed& s, const PeOutputs& o) {
  const int rows = cfg.array.rows, cols = cfg.array.cols;
  const Module pe = build_pe(cfg);
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      m.instance(pe, fmt::format("u_pe_r{}_c{}", r, c))
          .param(p.data_width)
          .param(p.weight_width)
          .param(p.psum_width)
          .connect("clk_i", m.clk())
          .connect("rst_ni", m.rst_n())
          .connect("data_i", c > 0 ? o.data[r][c - 1] : s.data[r])
          .connect("swap_i", c > 0 ? o.swap[r][c - 1] : s.swap[r])
          .connect("data_o", o.data[r][c])
          .connect("swap_o", o.swap[r][c])
          .connect("weight_i", r > 0 ? o.weight[r - 1][c] : s.weight[c])
          .connect("weight_load_i", s.load[c])
          .connect("weight_last_i", s.last[c])
          .connect("weight_arm_i", r == 0 ? bit(true) : o.arm[r - 1][c])
          .connect("weight_o", o.weight[r][c])
          .connect("weight_arm_o", o.arm[r][c])
          .connect("psum_i", r == 0 ? zero(p.psum_width) : o.psum[r - 1][c])
          .connect("psum_o", o.psum[r][c]);
    }
  }
  m.blank();
}

// Column c waits Cols-1-c cycles so that all columns leave together.
void output_deskew(Module& m, const ArrayPorts& p, const PeOutputs& o, int rows, int cols) {
  m.comment("Output de-skew: column c waits Cols-1-c cycles so that all columns leave together.");
  Stmts obody;
  std::vector<Expr> out;
  for (int c = 0; c < cols; ++c) {
    Expr prev = o.psum[rows - 1][c];
    for (int k = 0; k < cols - 1 - c; ++k) {
      const Expr stage = m.reg(fmt::format("oskew_c{}_s{}_q", c, k), p.psum_width, "", true);
      obody.push_back(nb(stage, prev));
      prev = stage;
    }
    out.push_back(prev);
  }
  if (!obody.empty()) m.always_ff(obody);
  for (int c = 0; c < cols; ++c) m.assign(p.result_o.part(c, p.psum_width), out[c]);
  m.blank();
}

}  // namespace

int systolic_array_latency(const AccelConfig& cfg) {
  return cfg.array.rows + cfg.array.cols + (cfg.array.pe_pipeline ? 1 : 0);
}

Module build_systolic_array(const AccelConfig& cfg) {
  const int rows = cfg.array.rows;
  const int cols = cfg.array.cols;
  const int latency = systolic_array_latency(cfg);

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
  const ArrayPorts p = declare_ports(m, cfg, latency);
  const Expr weight_last = weight_load_control(m, p, rows);
  const Skewed s = input_skew(m, p, weight_last, rows, cols);
  m.comment("PE grid: pe_<signal>_r<row>_c<col> is the output <signal> of PE (row, col).");
  const PeOutputs o = declare_pe_outputs(m, p, rows, cols);
  pe_grid(m, cfg, p, s, o);
  output_deskew(m, p, o, rows, cols);

  m.comment(fmt::format("result_valid_o: data_valid_i delayed by {} cycles.", latency));
  const Expr valid_pipe = m.reg("valid_pipe_q", latency, "valid_pipe_q[k]: data_valid_i of cycle t-1-k");
  m.always_ff_reset({nb(valid_pipe, zero(latency))},
                    {nb(valid_pipe, cat({valid_pipe.slice(latency - 2, 0), p.data_valid_i}))});
  m.assign(p.result_valid_o, valid_pipe[latency - 1]);
  return m;
}

void emit_systolic_array(const AccelConfig& cfg, Design& design) { design.add_module(build_systolic_array(cfg)); }

}  // namespace capsgen::emit

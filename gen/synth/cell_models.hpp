// Zero-delay Verilog simulation models of a Liberty library's cells, written from the cells'
// `function`, `three_state`, `ff` and `latch` descriptions, for gate-level simulation of Yosys
// netlists under Verilator and Icarus (the models some libraries ship use UDP tables, specify
// blocks and timing checks, which Verilator does not accept).
//
// And the test of those models: a self-checking Verilog testbench whose expected values are
// computed here, independently of the generated Verilog, from the Liberty semantics: every input
// combination of every combinational output, and for sequential cells a walk through every
// single-input change from every input combination (an Euler circuit of the input hypercube),
// with the state evolving by the Liberty rules (clear/preset levels, clocked_on rising edge,
// latch enable level, clear_preset_var1/2 when both are active).
#pragma once

#include <string>
#include <vector>

#include "synth/liberty.hpp"

namespace capsgen::synth {

// The Verilog models of every cell that has at least one output (FILL-type cells are skipped).
// No `timescale and no delays: behaviour only.
std::string cell_models_verilog(const Library& lib);

struct CellTestbench {
  std::string verilog;  // module cell_models_tb: prints "PASS cell models: ..." or MISMATCH lines and "FAIL ..."
  long long checks = 0;
  int cells = 0;
  std::vector<std::string> tristate_cells;  // checked only when the simulator has 4-state values (not Verilator)
};

// `top` is the testbench module name. Three-state outputs are checked inside `ifndef VERILATOR.
CellTestbench cell_models_testbench(const Library& lib, const std::string& top = "cell_models_tb");

// Cells whose behaviour the models cannot express (reported, not silently mis-modelled): e.g. more than
// one state group. Empty for OSU018.
std::vector<std::string> unsupported_cells(const Library& lib);

}  // namespace capsgen::synth

// Unit tests of gen/synth: Liberty reader, Boolean functions, constraints, FPGA harness, report
// parsers and template filling. No external tool is run here (see test_cell_models.cpp and the
// flows.* / gate.* CTest entries for that).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/input_error.hpp"
#include <fmt/format.h>

#include "synth/activity.hpp"
#include "synth/cell_models.hpp"
#include "synth/power.hpp"
#include "synth/constraints.hpp"
#include "synth/liberty.hpp"
#include "synth/parse.hpp"
#include "synth/report.hpp"
#include "synth/rtl_info.hpp"
#include "synth/templates.hpp"

namespace cs = capsgen::synth;

namespace {

const char* kMiniLib = R"t(
/* a tiny library in the OSU style */
library(mini) {
  time_unit : "1ns";
  capacitive_load_unit (1,pf);
  cell (NAND2X1) {
    area : 24;
    pin(A) { direction : input; capacitance : 0.01; }
    pin(B) { direction : input; capacitance : 0.01; }
    pin(Y) { direction : output; function : "(!(A B))"; }
  }
  cell (MUXI) {
    area : 48;
    pin(A) { direction : input; }
    pin(B) { direction : input; }
    pin(S) { direction : input; }
    pin(Y) { direction : output; function : "(!((S A) + (!S B)))"; }
  }
  cell (DFFSR) {
    area : 176;
    ff (P0002,P0003) {
      next_state : "D";
      clocked_on : "CLK";
      clear : "(!R)";
      preset : "(!S)";
      clear_preset_var1 : L;
    }
    pin(CLK) { direction : input; clock : true; }
    pin(D) { direction : input; }
    pin(R) { direction : input; }
    pin(S) { direction : input; }
    pin(Q) { direction : output; function : "P0002"; }
    values ( \
      "1, 2", \
      "3, 4");
  }
  cell (TBUF) {
    area : 40;
    pin(A) { direction : input; }
    pin(EN) { direction : input; }
    pin(Y) { direction : output; function : "(!A)"; three_state : "(!EN)"; }
  }
}
)t";

}  // namespace

TEST(Liberty, ParsesCellsPinsFunctionsAndStateGroups) {
  const cs::Library lib = cs::parse_liberty(kMiniLib, "mini.lib");
  EXPECT_EQ(lib.name, "mini");
  EXPECT_EQ(lib.time_unit, "1ns");
  EXPECT_DOUBLE_EQ(lib.time_unit_ns(), 1.0);
  EXPECT_EQ(lib.capacitive_unit, "1pf");
  ASSERT_EQ(lib.cells.size(), 4u);
  EXPECT_DOUBLE_EQ(lib.area("NAND2X1"), 24);
  EXPECT_THROW(lib.area("NOPE"), std::out_of_range);
  const cs::LibCell* ff = lib.cell("DFFSR");
  ASSERT_TRUE(ff && ff->state);
  EXPECT_EQ(ff->state->iq, "P0002");
  EXPECT_EQ(ff->state->clear_preset_var1, 'L');
  EXPECT_EQ(ff->inputs().size(), 4u);
  EXPECT_TRUE(ff->pin("CLK")->is_clock);
  EXPECT_TRUE(lib.cell("TBUF")->has_three_state());
}

TEST(Liberty, SyntaxErrorsNameFileAndLine) {
  try {
    cs::parse_liberty("library(x) {\n cell (A) {\n area : 1;\n", "broken.lib");
    FAIL() << "no error";
  } catch (const capsgen::InputError& e) {
    EXPECT_EQ(e.file(), "broken.lib");
    EXPECT_GE(e.line(), 3);
  }
}

TEST(BoolExpr, OperatorsAndPrecedence) {
  auto ev = [](const std::string& f, std::map<std::string, bool> env) { return cs::BoolExpr::parse(f).eval(env); };
  EXPECT_FALSE(ev("(!(A B))", {{"A", true}, {"B", true}}));
  EXPECT_TRUE(ev("A+B", {{"A", false}, {"B", true}}));
  EXPECT_TRUE(ev("A'", {{"A", false}}));
  EXPECT_TRUE(ev("A ^ B", {{"A", true}, {"B", false}}));
  // '+' binds loosest, '^' tighter than AND: A + B C  ==  A + (B C);  A B ^ C == A (B ^ C)
  EXPECT_TRUE(ev("A + B C", {{"A", true}, {"B", false}, {"C", false}}));
  EXPECT_FALSE(ev("A B ^ C", {{"A", false}, {"B", true}, {"C", false}}));
  EXPECT_TRUE(ev("A & B | C", {{"A", false}, {"B", false}, {"C", true}}));
  EXPECT_TRUE(ev("1", {}));
  EXPECT_THROW(cs::BoolExpr::parse("(A B"), std::invalid_argument);
  EXPECT_THROW(ev("A B", {{"A", true}}), std::out_of_range);
  const auto e = cs::BoolExpr::parse("(!((S A) + (!S B)))");
  EXPECT_EQ(e.to_verilog(), "~((S & A) | (~S & B))");
  EXPECT_EQ(e.variables(), (std::vector<std::string>{"S", "A", "B"}));
  EXPECT_EQ(cs::BoolExpr::parse("(!CLK)").as_literal()->second, true);
}

TEST(CellModels, VerilogAndTestbenchCoverEveryCell) {
  const cs::Library lib = cs::parse_liberty(kMiniLib, "mini.lib");
  EXPECT_TRUE(cs::unsupported_cells(lib).empty());
  const std::string v = cs::cell_models_verilog(lib);
  EXPECT_NE(v.find("module NAND2X1 (A, B, Y);"), std::string::npos);
  EXPECT_NE(v.find("assign Y = ~(A & B);"), std::string::npos);
  EXPECT_NE(v.find("posedge CLK or posedge both_w or posedge clear_only_w or posedge preset_only_w"), std::string::npos);
  EXPECT_NE(v.find("assign Y = ~EN ? 1'bz : ~A;"), std::string::npos);
  const auto tb = cs::cell_models_testbench(lib);
  EXPECT_EQ(tb.cells, 4);
  EXPECT_EQ(tb.tristate_cells, std::vector<std::string>{"TBUF"});
  // NAND2 4 + MUX 8 + TBUF 4 combinational checks, plus the DFFSR walk
  EXPECT_GT(tb.checks, 16);
}

TEST(Constraints, SdcFromPreset) {
  const std::vector<cs::Port> ports = {{"clk_i", "input", 1},  {"rst_ni", "input", 1}, {"data_i", "input", 32},
                                       {"valid_i", "input", 1}, {"result_o", "output", 100}};
  EXPECT_EQ(cs::clock_port(ports), "clk_i");
  EXPECT_EQ(cs::reset_port(ports), "rst_ni");
  cs::SdcOptions o;
  o.top = "capsgen_systolic_array";
  o.preset = "small-4x4";
  o.target_mhz = 250;
  o.io_delay_frac = 0.2;
  o.driving_cell = "BUFX4";
  o.output_load = 0.02;
  const std::string sdc = cs::make_sdc(o, ports);
  EXPECT_NE(sdc.find("create_clock -name clk -period 4.0000 [get_ports clk_i]"), std::string::npos);
  EXPECT_NE(sdc.find("set_false_path -from [get_ports rst_ni]"), std::string::npos);
  EXPECT_NE(sdc.find("set_input_delay -clock clk 0.8000 [get_ports {data_i valid_i}]"), std::string::npos);
  EXPECT_NE(sdc.find("set_output_delay -clock clk 0.8000 [get_ports {result_o}]"), std::string::npos);
  EXPECT_NE(sdc.find("set_driving_cell -lib_cell BUFX4"), std::string::npos);
  EXPECT_NE(sdc.find("set_load 0.02 [get_ports {result_o}]"), std::string::npos);
  o.target_mhz = 0;
  EXPECT_THROW(cs::make_sdc(o, ports), std::invalid_argument);
  // no clock port: virtual clock
  o.target_mhz = 100;
  const std::string comb = cs::make_sdc(o, {{"a", "input", 4}, {"y", "output", 4}});
  EXPECT_NE(comb.find("create_clock -name clk -period 10.0000\n"), std::string::npos);
}

TEST(Constraints, HarnessConnectsEveryBit) {
  const std::vector<cs::Port> ports = {
      {"clk_i", "input", 1}, {"rst_ni", "input", 1}, {"a_i", "input", 3}, {"b_i", "input", 1}, {"y_o", "output", 5}};
  const std::string h = cs::make_fpga_harness("dut", ports);
  EXPECT_NE(h.find("reg [3:0] in_q;"), std::string::npos);
  EXPECT_NE(h.find(".a_i(in_q[2:0])"), std::string::npos);
  EXPECT_NE(h.find(".b_i(in_q[3:3])"), std::string::npos);
  EXPECT_NE(h.find(".y_o(dut_out[4:0])"), std::string::npos);
  EXPECT_NE(h.find(".clk_i(clk_i)"), std::string::npos);
  EXPECT_NE(h.find("out_q <= cap_i ? dut_out : {1'b0, out_q[4:1]};"), std::string::npos);
  for (const auto& d : cs::ice40_devices()) EXPECT_NE(cs::make_pcf(d).find("set_io -nowarn clk_i"), std::string::npos);
}

TEST(Parse, YosysStatJsonWithHierarchyLines) {
  // Yosys 0.23 `stat -json -top` prints the hierarchy into the JSON.
  const std::string text = R"t({
   "creator": "Yosys 0.23",
   "modules": {
      "$paramod$abc\\capsgen_pe": { "num_cells": 3, "num_cells_by_type": { "NAND2X1": 2, "DFFPOSX1": 1 } },
      "\\top": { "num_cells": 2, "num_cells_by_type": { "$paramod$abc\\capsgen_pe": 2 } }
   },
       top                      1
         $paramod$abc\capsgen_pe 2
      "design": { "num_cells": 6, "num_cells_by_type": { "NAND2X1": 4, "DFFPOSX1": 2 } }
}
)t";
  const cs::YosysStat st = cs::parse_yosys_stat_json(text);
  ASSERT_EQ(st.modules.size(), 2u);
  EXPECT_EQ(st.modules.at("top").at("$paramod$abc\\capsgen_pe"), 2);
  EXPECT_TRUE(st.has_design);
  EXPECT_EQ(st.design.at("NAND2X1"), 4);
  const auto area = cs::parse_yosys_chip_area("   Chip area for module '\\top': 123.5\n   Chip area for top module '\\top': 1000\n");
  EXPECT_DOUBLE_EQ(area.modules.at("top"), 123.5);
  EXPECT_DOUBLE_EQ(*area.top, 1000);
}

TEST(Parse, MemoriesDump) {
  const std::string dump = R"t(
  attribute \src "x.v:1"
  cell $mem_v2 \u_acc_c0.mem
    parameter \INIT 3200'x
    parameter \WR_PORTS 1
    parameter \RD_CLK_ENABLE 1'0
    parameter \RD_PORTS 1
    parameter \ABITS 7
    parameter \SIZE 128
    parameter \WIDTH 25
    parameter \MEMID "\\u_acc_c0.mem"
    connect \WR_DATA x
  end
  cell $mem_v2 $auto$rom
    parameter \WR_PORTS 0
    parameter \RD_CLK_ENABLE 1'1
    parameter \RD_PORTS 1
    parameter \SIZE 4096
    parameter \WIDTH 8
  end
)t";
  const auto m = cs::parse_yosys_memories(dump);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].name, "u_acc_c0.mem");
  EXPECT_EQ(m[0].bits(), 3200);
  EXPECT_FALSE(m[0].sync_read);
  EXPECT_EQ(m[1].write_ports, 0);
  EXPECT_TRUE(m[1].sync_read);
  EXPECT_EQ(m[1].bits(), 32768);
}

TEST(Parse, StaReportSections) {
  const std::string log = R"t(CAPSGEN-SECTION registers 2
CAPSGEN-SECTION reg2reg
Startpoint: _19_ (rising edge-triggered flip-flop clocked by clk)
Endpoint: _23_ (rising edge-triggered flip-flop clocked by clk)
Path Group: clk
Path Type: max

    Delay      Time   Description
-------------------------------------------------------------
   0.0000    0.0000   clock clk (rise edge)
   0.0000    0.0000   clock network delay (ideal)
   0.0000    0.0000 ^ _19_/CLK (DFFPOSX1)
   0.1839    0.1839 v _19_/Q (DFFPOSX1)
   0.1584    0.3423 v _11_/Y (XOR2X1)
   0.0000    0.3423 v _23_/D (DFFPOSX1)
             0.3423   data arrival time

   4.0000    4.0000   clock clk (rise edge)
   0.0000    4.0000   clock network delay (ideal)
   0.0000    4.0000   clock reconvergence pessimism
             4.0000 ^ _23_/CLK (DFFPOSX1)
  -0.1835    3.8165   library setup time
             3.8165   data required time
-------------------------------------------------------------
             3.8165   data required time
            -0.3423   data arrival time
-------------------------------------------------------------
             3.4742   slack (MET)

CAPSGEN-SECTION worst
No paths found.
CAPSGEN-SECTION summary
wns 0.0000
tns 0.0000
CAPSGEN-SECTION end
)t";
  const cs::StaReport r = cs::parse_sta_log(log);
  EXPECT_EQ(r.registers, 2);
  const cs::StaPath& p = r.sections.at("reg2reg");
  ASSERT_TRUE(p.found);
  EXPECT_EQ(p.startpoint, "_19_");
  EXPECT_EQ(p.endpoint, "_23_");
  EXPECT_DOUBLE_EQ(p.arrival, 0.3423);
  EXPECT_DOUBLE_EQ(p.setup, 0.1835);
  EXPECT_DOUBLE_EQ(p.required, 3.8165);
  EXPECT_DOUBLE_EQ(p.slack, 3.4742);
  EXPECT_DOUBLE_EQ(p.period, 4.0);
  EXPECT_EQ(p.points.size(), 4u);
  EXPECT_FALSE(r.sections.at("worst").found);
  EXPECT_DOUBLE_EQ(*r.wns, 0.0);
}

TEST(Parse, NetlistCellsAndConcatAssigns) {
  const std::string v = R"t(module top(clk_i, q_o);
  input clk_i;
  output [3:0] q_o;
  wire [24:0] \u_pe.sum_q ;
  wire [2:0] w;
  wire s;
  DFFPOSX1 _19_ (
    .CLK(clk_i),
    .D(w[1]),
    .Q(\u_pe.sum_q [3])
  );
  assign { \u_pe.sum_q [24], \u_pe.sum_q [22:21] } = { \u_pe.sum_q [23], 2'b0x };
  assign { q_o[3], w, s } = { 5'b00000 };
  assign q_o[2:0] = w;
endmodule
)t";
  const auto cells = cs::parse_netlist_cells(v, "top");
  ASSERT_EQ(cells.count("_19_"), 1u);
  EXPECT_EQ(cells.at("_19_").type, "DFFPOSX1");
  EXPECT_EQ(cells.at("_19_").pins.at("Q"), "u_pe.sum_q[3]");
  const std::string out = cs::split_concat_assigns(v);
  EXPECT_EQ(out.find("assign {"), std::string::npos);
  EXPECT_NE(out.find("assign \\u_pe.sum_q [24] = \\u_pe.sum_q [23];"), std::string::npos);
  EXPECT_NE(out.find("assign \\u_pe.sum_q [22] = 1'b0;"), std::string::npos);
  EXPECT_NE(out.find("assign \\u_pe.sum_q [21] = 1'bx;"), std::string::npos);
  EXPECT_NE(out.find("assign w[0] = 1'b0;"), std::string::npos);
  EXPECT_NE(out.find("assign s = 1'b0;"), std::string::npos);
  EXPECT_NE(out.find("assign q_o[2:0] = w;"), std::string::npos);  // untouched
}

TEST(Parse, NextpnrReport) {
  const auto r = cs::parse_nextpnr_report(
      R"t({"fmax": {"clk": {"achieved": 121.9, "constraint": 100}},
          "utilization": {"ICESTORM_LC": {"available": 5280, "used": 168}, "ICESTORM_DSP": {"available": 8, "used": 2}}})t");
  EXPECT_DOUBLE_EQ(r.fmax.at("clk").first, 121.9);
  EXPECT_EQ(r.utilization.at("ICESTORM_LC").first, 168);
  EXPECT_EQ(r.utilization.at("ICESTORM_DSP").second, 8);
}

TEST(RtlInfo, ModulesInstancesAndRoots) {
  cs::RtlInfo info;
  cs::scan_verilog(R"t(
// module fake (in a comment)
module leaf #(parameter integer W = 8) (input wire a, output wire y);
  assign y = a;
endmodule
module mid (input wire a, output wire y);
  leaf #(.W(4)) u_l0 (.a(a), .y(y));
  leaf u_l1 (.a(a), .y());
endmodule
module top (input wire a, output wire y);
  mid u_m (.a(a), .y(y));
endmodule
module other (input wire a);
endmodule
)t",
                   info);
  EXPECT_EQ(info.modules, (std::vector<std::string>{"leaf", "mid", "top", "other"}));
  EXPECT_EQ(info.instances["mid"]["leaf"], 2);
  EXPECT_EQ(info.roots(), (std::vector<std::string>{"top", "other"}));
  EXPECT_EQ(info.submodules("top"), (std::vector<std::string>{"leaf", "mid"}));
  const auto ports = cs::parse_portlist("module x\ninput [0:0] clk_i\ninput [31:0] data_i\noutput [99:0] r\n");
  ASSERT_EQ(ports.size(), 3u);
  EXPECT_EQ(ports[1].width, 32);
  EXPECT_EQ(ports[2].direction, "output");
}

TEST(Templates, EveryTemplateFillsAndMissingFieldsFail) {
  EXPECT_GE(cs::flow_templates().size(), 6u);
  EXPECT_THROW(cs::flow_template("nope.ys"), std::out_of_range);
  EXPECT_EQ(cs::fill_template("a {{X}} b {{Y}}", {{"X", "1"}, {"Y", "2"}}, "t"), "a 1 b 2");
  EXPECT_THROW(cs::fill_template("a {{X}}", {}, "t"), std::invalid_argument);
  EXPECT_THROW(cs::fill_template("a {{X", {{"X", "1"}}, "t"), std::invalid_argument);
  // Each template's fields, as the flows fill them.
  const std::map<std::string, std::vector<std::string>> fields = {
      {"yosys/asic_osu018.ys",
       {"VIEW", "RAM_NOTE", "ROM_NOTE", "READ_VERILOG", "TOP", "FLATTEN", "MEMORY_MAP", "OUT", "LIBERTY", "PERIOD_PS",
        "ABC_CONSTR"}},
      {"yosys/abc_osu018.constr", {"DRIVING_CELL", "OUTPUT_LOAD"}},
      {"yosys/ice40.ys", {"READ_VERILOG", "HARNESS", "TOP", "DSP", "OUT"}},
      {"yosys/xilinx.ys", {"READ_VERILOG", "TOP", "FAMILY", "OUT"}},
      {"yosys/check.ys", {"READ_VERILOG", "TOP", "OUT"}},
      {"sta/sta.tcl", {"LIBERTY", "NETLIST", "TOP", "SDC"}},
  };
  for (const auto& [name, keys] : fields) {
    std::map<std::string, std::string> vars;
    for (const auto& k : keys) vars[k] = "x";
    EXPECT_NO_THROW(cs::fill_template(cs::flow_template(name), vars, name)) << name;
  }
}

TEST(Report, MarkdownIsAViewOfTheJson) {
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(R"t({
    "tool": "capsgen synth", "target": "xilinx-estimate", "preset": "p", "config": "c.yaml",
    "array": {"rows": 2, "cols": 2, "pe_pipeline": false}, "widths": {"data": 8, "weight": 8, "psum": 20},
    "clock_target_mhz": 100, "rtl_dir": "r", "tools": {"yosys": "Yosys 0.23"}, "seconds": 1.5, "family": "xc7",
    "tops": [{"top": "t", "lut": 1234, "ff": 56, "carry4": 7, "dsp": 4, "bram36_equivalent": 0.5, "lutram_cells": 0, "srl": 0}]
  })t");
  const std::string md = cs::synth_report_markdown(j);
  EXPECT_NE(md.find("| `t` | 1,234 | 56 | 7 | 4 | 0.5 | 0 | 0 |"), std::string::npos) << md;
  EXPECT_NE(cs::synth_report_summary(j).find("1234 LUT"), std::string::npos);
}

namespace {

const char* kPowerLib = R"t(
library(pw) {
  time_unit : "1ns";
  leakage_power_unit : "1nW";
  capacitive_load_unit (1,pf);
  nom_voltage : 2.0;
  power_lut_template(e2) {
    variable_1 : total_output_net_capacitance;
    variable_2 : input_transition_time;
    index_1 ("0.01, 0.1");
    index_2 ("0.1, 1.0");
  }
  power_lut_template(p1) { variable_1 : input_transition_time; index_1 ("0.1, 1.0"); }
  cell (NAND2X1) {
    area : 24;
    cell_leakage_power : 3;
    pin(A) { direction : input; capacitance : 0.01; }
    pin(B) { direction : input; capacitance : 0.02; }
    pin(Y) {
      direction : output; function : "(!(A B))";
      internal_power() {
        related_pin : "A";
        rise_power(e2) { values ("1.0, 2.0", "3.0, 4.0"); }
        fall_power(e2) { values ("0.5, 0.5", "0.5, 0.5"); }
      }
    }
  }
  cell (XOR2X1) {
    area : 56;
    cell_leakage_power : 5;
    pin(A) { direction : input; capacitance : 0.03; rise_capacitance : 0.035; fall_capacitance : 0.025; }
    pin(B) { direction : input; capacitance : 0.03; }
    pin(Y) { direction : output; function : "(A^B)"; }
  }
  cell (DFFPOSX1) {
    area : 96;
    cell_leakage_power : 7;
    ff (DS0000,P0002) { next_state : "D"; clocked_on : "CLK"; }
    pin(CLK) {
      direction : input; capacitance : 0.05; clock : true;
      internal_power() { rise_power(p1) { values ("0.1, 0.2"); } fall_power(p1) { values ("0.3, 0.4"); } }
    }
    pin(D) { direction : input; capacitance : 0.01; }
    pin(Q) { direction : output; function : "DS0000"; }
  }
}
)t";

// A register, a NAND and an XOR; the register's output keeps its RTL name through an assign, and a
// constant and output ports (one a concatenation of two nets) are on nets. _2_ is undriven (the read
// data of a removed RAM cell), so the NAND _8_ it feeds has no clock in OpenSTA.
const char* kPowerNetlist = R"t(
module blk(clk_i, a_i, b_i, y_o, z_o, u_o);
  wire _0_;
  wire _1_;
  input clk_i;
  wire clk_i;
  input [1:0] a_i;
  wire [1:0] a_i;
  input b_i;
  wire b_i;
  output y_o;
  wire y_o;
  output [1:0] z_o;
  wire [1:0] z_o;
  output u_o;
  wire u_o;
  wire _2_;
  wire [1:0] \u_x.r_q ;
  DFFPOSX1 _5_ (
    .CLK(clk_i),
    .D(a_i[0]),
    .Q(_0_)
  );
  NAND2X1 _6_ (
    .A(\u_x.r_q [1]),
    .B(a_i[1]),
    .Y(_1_)
  );
  XOR2X1 _7_ (
    .A(_1_),
    .B(1'b1),
    .Y(y_o)
  );
  assign \u_x.r_q [1] = _0_;
  assign \u_x.r_q [0] = 1'h0;
  NAND2X1 _8_ (
    .A(_2_),
    .B(_2_),
    .Y(u_o)
  );
  assign z_o = { _1_ , \u_x.r_q [1] };
endmodule
)t";

}  // namespace

TEST(Activity, FromVerilatorCoverage) {
  // verilator_coverage's format: C '<\1key\2value...>' count
  auto point = [](const std::string& page, const std::string& hier, const std::string& o, long long n) {
    return fmt::format("C '\1f\2x.v\1l\0021\1page\2{}\1o\2{}\1h\2{}' {}\n", page, o, hier, n);
  };
  std::string text = "# SystemC::Coverage-3\n";
  text += point("v_toggle/capsgen_pe", "TOP.capsgen_chip.u_engine.u_pe", "sum_q[3]", 17);
  text += point("v_toggle/capsgen_chip", "TOP.capsgen_chip", "start_i", 2);
  text += point("v_line/capsgen_pe", "TOP.capsgen_chip.u_engine.u_pe", "block", 99);
  text += point("v_toggle/other", "TOP.other", "x", 5);
  const cs::ActivityDoc doc = cs::activity_from_coverage(text, "cov.dat", "capsgen_chip");
  ASSERT_EQ(doc.toggles.size(), 2u);
  EXPECT_EQ(doc.toggles.at("u_engine.u_pe.sum_q[3]"), 17);
  EXPECT_EQ(doc.toggles.at("start_i"), 2);
  EXPECT_EQ(&cs::find_instance(doc, "capsgen_pe", "f"), &doc.instances[1]);
  EXPECT_EQ(cs::toggles_below(doc, "u_engine.u_pe").at("sum_q[3]"), 17);
  EXPECT_THROW(cs::find_instance(doc, "capsgen_acc", "f"), capsgen::InputError);
  EXPECT_THROW(cs::activity_from_coverage(point("v_line/x", "TOP.capsgen_chip", "b", 1), "cov.dat", "capsgen_chip"),
               capsgen::InputError);
}

TEST(Power, MeasuredPropagatedAndHandPower) {
  const cs::Library lib = cs::parse_liberty(kPowerLib, "pw.lib");
  // 100 cycles: the register's RTL name toggled 50 times, a_i[1] 20 times; b_i and a_i[0] are not known.
  const std::map<std::string, long long> toggles = {{"u_x.r_q[1]", 50}, {"a_i[1]", 20}, {"_2_", 10}};
  const cs::BlockActivity act = cs::map_activity(kPowerNetlist, "blk", lib, toggles, 100);
  std::map<std::string, cs::Activity> pin;
  for (const cs::PinActivity& p : act.pins) pin[p.instance + "/" + p.pin] = p.act;
  EXPECT_EQ(pin.count("_5_/CLK"), 0u);  // clock pins are OpenSTA's
  EXPECT_DOUBLE_EQ(pin.at("_5_/Q").density, 0.5);
  EXPECT_DOUBLE_EQ(pin.at("_6_/B").density, 0.2);
  EXPECT_DOUBLE_EQ(pin.at("_5_/D").density, cs::kDefaultActivity);  // a_i[0]: not in the document
  // NAND: AND a1 p2 + a2 p1 = 0.5 x 0.5 + 0.2 x 0.5, duty 0.25, then NOT
  EXPECT_DOUBLE_EQ(pin.at("_6_/Y").density, 0.35);
  EXPECT_DOUBLE_EQ(pin.at("_6_/Y").duty, 0.75);
  // XOR with constant 1 (OpenSTA's rule): a1 p1 (1 - 1) + 0 = 0, duty 0.25
  EXPECT_DOUBLE_EQ(pin.at("_7_/Y").density, 0.0);
  EXPECT_DOUBLE_EQ(pin.at("_7_/Y").duty, 0.25);
  EXPECT_EQ(act.nets.measured, 3);
  EXPECT_EQ(act.nets.propagated, 3);
  EXPECT_EQ(act.nets.defaulted, 1);
  EXPECT_EQ(act.nets.constant, 1);
  ASSERT_EQ(act.ports.size(), 1u);
  EXPECT_EQ(act.ports[0].first, "a_i[1]");
  // The flip-flop's state pin gets Q's activity (OpenSTA evaluates Q's function "DS0000" when its search
  // crosses an asynchronous clear arc).
  ASSERT_EQ(act.state_pins.size(), 1u);
  EXPECT_EQ(act.state_pins[0].instance + "/" + act.state_pins[0].pin, "_5_/DS0000");
  EXPECT_DOUBLE_EQ(act.state_pins[0].act.density, 0.5);
  // Switching: Q drives NAND.A (0.01 pF) and z_o[0] (0.02 pF) at 0.5 per 10 ns; NAND.Y drives XOR.A
  // (rising 0.035 pF, falling 0.025) and z_o[1] at 0.35, a load of max(0.055, 0.045); XOR.Y the output
  // port y_o at 0; P = 0.5 C V^2 x density, V = 2.
  const std::map<std::string, std::pair<double, double>> slews = {{"_6_/A", {0.55, 0.1}}, {"_5_/CLK", {0.0, 2.0}}};
  const cs::HandPower h = cs::hand_power(kPowerNetlist, "blk", lib, act, 10.0, 0.02, slews);
  EXPECT_NEAR(h.switching, 0.5 * 4.0 * (0.03e-12 * 0.5e8 + 0.055e-12 * 0.35e8), 1e-15);
  // _8_: NAND of _2_ (0.1, duty 0.5) with itself, independent by the rules: 0.1, into u_o (0.02 pF).
  EXPECT_NEAR(h.unclocked_switching, 0.5 * 4.0 * 0.02e-12 * 0.1e8, 1e-15);
  EXPECT_NEAR(h.leakage, (3 + 5 + 7 + 3) * 1e-9, 1e-18);
  // Internal (pJ): NAND _6_ Y from A at 0.055 pF and 0.55 ns, the middle of the rise table (2.5) + fall 0.5,
  // x the inferred duty P(B) x A's / Y's transitions (0.5 x 0.5 / 0.35), x Y's 0.35 per 10 ns; the
  // flip-flop's clock pin: rise extrapolated at 0 ns (0.1 - 0.1 / 9) + fall at 2 ns (0.3 + 0.19 / 0.9),
  // duty 1 (a clock pin), 2 transitions per 10 ns.
  EXPECT_NEAR(h.internal, 3.0e-12 * 0.5 * 0.5 * 1e8 + (0.1 - 0.1 / 9 + 0.3 + 0.19 / 0.9) * 1e-12 * 2.0 * 1e8, 1e-12);
  // The unclocked NAND _8_ (no slew known: 0 ns; 0.02 pF): rise 1 + 2/9 - 1/9, fall 0.5, duty 0.5,
  // 0.1 per 10 ns.
  EXPECT_NEAR(h.unclocked_internal, (1.0 + 1.0 / 9 + 0.5) * 1e-12 * 0.5 * 0.1 * 1e8, 1e-12);
  EXPECT_DOUBLE_EQ(cs::hand_power(kPowerNetlist, "blk", lib, act, 10.0, 0.02).internal, 0.0);  // no slews
  const std::string tcl = cs::power_tcl("pw.lib", "blk.v", "blk", "blk.sdc", act);
  EXPECT_NE(tcl.find("sta::set_power_pin_activity [get_pins {_6_/Y}] 0.35 0.75"), std::string::npos);
  EXPECT_NE(tcl.find("sta::set_power_input_port_activity [get_ports {a_i[1]}] 0.2 0.5"), std::string::npos);
  EXPECT_NE(tcl.find("sta::set_power_pin_activity [get_pins {_5_/DS0000}] 0.5 0.5"), std::string::npos);
  EXPECT_LT(tcl.find("report_power > /dev/null"), tcl.find("set_power_pin_activity"));
}

TEST(Power, ParsesTheReportBetweenMarkers) {
  const std::string log = std::string("report before\nTotal 9 9 9 27 100%\n") + cs::kPowerBegin +
                          "\nGroup Internal Switching Leakage Total\n----\nSequential 1e-3 2e-4 1e-9 1.2e-3 40%\n"
                          "Combinational 2e-3 3e-4 2e-9 2.3e-3 60%\nTotal 3e-3 5e-4 3e-9 3.5e-3 100.0%\n 85.7% 14.3% 0.0%\n" +
                          cs::kPowerEnd + "\n" + cs::kPowerSlew + " _6_/A 1.5e-01 2e-01\n";
  const cs::PowerReport r = cs::parse_power_log(log);
  ASSERT_EQ(r.slews.size(), 1u);
  EXPECT_DOUBLE_EQ(r.slews.at("_6_/A").second, 0.2);
  EXPECT_DOUBLE_EQ(r.total.internal, 3e-3);
  EXPECT_DOUBLE_EQ(r.total.switching, 5e-4);
  EXPECT_DOUBLE_EQ(r.sequential.leakage, 1e-9);
  EXPECT_TRUE(r.errors.empty());
  EXPECT_THROW(cs::parse_power_log("no markers"), std::runtime_error);
}

TEST(Liberty, Osu018WhenInstalled) {
  const char* path = "/usr/share/qflow/tech/osu018/osu018_stdcells.lib";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "qflow-tech-osu018 not installed";
  const cs::Library lib = cs::load_liberty(path);
  EXPECT_EQ(lib.name, "osu018_stdcells");
  EXPECT_DOUBLE_EQ(lib.area("NAND2X1"), 24);
  EXPECT_DOUBLE_EQ(lib.area("DFFPOSX1"), 96);
  EXPECT_TRUE(cs::unsupported_cells(lib).empty());
  int sequential = 0;
  for (const auto& c : lib.cells) sequential += c.state ? 1 : 0;
  EXPECT_EQ(sequential, 4);  // DFFNEGX1, DFFPOSX1, DFFSR, LATCH
}

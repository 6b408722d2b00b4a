// Emitter tests of the compute engine (gen/emit/engine.cpp): registered last (it instantiates every
// datapath block), one instance of each unit, port widths from the preset, the vector pipeline as
// long as the staging read plus the array latency, the tile reader's column masks, lowRISC naming,
// synthesizable-only and deterministic text, on the presets and on odd shapes (1x1, 3x5, pipelined
// PEs, a depth that is not a power of two). The tiny preset's files are golden files compared by
// test_emit (EmitGolden.Tiny2x2); the behaviour is tested in Verilator by tb/engine_tb.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "config/accel_config.hpp"
#include "emit/design.hpp"
#include "emit/engine.hpp"
#include "emit/generate.hpp"
#include "emit/systolic_array.hpp"
#include "emit/vast.hpp"
#include "emit_fixtures.hpp"

using namespace capsgen;
using namespace capsgen::emit;
using capsgen::emit::test::count;
using capsgen::emit::test::preset;

namespace {

std::vector<AccelConfig> shapes() { return test::engine_shapes(); }
}  // namespace

TEST(EmitEngine, RegisteredAfterEveryUnitItUses) {
  const Design d = build_design(preset("tiny-2x2"));
  const auto v = d.verilog_files();
  const auto pos = [&v](const std::string& n) { return std::find(v.begin(), v.end(), n) - v.begin(); };
  ASSERT_LT(pos("capsgen_engine.v"), static_cast<long>(v.size()));
  for (const char* dep : {"capsgen_gather.v", "capsgen_staging.v", "capsgen_systolic_array.v", "capsgen_accumulator_bank.v",
                          "capsgen_activation_bank.v", "capsgen_tile_reader.v", "capsgen_out_writer.v",
                          "capsgen_act_pass.v"})
    EXPECT_LT(pos(dep), pos("capsgen_engine.v")) << dep;
  EXPECT_LT(pos("capsgen_engine.v"), pos("capsgen_accel.v"));  // the top level (sequencer + engine) follows
}

TEST(EmitEngine, OneOfEachUnitAndPortWidthsFromThePreset) {
  const AccelConfig big = preset("capsacc-16x16");
  const std::string text = print_module(build_engine(big));
  for (const char* inst : {"capsgen_gather u_gather", "capsgen_staging u_staging", "capsgen_tile_reader u_tiles",
                           "capsgen_systolic_array #(", "capsgen_accumulator_bank #(", "capsgen_activation_bank u_act",
                           "capsgen_out_writer u_writer", "capsgen_act_pass u_act_pass"})
    EXPECT_EQ(count(text, inst), 1) << inst;
  for (const char* p : {"input  wire [127:0] wrd_data_i", "input  wire [399:0] brd_data_i", "input  wire [127:0] drd_data_i",
                        "output wire drd_vec_o", "output wire [127:0] wr_data_o", "output wire [15:0] wr_mask_o",
                        "output wire wr_vec_o", "output wire [31:0] wr_addr_o",
                        "output wire error_o"})
    EXPECT_NE(text.find(p), std::string::npos) << p;
  // The vector pipeline: staging read (1) + array latency (rows + cols) stages.
  const int S = systolic_array_latency(big) + 1;
  EXPECT_NE(text.find("reg [" + std::to_string(S - 1) + ":0] pv_q"), std::string::npos);
  EXPECT_NE(text.find(".in_valid_i(pv_q[" + std::to_string(S - 1) + "])"), std::string::npos);
  // Output FIFO depth and the credits that guard it.
  EXPECT_NE(text.find("fifo_mem [0:" + std::to_string(isa::engine_out_fifo_depth(systolic_array_latency(big)) - 1) + "]"),
            std::string::npos);
  // 16x16: array latency 32, so 64 entries (the credit loop must not limit the writer).
  EXPECT_EQ(isa::engine_out_fifo_depth(systolic_array_latency(big)), 64);
  EXPECT_NE(text.find("credits_d = 7'd64"), std::string::npos);
}

TEST(EmitEngine, TileReaderMasksColumnsAndPlacesDiagRows) {
  const AccelConfig cfg = preset("small-4x4");
  const std::string text = print_module(build_tile_reader(cfg));
  for (int c = 0; c < cfg.array.cols; ++c) {
    const std::string lane = "(out_read_q & (out_diag_q ? (out_group_q == 16'd" + std::to_string(c) + ") : (16'd" +
                             std::to_string(c) + " < out_lanes_q)))";
    EXPECT_NE(text.find(lane), std::string::npos) << lane;
  }
  // Bottom row first; the first read goes out with tile_start_i.
  EXPECT_NE(text.find("assign cur_row = loading_q ? row_q : 2'd3;"), std::string::npos);
  EXPECT_NE(text.find("busy_q & ~loading_q & (~held_q | tile_start_i)"), std::string::npos);
}

TEST(EmitEngine, NamingSynthesizableAndDeterministic) {
  for (const AccelConfig& cfg : shapes()) {
    SCOPED_TRACE(cfg.name);
    for (const Module& m : {build_tile_reader(cfg), build_out_writer(cfg), build_act_pass(cfg), build_engine(cfg)}) {
      for (const Port& port : m.ports()) {
        const bool in = port.dir == PortDir::kInput;
        EXPECT_TRUE(port.name == "rst_ni" || port.name.substr(port.name.size() - 2) == (in ? "_i" : "_o")) << port.name;
      }
      const std::string text = print_module(m);
      for (const char* bad : {"initial", "$display", "$finish", "$random", "#1", "always_ff", "logic "})
        EXPECT_EQ(text.find(bad), std::string::npos) << bad;
    }
    EXPECT_EQ(print_module(build_engine(cfg)), print_module(build_engine(cfg)));
  }
}

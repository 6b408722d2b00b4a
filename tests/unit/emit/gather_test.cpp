// Emitter tests of the gather address generator (gen/emit/gather.cpp): one capsgen_gather per config,
// registered after the DMA (files.f order), port list and widths (elem_row_o follows the preset's
// rows), lowRISC naming, synthesizable-only and deterministic text, the coordinate width shared with
// isa::encode_gather. The tiny preset's capsgen_gather.v is a golden file compared by test_emit
// (EmitGolden.Tiny2x2; regenerate with CAPSGEN_UPDATE_GOLDEN=1 ./test_emit). The behaviour is tested
// in Verilator by tb/gather_tb.cpp against gen/isa/gather.hpp (scripts/run_block_tests.sh).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "config/accel_config.hpp"
#include "emit/design.hpp"
#include "emit/gather.hpp"
#include "emit/generate.hpp"
#include "emit/vast.hpp"
#include "isa/gather.hpp"
#include "emit_fixtures.hpp"

using namespace capsgen;
using namespace capsgen::emit;
using capsgen::emit::test::find;
using capsgen::emit::test::preset;

TEST(EmitGather, OneModuleRegisteredAfterTheDma) {
  const Design d = build_design(preset("tiny-2x2"));
  const auto v = d.verilog_files();
  const auto pos = [&v](const std::string& n) { return std::find(v.begin(), v.end(), n) - v.begin(); };
  ASSERT_LT(pos("capsgen_gather.v"), static_cast<long>(v.size()));
  EXPECT_LT(pos("capsgen_dma.v"), pos("capsgen_gather.v"));
  EXPECT_EQ(std::count(v.begin(), v.end(), "capsgen_gather.v"), 1);
  Design one(preset("small-4x4"));
  emit_gather(one.config(), one);
  EXPECT_EQ(one.verilog_files(), std::vector<std::string>{"capsgen_gather.v"});
}

TEST(EmitGather, PortsAndWidths) {
  const std::string text = print_module(build_gather(preset("small-4x4")));
  EXPECT_NE(text.find("module capsgen_gather"), std::string::npos);
  for (const char* p :
       {"input  wire clk_i", "input  wire rst_ni", "input  wire desc_valid_i", "output wire desc_ready_o",
        "input  wire desc_conv_i", "input  wire [15:0] desc_batch_i", "input  wire [15:0] desc_m_total_i",
        "input  wire [15:0] desc_m_block_i", "input  wire [15:0] desc_k_chunks_i", "input  wire [15:0] desc_r_total_i",
        "input  wire [31:0] desc_base_i", "input  wire [31:0] desc_s_b_i", "input  wire [31:0] desc_s_m_i",
        "input  wire [31:0] desc_s_k_i", "input  wire [31:0] desc_s_r_i", "input  wire [15:0] desc_groups_i",
        "input  wire [15:0] desc_group_rows_i", "input  wire [31:0] desc_s_g_i", "input  wire [15:0] desc_height_i",
        "input  wire [15:0] desc_width_i", "input  wire [15:0] desc_kernel_h_i", "input  wire [15:0] desc_kernel_w_i",
        "input  wire [15:0] desc_stride_i", "input  wire [15:0] desc_padding_i", "input  wire [15:0] desc_out_w_i",
        "input  wire [31:0] desc_pad_off_i", "input  wire [31:0] desc_ky_step_i", "input  wire [31:0] desc_c_step_i",
        "input  wire [31:0] desc_y_step_i", "output wire elem_valid_o", "input  wire elem_ready_i",
        "output wire [31:0] elem_addr_o", "output wire elem_zero_o", "output wire [1:0] elem_row_o",
        "output wire [15:0] elem_vec_o", "output wire [15:0] elem_chunk_o", "output wire elem_vec_last_o",
        "output wire elem_chunk_last_o", "output wire elem_last_o", "output wire busy_o", "output wire done_o"})
    EXPECT_NE(text.find(p), std::string::npos) << p;
  // elem_row_o: clog2(rows) bits, at least 1.
  EXPECT_NE(print_module(build_gather(preset("capsacc-16x16"))).find("output wire [3:0] elem_row_o"), std::string::npos);
  AccelConfig r1 = preset("tiny-2x2");
  r1.array.rows = 1;
  EXPECT_NE(print_module(build_gather(r1)).find("output wire elem_row_o"), std::string::npos);
  r1.array.rows = 5;
  EXPECT_NE(print_module(build_gather(r1)).find("output wire [2:0] elem_row_o"), std::string::npos);
  const Module tiny = build_gather(preset("tiny-2x2"));
  for (const Port& p : tiny.ports()) {
    const bool in = p.dir == PortDir::kInput;
    EXPECT_TRUE(p.name == "rst_ni" || p.name.substr(p.name.size() - 2) == (in ? "_i" : "_o")) << p.name;
  }
  EXPECT_EQ(kGatherCoordWidth, isa::kGatherCoordBits);
}

TEST(EmitGather, SynthesizableOnlyAndDeterministic) {
  for (const char* p : {"tiny-2x2", "small-4x4", "capsacc-16x16"}) {
    const AccelConfig cfg = preset(p);
    const std::string text = print_module(build_gather(cfg));
    SCOPED_TRACE(p);
    for (const char* bad : {"initial", "$display", "$finish", "$random", "#1", "always_ff", "logic "})
      EXPECT_EQ(text.find(bad), std::string::npos) << bad;
    // No multiplier, divider or modulo outside the comments (and the `always @*` headers): counters
    // and adders only.
    std::string code;
    for (std::size_t i = 0; i < text.size();) {
      const std::size_t e = std::min(text.find('\n', i), text.size());
      const std::string line = text.substr(i, e - i);
      const std::size_t c = line.find("//");
      if (line.find("always @*") == std::string::npos) code += line.substr(0, c) + "\n";
      i = e + 1;
    }
    for (const char* op : {"*", "/", "%"}) EXPECT_EQ(code.find(op), std::string::npos) << op;
    EXPECT_EQ(text, print_module(build_gather(cfg)));
    // The rows are baked in: the last row index appears as a literal.
    EXPECT_NE(text.find("row_q == " + std::to_string(gather_row_bits(cfg)) + "'d" + std::to_string(cfg.array.rows - 1)),
              std::string::npos);
  }
}

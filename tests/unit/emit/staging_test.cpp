// Emitter tests of the staging buffer (gen/emit/staging.cpp): registered after the gather unit
// (files.f order), one capsgen_staging_ram instance per array row with 2 x accumulator.depth words,
// port widths from the preset, range checks only where rows/depth are not powers of two, lowRISC
// naming, synthesizable-only and deterministic text. The tiny preset's files are golden files
// compared by test_emit (EmitGolden.Tiny2x2). The behaviour is tested in Verilator by
// tb/staging_tb.cpp (scripts/run_block_tests.sh).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "config/accel_config.hpp"
#include "emit/design.hpp"
#include "emit/generate.hpp"
#include "emit/staging.hpp"
#include "emit/vast.hpp"
#include "emit_fixtures.hpp"

using namespace capsgen;
using namespace capsgen::emit;
using capsgen::emit::test::count;
using capsgen::emit::test::preset;


TEST(EmitStaging, RegisteredAfterTheGatherRamFirst) {
  const Design d = build_design(preset("tiny-2x2"));
  const auto v = d.verilog_files();
  const auto pos = [&v](const std::string& n) { return std::find(v.begin(), v.end(), n) - v.begin(); };
  ASSERT_LT(pos("capsgen_staging.v"), static_cast<long>(v.size()));
  EXPECT_LT(pos("capsgen_gather.v"), pos("capsgen_staging_ram.v"));
  EXPECT_LT(pos("capsgen_staging_ram.v"), pos("capsgen_staging.v"));
  Design one(preset("small-4x4"));
  emit_staging(one.config(), one);
  EXPECT_EQ(one.verilog_files(), (std::vector<std::string>{"capsgen_staging_ram.v", "capsgen_staging.v"}));
}

TEST(EmitStaging, OneRamPerRowSizedByTheAccumulatorDepth) {
  const AccelConfig big = preset("capsacc-16x16");
  const std::string text = print_module(build_staging(big));
  EXPECT_EQ(count(text, "capsgen_staging_ram #("), big.array.rows);
  const std::string depth = ".Depth(" + std::to_string(2 * big.accumulator.depth) + ")";
  EXPECT_EQ(count(text, depth), big.array.rows);
  for (const char* p : {"input  wire [3:0] wr_row_i", "input  wire [7:0] wr_data_i", "output wire [127:0] rd_data_o",
                        "output wire wr_free_o", "output wire rd_avail_o", "output wire error_o"})
    EXPECT_NE(text.find(p), std::string::npos) << p;
  EXPECT_NE(text.find("rd_data_o[127:120]"), std::string::npos);
  // Vector index: clog2(depth) bits.
  EXPECT_NE(text.find("input  wire [" + std::to_string(staging_vec_bits(big) - 1) + ":0] wr_vec_i"), std::string::npos);
  // Powers of two: no range checks.
  EXPECT_EQ(text.find("wr_row_i >="), std::string::npos);
  EXPECT_EQ(text.find("wr_vec_i >="), std::string::npos);

  AccelConfig odd = preset("tiny-2x2");
  odd.array.rows = 3;
  odd.accumulator.depth = 100;
  const std::string t3 = print_module(build_staging(odd));
  EXPECT_EQ(count(t3, "capsgen_staging_ram #("), 3);
  EXPECT_NE(t3.find(".Depth(200)"), std::string::npos);
  EXPECT_NE(t3.find(".AddrWidth(8)"), std::string::npos);
  EXPECT_NE(t3.find("input  wire [6:0] wr_vec_i"), std::string::npos);
  EXPECT_NE(t3.find("wr_row_i >= 2'd3"), std::string::npos);
  EXPECT_NE(t3.find("wr_vec_i >= 7'd100"), std::string::npos);
  EXPECT_NE(t3.find("7'd100"), std::string::npos);

  AccelConfig one = preset("tiny-2x2");
  one.array.rows = 1;
  one.accumulator.depth = 1;
  const std::string t1 = print_module(build_staging(one));
  EXPECT_NE(t1.find("input  wire wr_row_i"), std::string::npos);
  EXPECT_NE(t1.find(".Depth(2)"), std::string::npos);
}

TEST(EmitStaging, NamingSynthesizableAndDeterministic) {
  for (const char* p : {"tiny-2x2", "small-4x4", "capsacc-16x16"}) {
    SCOPED_TRACE(p);
    const AccelConfig cfg = preset(p);
    for (const Module& m : {build_staging_ram(), build_staging(cfg)}) {
      for (const Port& port : m.ports()) {
        const bool in = port.dir == PortDir::kInput;
        EXPECT_TRUE(port.name == "rst_ni" || port.name.substr(port.name.size() - 2) == (in ? "_i" : "_o")) << port.name;
      }
      const std::string text = print_module(m);
      for (const char* bad : {"initial", "$display", "$finish", "$random", "#1", "always_ff", "logic "})
        EXPECT_EQ(text.find(bad), std::string::npos) << bad;
    }
    EXPECT_EQ(print_module(build_staging(cfg)), print_module(build_staging(cfg)));
  }
}

// Emitter tests of the DMA engine (gen/emit/dma.cpp): geometry derived from the scratchpad and the
// off-chip config, registration (capsgen_dma.v after the scratchpad in files.f, dma.json), the port
// list (lowRISC names, widths), synthesizable-only text, and a golden file for the tiny preset
// (tests/data/golden_rtl/tiny-2x2/capsgen_dma.v, compared by test_emit's EmitGolden.Tiny2x2;
// regenerate with CAPSGEN_UPDATE_GOLDEN=1 ./test_emit). The behaviour is tested in Verilator by
// tb/dma_tb.cpp (scripts/run_block_tests.sh).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <sstream>
#include <string>

#include "config/accel_config.hpp"
#include "emit/design.hpp"
#include "emit/dma.hpp"
#include "emit/generate.hpp"
#include "emit/random_config.hpp"
#include "emit/vast.hpp"
#include "emit_fixtures.hpp"

using namespace capsgen;
using namespace capsgen::emit;
using capsgen::emit::test::find;
using capsgen::emit::test::preset;

TEST(EmitDma, GeometryFollowsTheScratchpad) {
  // tiny-2x2: data/weight 16-bit words, acc 32-bit: the beat is the widest word; the SPM address is
  // memsys's element space: 2048 data + 4096 weight bytes + 256 acc lanes = 6400 elements.
  const DmaGeometry t = dma_geometry(preset("tiny-2x2"));
  EXPECT_EQ(t.data_bits, 32);
  EXPECT_EQ(t.word_bytes, 4);
  EXPECT_EQ(t.spm_addr_bits, 13);
  EXPECT_EQ(t.max_burst, 8);
  EXPECT_EQ(t.len_bits, 4);
  // small-4x4: all 32-bit; 4096 + 8192 bytes + 512 acc lanes = 12800 elements; max_burst 16 needs
  // 5 length bits.
  const DmaGeometry s = dma_geometry(preset("small-4x4"));
  EXPECT_EQ(s.data_bits, 32);
  EXPECT_EQ(s.spm_addr_bits, 14);
  // Other organizations: the element space of their memories (hy: data, weight, acc, shared).
  AccelConfig hy = preset("tiny-2x2");
  hy.scratchpad.organization = SpmOrganization::Hy;
  hy.scratchpad.shared = {true, 4, 2, 2, 32};
  validate_accel_config(hy);
  EXPECT_EQ(dma_geometry(hy).spm_addr_bits, 14);  // 6400 + 4096 shared bytes
  EXPECT_EQ(s.len_bits, 5);
  AccelConfig c = preset("small-4x4");
  c.offchip.max_burst = 256;
  EXPECT_EQ(dma_geometry(c).len_bits, 9);
  c.offchip.max_burst = 1;
  EXPECT_EQ(dma_geometry(c).len_bits, 1);
  // Bursts in flight: at least 8, enough for 2 x latency of max_burst beats, at most 64.
  EXPECT_EQ(t.outstanding, 8);
  EXPECT_EQ(s.outstanding, 8);  // 2*20/16 + 1 = 4 -> 8
  c.offchip.latency_cycles = 20;
  EXPECT_EQ(dma_geometry(c).outstanding, 64);  // 41 -> 64
  c.offchip.max_burst = 4;
  EXPECT_EQ(dma_geometry(c).outstanding, 16);  // 10 + 1 = 11 -> 16
  c.offchip.latency_cycles = 200;
  EXPECT_EQ(dma_geometry(c).outstanding, 64);  // capped
}

TEST(EmitDma, RegisteredAfterTheScratchpad) {
  const Design d = build_design(preset("tiny-2x2"));
  const auto v = d.verilog_files();
  const auto pos = [&v](const std::string& n) { return std::find(v.begin(), v.end(), n) - v.begin(); };
  ASSERT_LT(pos("capsgen_dma.v"), static_cast<long>(v.size()));
  EXPECT_LT(pos("capsgen_spm_data.v"), pos("capsgen_dma.v"));
  const OutputFile* summary = find(d, kDmaSummaryName);
  ASSERT_NE(summary, nullptr);
  const nlohmann::json j = nlohmann::json::parse(summary->contents);
  EXPECT_EQ(j.at("schema"), "capsgen.dma/1");
  EXPECT_EQ(j.at("data_bits"), 32);
  EXPECT_EQ(j.at("max_burst"), 8);
  EXPECT_EQ(j.at("latency_cycles"), 8);
  EXPECT_EQ(j.at("clock_mhz"), 100.0);
}

TEST(EmitDma, PortsAndWidths) {
  const std::string text = print_module(build_dma(preset("small-4x4")));
  EXPECT_NE(text.find("module capsgen_dma"), std::string::npos);
  for (const char* p : {"input  wire clk_i", "input  wire rst_ni", "input  wire desc_valid_i", "output wire desc_ready_o",
                        "input  wire [31:0] desc_dram_addr_i", "input  wire [13:0] desc_spm_addr_i",
                        "input  wire [15:0] desc_count2_i", "input  wire [31:0] desc_dram_stride2_i",
                        "input  wire [13:0] desc_spm_stride1_i", "input  wire [4:0] desc_burst_i",
                        "output wire [4:0] req_len_o", "input  wire [31:0] rd_data_i", "output wire [31:0] wr_data_o",
                        "output wire wr_last_o", "output wire [13:0] spm_addr_o", "input  wire spm_gnt_i",
                        "output wire [31:0] beats_read_o", "output wire done_o", "output wire busy_o",
                        "input  wire [1:0] desc_size_i", "input  wire desc_widen_i", "output wire [1:0] req_size_o",
                        "output wire [3:0] wr_strb_o", "output wire [1:0] spm_size_o"})
    EXPECT_NE(text.find(p), std::string::npos) << p;
  // Every port follows the naming rules: clk_i, rst_ni, then *_i / *_o.
  const Module m = build_dma(preset("small-4x4"));
  for (const Port& p : m.ports()) {
    const bool in = p.dir == PortDir::kInput;
    const std::string suffix = p.name.substr(p.name.size() - 2);
    EXPECT_TRUE(p.name == "rst_ni" || suffix == (in ? "_i" : "_o")) << p.name;
  }
  // Wide scratchpad words (256-bit banks) widen the data channels.
  AccelConfig wide = preset("small-4x4");
  wide.scratchpad.weight.width_bits = 256;
  const std::string w = print_module(build_dma(wide));
  EXPECT_NE(w.find("input  wire [255:0] rd_data_i"), std::string::npos);
  EXPECT_NE(w.find("{27'd0, rq_len} << beat_size_q"), std::string::npos);  // burst bytes = len * 2^size
  EXPECT_NE(w.find("input  wire [2:0] desc_size_i"), std::string::npos);  // sizes 0..5
  EXPECT_NE(w.find("output wire [31:0] wr_strb_o"), std::string::npos);
}

// max_burst = 2^k - 1 fills the length field: no (constant, lint-failing) "> max_burst" comparison.
TEST(EmitDma, BurstLimitComparisonOnlyWhenReachable) {
  AccelConfig c = preset("tiny-2x2");
  c.offchip.max_burst = 7;
  EXPECT_NE(print_module(build_dma(c)).find("assign desc_limit = (desc_burst_i == 3'd0) ? 3'd7 : desc_burst_i;"),
            std::string::npos);
  c.offchip.max_burst = 1;
  EXPECT_NE(print_module(build_dma(c)).find("assign desc_limit = (desc_burst_i == 1'd0) ? 1'd1 : desc_burst_i;"),
            std::string::npos);
  c.offchip.max_burst = 8;
  EXPECT_NE(print_module(build_dma(c)).find("(desc_burst_i > 4'd8)"), std::string::npos);
}

TEST(EmitDma, SynthesizableOnlyAcrossConfigs) {
  std::vector<AccelConfig> cfgs = {preset("tiny-2x2"), preset("small-4x4"), preset("capsacc-16x16")};
  for (std::uint64_t seed : {1, 2, 3, 4, 5, 6}) cfgs.push_back(parse_accel_config(random_accel_config_yaml(seed), "random"));
  for (const AccelConfig& cfg : cfgs) {
    const Design d = build_design(cfg);
    const OutputFile* f = find(d, "capsgen_dma.v");
    ASSERT_NE(f, nullptr) << cfg.name;
    // What synthesis reads: everything but the assertion block, which closes the module.
    const std::size_t block = f->contents.find("\n`ifdef CAPSGEN_ASSERTIONS\n");
    ASSERT_NE(block, std::string::npos) << cfg.name;
    EXPECT_EQ(f->contents.substr(f->contents.find("\n`endif\n", block)), "\n`endif\nendmodule\n") << cfg.name;
    const std::string synth = f->contents.substr(0, block);
    EXPECT_EQ(synth.find('$'), std::string::npos) << cfg.name << ": system task in synthesizable RTL";
    EXPECT_EQ(synth.find("initial"), std::string::npos) << cfg.name;
    EXPECT_EQ(synth.find("`"), std::string::npos) << cfg.name;  // no `define / `include
    const DmaGeometry g = dma_geometry(cfg);
    EXPECT_GE(g.data_bits, 8);
    EXPECT_LE(g.data_bits, 256);
    EXPECT_GE(g.len_bits, 1);
    EXPECT_LT(cfg.offchip.max_burst, 1 << g.len_bits);
  }
}

// Element sizes: the size field holds 0..log2(word bytes); strobes are the low 2^size bytes.
TEST(EmitDma, SizeFieldAndStrobes) {
  const DmaGeometry t = dma_geometry(preset("tiny-2x2"));  // 4-byte words
  EXPECT_EQ(t.max_size, 2);
  EXPECT_EQ(t.size_bits, 2);
  EXPECT_EQ(t.widen_bytes, 4);
  const DmaGeometry c = dma_geometry(preset("capsacc-16x16"));  // 8-byte words
  EXPECT_EQ(c.max_size, 3);
  EXPECT_EQ(c.size_bits, 2);
  AccelConfig wide = preset("small-4x4");
  wide.scratchpad.weight.width_bits = 256;
  EXPECT_EQ(dma_geometry(wide).max_size, 5);
  EXPECT_EQ(dma_geometry(wide).size_bits, 3);
  AccelConfig w16 = preset("tiny-2x2");
  for (auto* m : {&w16.scratchpad.data, &w16.scratchpad.weight, &w16.scratchpad.acc}) m->width_bits = 16;
  EXPECT_EQ(dma_geometry(w16).size_bits, 1);
  EXPECT_EQ(dma_geometry(w16).widen_bytes, 2);
  EXPECT_EQ(dma_strobe(0, 4), 0x1u);
  EXPECT_EQ(dma_strobe(1, 4), 0x3u);
  EXPECT_EQ(dma_strobe(2, 4), 0xFu);
  EXPECT_EQ(dma_strobe(3, 4), 0xFu);  // above max_size: a whole word
  EXPECT_EQ(dma_strobe(3, 8), 0xFFu);
  EXPECT_EQ(dma_strobe(5, 32), 0xFFFFFFFFu);
  // RTL: byte k is kept iff size >= floor(log2 k) + 1; sizes above max_size are clamped only when
  // the field can hold them (tiny: 2 bits, max 2; capsacc: 2 bits, max 3: no clamp).
  const std::string tv = print_module(build_dma(preset("tiny-2x2")));
  EXPECT_NE(tv.find("assign desc_size = (desc_size_i > 2'd2) ? 2'd2 : desc_size_i;"), std::string::npos);
  EXPECT_NE(tv.find("assign desc_strb = {{2{desc_size >= 2'd2}}, {1{desc_size >= 2'd1}}, 1'b1};"), std::string::npos);
  EXPECT_NE(tv.find("assign rd_sign = {{24{widen_q & rd_data_i[7]}}, 8'd0};"), std::string::npos);
  EXPECT_NE(tv.find("widen_d = desc_widen_i & ~desc_store_i & (desc_size == 2'd0);"), std::string::npos);
  // The SPM access's size: a widened load writes a 4-byte lane.
  EXPECT_NE(tv.find("assign spm_size_o = widen_q ? 2'd2 : beat_size_q;"), std::string::npos);
  EXPECT_EQ(t.widen_size, 2);
  EXPECT_EQ(dma_geometry(w16).widen_size, 1);
  EXPECT_NE(print_module(build_dma(w16)).find("assign spm_size_o = widen_q ? 1'd1 : beat_size_q;"), std::string::npos);
  const std::string cv = print_module(build_dma(preset("capsacc-16x16")));
  EXPECT_NE(cv.find("assign desc_size = desc_size_i;"), std::string::npos);
  EXPECT_NE(cv.find("assign rd_sign = {32'd0, {24{widen_q & rd_data_i[7]}}, 8'd0};"), std::string::npos);
  // 1-byte words: no size or widening, the inputs are waived as unused.
  AccelConfig w8 = preset("tiny-2x2");
  for (auto* m : {&w8.scratchpad.data, &w8.scratchpad.weight, &w8.scratchpad.acc}) m->width_bits = 8;
  const std::string bv = print_module(build_dma(w8));
  EXPECT_NE(bv.find("assign unused_desc = {desc_size_i, desc_widen_i};"), std::string::npos);
  EXPECT_NE(bv.find("assign wr_strb_o = 1'b1;"), std::string::npos);
  EXPECT_NE(bv.find("assign spm_size_o = 1'b0;"), std::string::npos);
  EXPECT_EQ(bv.find("widen_q"), std::string::npos);
}

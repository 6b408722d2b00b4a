// Emitter tests of the frame sequencer and the chip's top level (gen/emit/chip.cpp): registered last
// (after the blocks it instantiates), only where capsgen_memsys exists (chip.json says why otherwise),
// every DMA descriptor input and every PMU command input driven from exactly its field of the frame
// layouts (isa::dma_frame_layout, isa::pmu_frame_layout), the header fields sliced per
// isa::frame_header_layout, one PMU per memory only with power gating, deterministic text. The
// behaviour is tested in Verilator by tb/chip_tb.cpp (capsgen sim --memory dram, tests/rtl).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>
#include <string>
#include <tuple>

#include "config/accel_config.hpp"
#include "emit/chip.hpp"
#include "emit/design.hpp"
#include "emit/generate.hpp"
#include "emit/memsys.hpp"
#include "emit/sequencer.hpp"
#include "emit/trace_groups.hpp"
#include "emit/vast.hpp"
#include "emit_fixtures.hpp"
#include "isa/frames.hpp"

using namespace capsgen;
using namespace capsgen::emit;
using capsgen::emit::test::count;
using capsgen::emit::test::preset;

namespace {

std::string slice(const std::string& words, const isa::PackedField& f, int bits) {
  const int lo = f.word * 32 + f.lsb;
  return bits == 1 ? words + "[" + std::to_string(lo) + "]"
                   : words + "[" + std::to_string(lo + bits - 1) + ":" + std::to_string(lo) + "]";
}

}  // namespace

TEST(EmitChip, RegisteredLastWithItsBlocksBefore) {
  const Design d = build_design(preset("tiny-2x2"));
  const auto v = d.verilog_files();
  const auto pos = [&v](const std::string& n) { return std::find(v.begin(), v.end(), n) - v.begin(); };
  for (const char* m : {"capsgen_engine.v", "capsgen_memsys.v", "capsgen_dma.v", "capsgen_pmu_data.v", "capsgen_frame_seq.v"})
    EXPECT_LT(pos(m), pos("capsgen_chip.v")) << m;
  EXPECT_EQ(v.back(), "capsgen_chip.v");
}

TEST(EmitChip, DmaAndPmuInputsFromTheirFrameFields) {
  for (const char* p : {"tiny-2x2", "small-4x4", "capsacc-16x16"}) {
    SCOPED_TRACE(p);
    const AccelConfig cfg = preset(p);
    const isa::FrameGeometry g = isa::frame_geometry(cfg);
    const std::string text = print_module(build_chip(cfg));
    for (const isa::PackedField& f : isa::dma_frame_layout(g))
      EXPECT_EQ(count(text, "." + std::string("desc_") + f.name + "_i(" + slice("seq_words", f, f.bits) + ")"), 1) << f.name;
    ASSERT_TRUE(g.power_gating());
    const auto pl = isa::pmu_frame_layout(g);
    const char* const names[3] = {"data", "weight", "acc"};
    for (int m = 0; m < 3; ++m) {
      const auto f = std::find_if(pl.begin(), pl.end(), [&](const isa::PackedField& x) { return x.name == std::string("awake_") + names[m]; });
      ASSERT_NE(f, pl.end());
      EXPECT_EQ(count(text, "u_pmu_" + std::string(names[m]) + " ("), 1);
      EXPECT_EQ(count(text, ".cmd_awake_i(" + slice("seq_words", *f, g.sectors[m]) + ")"), 1) << names[m];
    }
    EXPECT_EQ(count(text, ".cmd_wait_i(" + slice("seq_words", pl.front(), 1) + ")"), 3);
    // Deterministic.
    EXPECT_EQ(text, print_module(build_chip(cfg)));
  }
}

TEST(EmitChip, HeaderFieldsFromTheHeaderLayout) {
  const std::string text = print_module(build_frame_sequencer(preset("tiny-2x2")));
  for (const isa::PackedField& f : isa::frame_header_layout()) {
    EXPECT_EQ(count(text, "assign frame_" + f.name + " = " + slice("header_q", f, f.bits) + ";"), 1) << f.name;
  }
  // Payload words of each kind, from the frame tables.
  const isa::FrameGeometry g = isa::frame_geometry(preset("tiny-2x2"));
  EXPECT_EQ(count(text, std::to_string(isa::payload_words(isa::FrameKind::kEngine, g)) + " (engine)"), 1);
  EXPECT_EQ(count(text, "6'd" + std::to_string(isa::payload_words(isa::FrameKind::kDma, g))), 1);
}

// Bias codes of 16 bits or fewer sit in 1 or 2 bytes of DRAM; the chip's DMA moves 4-byte bias codes:
// no chip then, with the reason (and not a failure later in the compiler's frames).
TEST(EmitChip, NarrowPsumCodesHaveNoChip) {
  AccelConfig cfg = preset("tiny-2x2");
  EXPECT_EQ(chip_unsupported_reason(cfg), "");
  cfg.widths.psum = 16;
  EXPECT_NE(chip_unsupported_reason(cfg).find("widths.psum: 16-bit bias codes are stored in 2 bytes"), std::string::npos)
      << chip_unsupported_reason(cfg);
  cfg.widths.psum = 17;
  EXPECT_EQ(chip_unsupported_reason(cfg), "");
}

TEST(EmitChip, NoPmuWithoutPowerGating) {
  AccelConfig cfg = preset("small-4x4");
  cfg.scratchpad.power_gating = false;
  ASSERT_TRUE(memsys_unsupported_reason(cfg).empty());
  const std::string chip = print_module(build_chip(cfg)), seq = print_module(build_frame_sequencer(cfg));
  EXPECT_EQ(count(chip, "capsgen_pmu_"), 0);
  EXPECT_EQ(count(chip, "sleep_req"), 0);
  EXPECT_EQ(count(seq, "pmu_valid_o"), 0);
  // A PMU frame is refused (no payload table): the sequencer stops with error_o.
  EXPECT_EQ(count(seq, "assign pmu_frame = frame_held & (frame_kind == KindPmu);"), 1);
  EXPECT_EQ(count(seq, "assign frame_refused = (engine_frame & frame_pending) | pmu_frame;"), 1);
}

TEST(EmitChip, OnlyWhereTheMemorySystemExists) {
  AccelConfig cfg = preset("tiny-2x2");
  cfg.scratchpad.organization = SpmOrganization::Smp;
  const std::string why = memsys_unsupported_reason(cfg);
  ASSERT_FALSE(why.empty());
  Design d(cfg);
  emit_chip(cfg, d);
  EXPECT_FALSE(d.has_module(kChipModule));
  EXPECT_FALSE(d.has_module(kFrameSequencerModule));
  const auto f = std::find_if(d.files().begin(), d.files().end(), [](const OutputFile& o) { return o.name == kChipSummaryName; });
  ASSERT_NE(f, d.files().end());
  const nlohmann::json j = nlohmann::json::parse(f->contents);
  EXPECT_EQ(j, nlohmann::json({{"schema", "capsgen.chip/1"}, {"supported", false}, {"reason", why}}));
}

// trace_groups.json (emit/trace_groups.hpp): the groups hold only signals the design has, and every
// listed signal exists in at least one preset, so a renamed signal fails here, not in a waveform.
TEST(EmitTraceGroups, EveryListedSignalExistsInSomePreset) {
  std::set<std::string> found_accel, found_chip;
  for (const char* name : {"tiny-2x2", "tiny-2x2-hy", "tiny-2x2-hy-lanes", "tiny-2x2-smp", "small-4x4", "capsacc-16x16"}) {
    SCOPED_TRACE(name);
    const Design d = build_design(preset(name));
    for (const auto& [top, all, found] : {std::tuple{kAccelModule, &accel_trace_groups(), &found_accel},
                                          std::tuple{kChipModule, &chip_trace_groups(), &found_chip}}) {
      for (const auto& [group, signals] : present_trace_groups(d, top, *all))
        for (const std::string& s : signals) {
          EXPECT_TRUE(d.has_signal(top, s)) << s;
          found->insert(s);
        }
    }
    const auto json = std::find_if(d.files().begin(), d.files().end(),
                                   [](const OutputFile& f) { return f.name == kTraceGroupsName; });
    ASSERT_NE(json, d.files().end());
    EXPECT_NE(json->contents.find(std::string("\"") + kAccelModule + "\": ["), std::string::npos);
    EXPECT_NE(json->contents.find("\"group\": \"Engine controller\", \"signals\": [\"u_engine.desc_valid_i\""),
              std::string::npos)
        << json->contents;
  }
  for (const auto& [all, found] : {std::pair{&accel_trace_groups(), &found_accel}, std::pair{&chip_trace_groups(), &found_chip}})
    for (const auto& [group, signals] : *all)
      for (const std::string& s : signals) EXPECT_TRUE(found->count(s)) << group << ": " << s << " is in no preset's design";
}

TEST(EmitTraceGroups, HasSignalFollowsInstances) {
  const Design d = build_design(preset("tiny-2x2"));
  EXPECT_TRUE(d.has_signal(kChipModule, "clk_i"));
  EXPECT_TRUE(d.has_signal(kChipModule, "u_engine.streaming_q"));
  EXPECT_FALSE(d.has_signal(kChipModule, "u_engine.no_such_q"));
  EXPECT_FALSE(d.has_signal(kChipModule, "u_nowhere.streaming_q"));
  EXPECT_FALSE(d.has_signal("capsgen_none", "clk_i"));
}

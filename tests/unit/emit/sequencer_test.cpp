// Emitter tests of the program sequencer and the accelerator's top level (gen/emit/sequencer.cpp):
// registered after the engine, every engine descriptor input driven from exactly its packed field
// (word and bit range of isa::engine_descriptor_layout, cut to the port's width), the sequencer's
// word count and end-marker check from the same table, lowRISC naming, synthesizable-only and
// deterministic text, on the presets and odd shapes. The behaviour is tested in Verilator by
// tb/accel_tb.cpp (capsgen sim, tests/rtl).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "config/accel_config.hpp"
#include "emit/design.hpp"
#include "emit/engine.hpp"
#include "emit/generate.hpp"
#include "emit/sequencer.hpp"
#include "emit/vast.hpp"
#include "emit_fixtures.hpp"
#include "isa/engine_descriptor.hpp"

using namespace capsgen;
using namespace capsgen::emit;
using capsgen::emit::test::count;
using capsgen::emit::test::preset;

namespace {

std::vector<AccelConfig> shapes() { return test::engine_shapes(); }

}  // namespace

TEST(EmitSequencer, TopLevelRegisteredLast) {
  const Design d = build_design(preset("tiny-2x2"));
  const auto v = d.verilog_files();
  const auto pos = [&v](const std::string& n) { return std::find(v.begin(), v.end(), n) - v.begin(); };
  EXPECT_LT(pos("capsgen_engine.v"), pos("capsgen_sequencer.v"));
  EXPECT_LT(pos("capsgen_sequencer.v"), pos("capsgen_accel.v"));
  EXPECT_EQ(v.back(), "capsgen_chip.v");  // the chip (gen/emit/chip.cpp) comes after the accelerator
}

TEST(EmitSequencer, EngineFieldsSlicedFromThePackedDescriptor) {
  for (const AccelConfig& cfg : shapes()) {
    SCOPED_TRACE(cfg.name);
    const int NW = isa::engine_descriptor_words();
    const std::string accel = print_module(build_accel(cfg));
    const std::string engine = print_module(build_engine(cfg));
    // The top level passes the packed words whole; the engine has no other descriptor input.
    EXPECT_NE(accel.find("wire [" + std::to_string(NW * 32 - 1) + ":0] seq_words"), std::string::npos);
    EXPECT_EQ(count(accel, ".desc_words_i(seq_words)"), 1);
    EXPECT_NE(engine.find("input  wire [" + std::to_string(NW * 32 - 1) + ":0] desc_words_i,"), std::string::npos);
    int desc_inputs = 0;
    for (const Port& p : build_engine(cfg).ports())
      if (p.dir == PortDir::kInput && p.name.rfind("desc_", 0) == 0) ++desc_inputs;
    EXPECT_EQ(desc_inputs, 2);  // desc_valid_i, desc_words_i
    // Every field of the layout is one wire, assigned its bits of the words; kind is word 0's [1:0].
    for (const isa::PackedField& f : isa::engine_descriptor_layout()) {
      const std::string signal = isa::engine_descriptor_signal(f);
      const std::size_t at = engine.find("  assign " + signal + " = desc_words_i[");
      ASSERT_NE(at, std::string::npos) << signal;
      const std::string line = engine.substr(at, engine.find('\n', at) - at);
      const int lo = f.word * 32 + f.lsb;
      EXPECT_TRUE(line.find("[" + std::to_string(lo) + "];") != std::string::npos ||
                  line.find(":" + std::to_string(lo) + "];") != std::string::npos)
          << line << " (field at bit " << lo << ")";
    }
    EXPECT_NE(engine.find("assign desc_kind = desc_words_i[1:0];"), std::string::npos);
    EXPECT_EQ(count(accel, "capsgen_sequencer u_seq"), 1);
    EXPECT_EQ(count(accel, "capsgen_engine u_engine"), 1);
  }
}

TEST(EmitSequencer, SequencerFetchesTheLayoutsWordCountAndStopsAtTheEndMarker) {
  const AccelConfig cfg = preset("small-4x4");
  const std::string text = print_module(build_sequencer(cfg));
  const int NW = isa::engine_descriptor_words();
  EXPECT_NE(text.find("reg [31:0] words_q [0:" + std::to_string(NW - 1) + "]"), std::string::npos);
  EXPECT_NE(text.find("output wire [" + std::to_string(NW * 32 - 1) + ":0] desc_words_o"), std::string::npos);
  EXPECT_NE(text.find("desc_addr_d = desc_addr_q + 32'd" + std::to_string(NW) + ";"), std::string::npos);
  EXPECT_NE(text.find("assign is_end = words_q[0][1:0] == 2'd3;"), std::string::npos);
  for (int w = 0; w < NW; ++w)
    EXPECT_NE(text.find("assign desc_words_o[" + std::to_string(w * 32 + 31) + ":" + std::to_string(w * 32) + "] = words_q[" +
                        std::to_string(w) + "];"),
              std::string::npos)
        << w;
}

TEST(EmitSequencer, NamingSynthesizableAndDeterministic) {
  for (const AccelConfig& cfg : shapes()) {
    SCOPED_TRACE(cfg.name);
    for (const Module& m : {build_sequencer(cfg), build_accel(cfg)}) {
      for (const Port& port : m.ports()) {
        const bool in = port.dir == PortDir::kInput;
        EXPECT_TRUE(port.name == "rst_ni" || port.name.substr(port.name.size() - 2) == (in ? "_i" : "_o")) << port.name;
      }
      const std::string text = print_module(m);
      for (const char* bad : {"initial", "$display", "$finish", "$random", "#1", "always_ff", "logic "})
        EXPECT_EQ(text.find(bad), std::string::npos) << bad;
      EXPECT_NE(text.find(cfg.name), std::string::npos);  // the header names the config
    }
    EXPECT_EQ(print_module(build_accel(cfg)), print_module(build_accel(cfg)));
  }
}

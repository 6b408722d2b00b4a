// Emitter tests of the activation unit and the scratchpad memories: golden files of the emitted
// Verilog for small configs, the ROM contents (case ROMs and .hex images) against the numerics LUT
// builders, and structural properties across presets and random configs. Regenerate the golden
// files after an intended RTL change with
//   CAPSGEN_UPDATE_GOLDEN=1 ./test_emit_act_spm   (then review the diff of tests/data/golden_rtl/)
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "config/accel_config.hpp"
#include "config/act_params.hpp"
#include "emit/activation.hpp"
#include "emit/design.hpp"
#include "emit/generate.hpp"
#include "emit/random_config.hpp"
#include "emit/scratchpad.hpp"
#include "emit/vast.hpp"
#include "numerics/activation.hpp"
#include "emit_fixtures.hpp"

namespace fs = std::filesystem;
using namespace capsgen;
using namespace capsgen::emit;
using capsgen::emit::test::find;
using capsgen::emit::test::count;
using capsgen::emit::test::preset;

namespace {

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A small config that exercises the uncommon paths: act 6 (every shift non-zero), a hybrid
// scratchpad with a 3-port shared memory whose sectors are not a power of 2 in words, and a
// wake-up latency of 3.
AccelConfig small_hy() {
  AccelConfig cfg = preset("tiny-2x2");
  cfg.name = "act-spm-small";
  cfg.widths.data = cfg.widths.act = 6;
  cfg.norm.sqrt_in_bits = 6;
  cfg.norm.sqrt_out_bits = 5;
  cfg.squash = SquashConfig{};
  cfg.squash.elem_bits = 3;
  cfg.squash.norm_bits = 3;
  cfg.squash.out_bits = 6;
  cfg.squash.in_frac = 4;
  cfg.squash.norm_shift = 2;
  cfg.softmax = {4, 5, 3};
  cfg.scratchpad.organization = SpmOrganization::Hy;
  cfg.scratchpad.wakeup_cycles = 3;
  cfg.scratchpad.data = {true, 1, 2, 2, 16};
  cfg.scratchpad.weight = {true, 1, 1, 1, 8};
  cfg.scratchpad.acc = {true, 1, 2, 1, 32};
  cfg.scratchpad.shared = {true, 3, 2, 2, 32};  // 192 words per sector
  validate_accel_config(cfg);
  return cfg;
}

// Only the files of the two emitters under test.
Design emit_act_spm(const AccelConfig& cfg) {
  Design d(cfg);
  emit_activation(cfg, d);
  emit_scratchpad(cfg, d);
  return d;
}

void compare_with_golden(const Design& d, const std::string& subdir) {
  const fs::path dir = fs::path(CAPSGEN_TEST_DATA) / "golden_rtl" / subdir;
  const bool update = std::getenv("CAPSGEN_UPDATE_GOLDEN") != nullptr;
  if (update) {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  for (const OutputFile& f : d.files()) {
    if (update) {
      std::ofstream(dir / f.name, std::ios::binary) << f.contents;
      continue;
    }
    ASSERT_TRUE(fs::exists(dir / f.name)) << "missing golden file " << (dir / f.name)
                                          << " (regenerate with CAPSGEN_UPDATE_GOLDEN=1)";
    EXPECT_EQ(read(dir / f.name), f.contents)
        << f.name << " differs from " << (dir / f.name) << "; if intended, regenerate with CAPSGEN_UPDATE_GOLDEN=1";
  }
  std::size_t golden_files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++golden_files;
  EXPECT_EQ(golden_files, d.files().size()) << "stale files in " << dir;
}

// Contents of an emitted case ROM: address -> value, from the entry lines
//   A'dX: data_q <= B'dY;
std::map<std::uint64_t, std::uint64_t> parse_case_rom(const std::string& text, int addr_bits, int data_bits) {
  std::map<std::uint64_t, std::uint64_t> rom;
  const std::string label = std::to_string(addr_bits) + "'d", value = ": data_q <= " + std::to_string(data_bits) + "'d";
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const std::size_t b = line.find_first_not_of(' ');
    const std::size_t v = line.find(value);
    if (b == std::string::npos || line.compare(b, label.size(), label) != 0 || v == std::string::npos) continue;
    rom[std::stoull(line.substr(b + label.size()))] = std::stoull(line.substr(v + value.size()));
  }
  return rom;
}

// Values of a $readmemh image (comment lines skipped).
std::vector<std::uint64_t> parse_hex(const std::string& text) {
  std::vector<std::uint64_t> v;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line.rfind("//", 0) == 0) continue;
    v.push_back(std::stoull(line, nullptr, 16));
  }
  return v;
}

// The ROM checks of one config: every case ROM and every .hex image equals its builder table.
void check_roms(const AccelConfig& cfg) {
  SCOPED_TRACE(cfg.name);
  const Design d = emit_act_spm(cfg);
  const fx::ActParams p = act_params(cfg);
  struct Rom {
    const char* module;
    std::vector<std::uint32_t> table;
    int addr_bits, data_bits;
  };
  const Rom roms[] = {
      {kActSqrtRomModule, fx::build_sqrt_lut(p), cfg.norm.sqrt_in_bits, cfg.norm.sqrt_out_bits},
      {kActSquashRomModule, fx::build_squash_lut(p), p.squash_addr_bits(), p.squash_data_bits()},
      {kActExpRomModule, fx::build_exp_lut(p), cfg.softmax.exp_in_bits, cfg.softmax.exp_out_bits},
  };
  for (const Rom& r : roms) {
    SCOPED_TRACE(r.module);
    const OutputFile* v = find(d, std::string(r.module) + ".v");
    const OutputFile* h = find(d, std::string(r.module) + ".hex");
    ASSERT_NE(v, nullptr);
    ASSERT_NE(h, nullptr);
    const std::vector<std::uint64_t> hex = parse_hex(h->contents);
    ASSERT_EQ(hex.size(), r.table.size());
    for (std::size_t a = 0; a < hex.size(); ++a) ASSERT_EQ(hex[a], r.table[a]) << ".hex address " << a;
    const bool computed = r.module == std::string(kActSqrtRomModule) && r.addr_bits > kCaseRomMaxAddrBits;
    if (computed) {
      EXPECT_NE(v->contents.find("Restoring square root"), std::string::npos);
      EXPECT_EQ(v->contents.find("case ("), std::string::npos);
      continue;  // checked at every address by the block test (tb_blocks activation --mode rom)
    }
    const auto rom = parse_case_rom(v->contents, r.addr_bits, r.data_bits);
    ASSERT_EQ(rom.size(), r.table.size()) << "case ROM entries";
    for (std::size_t a = 0; a < r.table.size(); ++a) ASSERT_EQ(rom.at(a), r.table[a]) << "case ROM address " << a;
  }
}


}  // namespace

TEST(EmitActSpmGolden, SmallHybrid) { compare_with_golden(emit_act_spm(small_hy()), "act-spm-small"); }

TEST(EmitActSpmGolden, ComputedSqrt) {
  AccelConfig cfg = small_hy();
  cfg.name = "act-sqrt18";
  cfg.widths.data = cfg.widths.act = 8;
  cfg.norm.sqrt_in_bits = 18;
  cfg.norm.sqrt_out_bits = 7;  // sqrt_frac = 7 - 9 = -2: the two low address bits drop out
  validate_accel_config(cfg);
  Design d(cfg);
  d.add_module(build_act_sqrt_computed(cfg));
  compare_with_golden(d, "act-sqrt18");
}

TEST(EmitActSpm, RomsEqualTheBuilders) {
  for (const char* name : {"tiny-2x2", "small-4x4", "capsacc-16x16"}) check_roms(preset(name));
  check_roms(small_hy());
  for (std::uint64_t seed = 1; seed <= 20; ++seed) check_roms(parse_accel_config(random_accel_config_yaml(seed), "r.yaml"));
}

TEST(EmitActSpm, ActivationPortsFollowTheGeometry) {
  const AccelConfig cfg = preset("capsacc-16x16");
  const ActGeometry g = act_geometry(cfg);
  EXPECT_EQ(g.max_len, 32);
  EXPECT_EQ(g.len_bits, 6);
  EXPECT_EQ(g.shift_bits, 5);    // 0..31 covers every shift of a 25-bit psum
  EXPECT_EQ(g.sum_bits, 20);     // 32 squares of 8-bit values
  EXPECT_EQ(g.nshift_bits, 5);
  EXPECT_EQ(g.exp_sum_bits, 13);
  EXPECT_EQ(g.out_bits, 8);
  EXPECT_EQ(g.fifo_depth, 40);
  EXPECT_EQ(g.div_stages, 8);
  EXPECT_FALSE(g.sqrt_computed);
  const std::string text = print_module(build_activation(cfg));
  EXPECT_NE(text.find("input  wire signed [24:0] in_data_i"), std::string::npos);
  EXPECT_NE(text.find("input  wire [5:0] len_i"), std::string::npos);
  EXPECT_NE(text.find("output wire [7:0] out_data_o"), std::string::npos);
  const std::string bank = print_module(build_activation_bank(cfg));
  EXPECT_EQ(count(bank, "capsgen_activation u_act_c"), 16);
  EXPECT_NE(bank.find("output wire [127:0] out_data_o"), std::string::npos);
  // A wider norm code than act widens the output.
  AccelConfig wide = cfg;
  wide.norm.sqrt_out_bits = 11;
  EXPECT_EQ(act_geometry(wide).out_bits, 11);
  // Large arrays lengthen the vectors.
  wide.array.cols = 64;
  EXPECT_EQ(act_geometry(wide).max_len, 64);
  EXPECT_EQ(act_geometry(wide).len_bits, 7);
}

// The gain squash (capsacc-16x16): a 2^norm_bits ROM of gain_bits, the element registered beside
// the ROM read and multiplied by it, the product rounded by in_frac + gain_bits + 1 - (out_bits - 1)
// and saturated; the table kind has none of it.
TEST(EmitActSpm, GainSquashPath) {
  const AccelConfig cfg = preset("capsacc-16x16");
  ASSERT_EQ(cfg.squash.kind, SquashKind::kGain);
  const ActGeometry g = act_geometry(cfg);
  EXPECT_EQ(g.sq_rom_addr, cfg.squash.norm_bits);
  EXPECT_EQ(g.sq_rom_data, cfg.squash.gain_bits);
  EXPECT_EQ(g.sq_gain_shift, cfg.squash.in_frac + cfg.squash.gain_bits + 1 - (cfg.squash.out_bits - 1));
  const std::string text = print_module(build_activation(cfg));
  EXPECT_NE(text.find("wire [16:0] sq_prod;"), std::string::npos);  // 8-bit element x (8+1)-bit gain
  EXPECT_NE(text.find("sqo_x_q <= elem_x;"), std::string::npos);
  EXPECT_NE(text.find("assign sq_addr = eng_desc[7:0];"), std::string::npos);
  EXPECT_NE(text.find(fmt::format("sq_prod[16:{}]", g.sq_gain_shift)), std::string::npos);
  EXPECT_NE(text.find("out_data_q <= sq_out;"), std::string::npos);
  const std::string table = print_module(build_activation(preset("tiny-2x2")));
  EXPECT_EQ(table.find("sq_prod"), std::string::npos);
  EXPECT_NE(table.find("out_data_q <= squash_data;"), std::string::npos);
}

TEST(EmitActSpm, ScratchpadPerOrganization) {
  AccelConfig cfg = small_hy();
  auto names = [](const AccelConfig& c) {
    std::vector<std::string> v;
    for (const SpmGeometry& g : spm_memories(c)) v.push_back(g.name + ":" + std::to_string(g.ports));
    return v;
  };
  EXPECT_EQ(names(cfg), (std::vector<std::string>{"data:1", "weight:1", "acc:1", "shared:3"}));
  cfg.scratchpad.organization = SpmOrganization::Sep;
  EXPECT_EQ(names(cfg), (std::vector<std::string>{"data:1", "weight:1", "acc:1"}));
  cfg.scratchpad.organization = SpmOrganization::Smp;
  EXPECT_EQ(names(cfg), (std::vector<std::string>{"shared:3"}));

  // CapsAcc's data memory: 25 KiB = 16 banks x 2 sectors x 100 words of 64 bits.
  const AccelConfig capsacc = preset("capsacc-16x16");
  const SpmGeometry data = spm_memories(capsacc)[0];
  EXPECT_EQ(data.words_per_sector, 100);
  EXPECT_EQ(data.offset_bits, 7);
  EXPECT_EQ(data.sector_bits, 1);
  const std::string text = print_module(build_spm_memory(data));
  EXPECT_EQ(count(text, "capsgen_spm_ram_p1 #("), 32);  // one RAM per bank and sector
  EXPECT_NE(text.find("input  wire [1:0] sleep_req_i"), std::string::npos);
  EXPECT_NE(text.find("output wire err_addr_o"), std::string::npos);  // 100 words: offsets 100..127 refused
  EXPECT_EQ(text.find("err_conflict_o"), std::string::npos);          // one port
  const SpmGeometry weight = spm_memories(capsacc)[1];                 // 64 words: no offset errors
  EXPECT_EQ(print_module(build_spm_memory(weight)).find("err_addr_o"), std::string::npos);

  // Without power gating there is no handshake.
  AccelConfig nopg = capsacc;
  nopg.scratchpad.power_gating = false;
  const std::string t2 = print_module(build_spm_memory(spm_memories(nopg)[0]));
  EXPECT_EQ(t2.find("sleep_req_i"), std::string::npos);
  EXPECT_EQ(t2.find("sleep_ack_o"), std::string::npos);

  // The shared memory has three ports per bank and flags same-word writes.
  const std::string shared = print_module(build_spm_memory(spm_memories(small_hy())[3]));
  EXPECT_NE(shared.find("p2_wdata_i"), std::string::npos);
  EXPECT_NE(shared.find("err_conflict_o"), std::string::npos);
  EXPECT_EQ(count(shared, "capsgen_spm_ram_p3 #("), 4);
}

TEST(EmitActSpm, SynthesizableOnlyAndOrdered) {
  for (const AccelConfig& cfg : {preset("capsacc-16x16"), small_hy()}) {
    const Design d = build_design(cfg);
    for (const OutputFile& f : d.files()) {
      if (f.kind != OutputFile::Kind::kVerilog) continue;
      if (f.name.rfind("capsgen_act", 0) != 0 && f.name.rfind("capsgen_spm", 0) != 0) continue;
      EXPECT_EQ(f.contents.find('$'), std::string::npos) << f.name << ": system task in synthesizable RTL";
      std::istringstream lines(f.contents);
      for (std::string line; std::getline(lines, line);) {
        const std::size_t b = line.find_first_not_of(' ');
        if (b != std::string::npos && line.compare(b, 2, "//") != 0) {
          EXPECT_NE(line.compare(b, 7, "initial"), 0) << f.name << ": " << line;
        }
      }
      EXPECT_EQ(f.contents.find("`"), std::string::npos) << f.name << ": compiler directive";
    }
    const auto v = d.verilog_files();
    auto pos = [&v](const std::string& n) { return std::find(v.begin(), v.end(), n) - v.begin(); };
    for (const char* dep : {"capsgen_act_sqrt_rom.v", "capsgen_act_squash_rom.v", "capsgen_act_exp_rom.v",
                            "capsgen_act_fifo.v", "capsgen_act_divider.v"})
      EXPECT_LT(pos(dep), pos("capsgen_activation.v")) << dep;
    EXPECT_LT(pos("capsgen_activation.v"), pos("capsgen_activation_bank.v"));
    for (const SpmGeometry& g : spm_memories(cfg))
      EXPECT_LT(pos(spm_ram_module(g.ports) + ".v"), pos(g.module + ".v")) << g.module;
    ASSERT_NE(find(d, kActivationSummaryName), nullptr);
    ASSERT_NE(find(d, kScratchpadSummaryName), nullptr);
  }
}

TEST(EmitActSpm, DividerStagesAndComputedSqrtAcrossWidths) {
  // Every act width builds a divider with one stage per quotient bit.
  AccelConfig cfg = preset("tiny-2x2");
  for (int act : {2, 4, 8, 12, 16}) {
    cfg.widths.data = cfg.widths.act = act;
    cfg.widths.weight = std::max(act, 8);
    cfg.widths.psum = act + cfg.widths.weight + 1;
    cfg.squash.elem_bits = std::min(cfg.squash.elem_bits, act);
    cfg.squash.out_bits = std::min(cfg.squash.out_bits, act);
    cfg.softmax.exp_in_bits = std::min(cfg.softmax.exp_in_bits, act);
    const std::string text = print_module(build_act_divider(cfg));
    EXPECT_EQ(count(text, "_valid_q <= 1'b0;"), act) << "act " << act;  // one valid register per stage
  }
  // The computed sqrt exists for every sqrt_frac sign.
  AccelConfig s = preset("tiny-2x2");
  for (int in = 17; in <= 20; ++in)
    for (int out : {2, 8, 12, 16}) {
      s.norm.sqrt_in_bits = in;
      s.norm.sqrt_out_bits = out;
      s.squash.norm_bits = std::min(s.squash.norm_bits, out);
      EXPECT_NO_THROW(print_module(build_act_sqrt_computed(s))) << in << " " << out;
    }
}

// PIM-CapsNet units: emitted only when the preset selects them, with the ports of the ROM or the
// divider each replaces, instantiated in the unit instead of it; activation.json says which are in.
// Their arithmetic is checked against fx::pim by the block test (tb_blocks activation --mode pim).
TEST(EmitActSpm, PimUnitsReplaceTheRoms) {
  const AccelConfig lut = preset("capsacc-16x16");
  const Design plain = emit_act_spm(lut);
  EXPECT_EQ(find(plain, std::string(kActPimExpModule) + ".v"), nullptr);
  EXPECT_EQ(find(plain, std::string(kActPimRsqrtModule) + ".v"), nullptr);
  EXPECT_EQ(find(plain, std::string(kActPimRecipModule) + ".v"), nullptr);
  const nlohmann::json plain_summary = nlohmann::json::parse(find(plain, kActivationSummaryName)->contents);
  EXPECT_FALSE(plain_summary.at("exp_pim"));
  EXPECT_FALSE(plain_summary.at("exp_recovery"));
  EXPECT_FALSE(plain_summary.at("sqrt_pim"));
  EXPECT_FALSE(plain_summary.at("divide_pim"));

  AccelConfig cfg = lut;
  cfg.softmax.exp_kind = ExpKind::kPimShift;
  cfg.softmax.exp_recovery = true;
  cfg.norm.sqrt_kind = SqrtKind::kPimRsqrt;
  cfg.softmax.divide_kind = DivideKind::kPimReciprocal;
  validate_accel_config(cfg);
  const Design d = emit_act_spm(cfg);
  const OutputFile* exp = find(d, std::string(kActPimExpModule) + ".v");
  const OutputFile* rsq = find(d, std::string(kActPimRsqrtModule) + ".v");
  ASSERT_NE(exp, nullptr);
  ASSERT_NE(rsq, nullptr);
  EXPECT_NE(exp->contents.find("input  wire [7:0] addr_i"), std::string::npos);
  EXPECT_NE(exp->contents.find("output wire [7:0] data_o"), std::string::npos);
  EXPECT_NE(exp->contents.find("9'd260"), std::string::npos);  // the recovery constant of capsacc-16x16
  EXPECT_NE(rsq->contents.find("input  wire [11:0] addr_i"), std::string::npos);
  EXPECT_NE(rsq->contents.find("output wire [7:0] data_o"), std::string::npos);
  for (const OutputFile* f : {exp, rsq}) {
    EXPECT_EQ(count(f->contents, "always @(posedge clk_i)"), 1) << f->name;  // one register, as the ROM
    EXPECT_EQ(f->contents.find("$"), std::string::npos) << f->name;
  }
  // The reciprocal divide: the divider's ports (8-bit exp value, 13-bit sum, 8-bit quotient) and its
  // 8 stages (one valid register each), the seed constant of fx::pim; the divider is still written.
  const OutputFile* rcp = find(d, std::string(kActPimRecipModule) + ".v");
  ASSERT_NE(rcp, nullptr);
  ASSERT_NE(find(d, std::string(kActDividerModule) + ".v"), nullptr);
  EXPECT_NE(rcp->contents.find("input  wire [7:0] num_i"), std::string::npos);
  EXPECT_NE(rcp->contents.find("input  wire [12:0] den_i"), std::string::npos);
  EXPECT_NE(rcp->contents.find("output wire [7:0] quot_o"), std::string::npos);
  EXPECT_NE(rcp->contents.find("17'd95951"), std::string::npos);
  EXPECT_EQ(count(rcp->contents, "_valid_q <= "), 2 * 8) << "a reset and a load per stage";
  EXPECT_EQ(rcp->contents.find("$"), std::string::npos);
  const std::string unit = print_module(build_activation(cfg));
  EXPECT_NE(unit.find("capsgen_act_pim_exp u_exp_rom"), std::string::npos);
  EXPECT_NE(unit.find("capsgen_act_pim_rsqrt u_sqrt_rom"), std::string::npos);
  EXPECT_EQ(unit.find("capsgen_act_exp_rom u_"), std::string::npos);
  EXPECT_EQ(unit.find("capsgen_act_sqrt_rom u_"), std::string::npos);
  EXPECT_NE(unit.find("capsgen_act_pim_recip u_div"), std::string::npos);
  EXPECT_EQ(unit.find("capsgen_act_divider u_"), std::string::npos);
  const nlohmann::json summary = nlohmann::json::parse(find(d, kActivationSummaryName)->contents);
  EXPECT_TRUE(summary.at("exp_pim"));
  EXPECT_TRUE(summary.at("exp_recovery"));
  EXPECT_TRUE(summary.at("sqrt_pim"));
  EXPECT_TRUE(summary.at("divide_pim"));
  // Without recovery there is no recovery multiply; the emitter is deterministic.
  cfg.softmax.exp_recovery = false;
  const std::string plain_exp = print_module(build_act_pim_exp(cfg));
  EXPECT_EQ(plain_exp.find("rc_prod"), std::string::npos);
  EXPECT_EQ(plain_exp, print_module(build_act_pim_exp(cfg)));
}

// The PIM-CapsNet units emit for the formats the validation allows: all three on 120 random configs
// (act 4-12, negative sqrt_frac, sums of up to 17 bits) and the reciprocal divide with 2 and 3
// stages (act 2, 3: fewer stages than its four steps). The seeds that draw them themselves run the
// block test (tests/rtl random-N).
TEST(EmitActSpm, PimUnitsForRandomFormats) {
  auto all_pim = [](AccelConfig cfg, bool recovery) {
    cfg.softmax.exp_kind = ExpKind::kPimShift;
    cfg.softmax.exp_recovery = recovery;
    cfg.softmax.divide_kind = DivideKind::kPimReciprocal;
    cfg.norm.sqrt_kind = SqrtKind::kPimRsqrt;
    validate_accel_config(cfg);
    return cfg;
  };
  for (std::uint64_t seed = 1; seed <= 120; ++seed) {
    const AccelConfig cfg = all_pim(parse_accel_config(random_accel_config_yaml(seed), "r.yaml"), seed % 2 == 0);
    EXPECT_NO_THROW(print_module(build_act_pim_exp(cfg))) << "random config " << seed;
    EXPECT_NO_THROW(print_module(build_act_pim_rsqrt(cfg))) << "random config " << seed;
    EXPECT_NO_THROW(print_module(build_act_pim_recip(cfg))) << "random config " << seed;
  }
  for (int act : {2, 3}) {
    AccelConfig cfg = preset("tiny-2x2");
    cfg.widths.data = cfg.widths.act = act;
    cfg.norm.sqrt_in_bits = 2 * act + 6;
    cfg.squash.elem_bits = cfg.squash.out_bits = cfg.softmax.exp_in_bits = act;
    const std::string text = print_module(build_act_pim_recip(all_pim(cfg, false)));
    EXPECT_EQ(count(text, "_valid_q <= "), 2 * act) << "act " << act << ": one valid register per stage";
  }
}

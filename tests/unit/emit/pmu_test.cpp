// Emitter tests of the power-management units (gen/emit/pmu.cpp): one capsgen_pmu_<memory> per
// scratchpad memory of the organization when power gating is on (none without it), registration
// after the scratchpad (files.f order, pmu.json), port widths, synthesizable-only and deterministic
// text. The tiny preset's PMU files are golden files compared by test_emit (EmitGolden.Tiny2x2;
// regenerate with CAPSGEN_UPDATE_GOLDEN=1 ./test_emit). The behaviour is tested in Verilator by
// tb/pmu_tb.cpp against the real capsgen_spm_* memories (scripts/run_block_tests.sh).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "config/accel_config.hpp"
#include "emit/design.hpp"
#include "emit/generate.hpp"
#include "emit/pmu.hpp"
#include "emit/scratchpad.hpp"
#include "emit/vast.hpp"
#include "emit_fixtures.hpp"

using namespace capsgen;
using namespace capsgen::emit;
using capsgen::emit::test::find;
using capsgen::emit::test::preset;

namespace {

std::vector<std::string> pmu_modules(const AccelConfig& cfg) {
  Design d(cfg);
  emit_pmu(cfg, d);
  std::vector<std::string> v;
  for (const std::string& f : d.verilog_files()) v.push_back(f);
  return v;
}

// The preset with another organization (a 3-port shared memory of 2 banks x 2 sectors for SMP/HY).
AccelConfig with_org(AccelConfig cfg, SpmOrganization org) {
  ScratchpadConfig& sp = cfg.scratchpad;
  sp.organization = org;
  if (org != SpmOrganization::Sep) sp.shared = {true, 4, 2, 2, 32};
  if (org == SpmOrganization::Smp) sp.data.present = sp.weight.present = sp.acc.present = false;
  validate_accel_config(cfg);
  return cfg;
}

}  // namespace

TEST(EmitPmu, ModulesPerOrganization) {
  const AccelConfig tiny = preset("tiny-2x2");
  EXPECT_EQ(pmu_modules(with_org(tiny, SpmOrganization::Sep)),
            (std::vector<std::string>{"capsgen_pmu_data.v", "capsgen_pmu_weight.v", "capsgen_pmu_acc.v"}));
  EXPECT_EQ(pmu_modules(with_org(tiny, SpmOrganization::Smp)), (std::vector<std::string>{"capsgen_pmu_shared.v"}));
  EXPECT_EQ(pmu_modules(with_org(tiny, SpmOrganization::Hy)),
            (std::vector<std::string>{"capsgen_pmu_data.v", "capsgen_pmu_weight.v", "capsgen_pmu_acc.v",
                                      "capsgen_pmu_shared.v"}));
  // Without power gating: no PMU and no pmu.json; every other file is unchanged.
  AccelConfig nopg = tiny;
  nopg.scratchpad.power_gating = false;
  EXPECT_TRUE(pmu_modules(nopg).empty());
  Design d(nopg);
  emit_pmu(nopg, d);
  EXPECT_TRUE(d.files().empty());
  const Design full = build_design(nopg);
  EXPECT_EQ(find(full, kPmuSummaryName), nullptr);
  for (const std::string& f : full.verilog_files()) EXPECT_EQ(f.find("capsgen_pmu_"), std::string::npos) << f;
}

TEST(EmitPmu, RegisteredAfterTheScratchpad) {
  const Design d = build_design(preset("tiny-2x2"));
  const auto v = d.verilog_files();
  const auto pos = [&v](const std::string& n) { return std::find(v.begin(), v.end(), n) - v.begin(); };
  for (const char* n : {"capsgen_pmu_data.v", "capsgen_pmu_weight.v", "capsgen_pmu_acc.v"}) {
    ASSERT_LT(pos(n), static_cast<long>(v.size())) << n;
    EXPECT_LT(pos("capsgen_spm_acc.v"), pos(n)) << n;
  }
  EXPECT_LT(pos("capsgen_pmu_data.v"), pos("capsgen_pmu_weight.v"));
  EXPECT_LT(pos("capsgen_pmu_weight.v"), pos("capsgen_pmu_acc.v"));
  const OutputFile* summary = find(d, kPmuSummaryName);
  ASSERT_NE(summary, nullptr);
  // tiny-2x2: data 2 sectors, weight 4, acc 2; wakeup_cycles 2.
  const nlohmann::json j = nlohmann::json::parse(summary->contents);
  EXPECT_EQ(j.at("counter_bits"), 32);
  EXPECT_EQ(j.at("pmus"), nlohmann::json::parse(R"([
    {"memory": "data", "module": "capsgen_pmu_data", "sectors": 2, "wakeup_cycles": 2},
    {"memory": "weight", "module": "capsgen_pmu_weight", "sectors": 4, "wakeup_cycles": 2},
    {"memory": "acc", "module": "capsgen_pmu_acc", "sectors": 2, "wakeup_cycles": 2}])"));
}

TEST(EmitPmu, PortsAndWidths) {
  const AccelConfig small = preset("small-4x4");  // data 4 sectors, acc 2, wakeup 4
  const std::vector<SpmGeometry> mems = spm_memories(small);
  const std::string text = print_module(build_pmu(mems[0]));
  EXPECT_NE(text.find("module capsgen_pmu_data"), std::string::npos);
  for (const char* p : {"input  wire clk_i", "input  wire rst_ni", "input  wire cmd_valid_i", "output wire cmd_ready_o",
                        "input  wire [3:0] cmd_awake_i", "input  wire cmd_wait_i", "output wire [3:0] sleep_req_o",
                        "input  wire [3:0] sleep_ack_i", "output wire [3:0] usable_o",
                        "output wire [127:0] asleep_cycles_o", "output wire [31:0] wake_count_o",
                        "output wire [31:0] stall_cycles_o"})
    EXPECT_NE(text.find(p), std::string::npos) << p;
  EXPECT_NE(print_module(build_pmu(mems[2])).find("output wire [63:0] asleep_cycles_o"), std::string::npos);
  // One sector: scalar request/acknowledge ports.
  AccelConfig one = small;
  one.scratchpad.acc.sectors = 1;
  validate_accel_config(one);
  const std::string t1 = print_module(build_pmu(spm_memories(one)[2]));
  EXPECT_NE(t1.find("input  wire cmd_awake_i"), std::string::npos);
  EXPECT_NE(t1.find("output wire sleep_req_o"), std::string::npos);
  EXPECT_NE(t1.find("output wire [31:0] asleep_cycles_o"), std::string::npos);
  // Naming rules: clk_i, rst_ni, then *_i / *_o.
  const Module weight = build_pmu(mems[1]);
  for (const Port& p : weight.ports()) {
    const bool in = p.dir == PortDir::kInput;
    EXPECT_TRUE(p.name == "rst_ni" || p.name.substr(p.name.size() - 2) == (in ? "_i" : "_o")) << p.name;
  }
  // Without power gating a PMU cannot be built.
  AccelConfig nopg = small;
  nopg.scratchpad.power_gating = false;
  EXPECT_THROW(build_pmu(spm_memories(nopg)[0]), std::logic_error);
}

TEST(EmitPmu, SynthesizableOnlyAndDeterministic) {
  for (const char* p : {"tiny-2x2", "small-4x4", "capsacc-16x16"}) {
    const AccelConfig cfg = with_org(preset(p), SpmOrganization::Hy);
    for (const SpmGeometry& g : spm_memories(cfg)) {
      const std::string text = print_module(build_pmu(g));
      SCOPED_TRACE(g.module);
      for (const char* bad : {"initial", "$display", "$finish", "$random", "#1", "always_ff", "logic "})
        EXPECT_EQ(text.find(bad), std::string::npos) << bad;
      EXPECT_EQ(text, print_module(build_pmu(g)));
    }
    Design a(cfg), b(cfg);
    emit_pmu(cfg, a);
    emit_pmu(cfg, b);
    ASSERT_EQ(a.files().size(), b.files().size());
    for (std::size_t i = 0; i < a.files().size(); ++i) EXPECT_EQ(a.files()[i].contents, b.files()[i].contents);
  }
}

// CACTI import: the hand-written sample in tests/data/cacti (CACTI 6.5 / CACTI-P console layout).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/input_error.hpp"
#include "memory/cacti.hpp"

namespace capsgen::memory {
namespace {

TEST(Cacti, ParsesSample) {
  const CactiTable t = load_cacti(std::string(CAPSGEN_TEST_DATA) + "/cacti/sample.out");
  ASSERT_EQ(t.size(), 2u);
  const CactiPoint& a = t.at({65536, 1, 8});
  EXPECT_NEAR(a.read_pj_per_byte, 9.6 / 16, 1e-12);   // 0.0096 nJ per 16-byte access
  EXPECT_NEAR(a.write_pj_per_byte, 11.2 / 16, 1e-12);
  EXPECT_NEAR(a.leak_mw, 3.5 * 16, 1e-12);            // per bank x 16 banks
  EXPECT_NEAR(a.area_mm2, 0.5 * 0.62, 1e-12);
  EXPECT_DOUBLE_EQ(a.wake_latency_ns, 0.072);
  const CactiPoint& b = t.at({110592, 3, 1});
  EXPECT_NEAR(b.area_mm2, 1.5 * 1.68, 1e-12);
}

TEST(Cacti, OverridesTheModel) {
  const CactiTable t = load_cacti(std::string(CAPSGEN_TEST_DATA) + "/cacti/sample.out");
  TechParams tech = load_tech(std::string(CAPSGEN_REPO_ROOT) + "/configs/tech/sram-32nm.yaml");
  const SramFigures f = evaluate_sram(tech, SramSpec{65536, 16, 1, 8}, &t);
  EXPECT_NEAR(f.area_mm2, 0.31, 1e-12);
  EXPECT_NEAR(f.leak_mw, 56, 1e-12);
  const SramFigures g = evaluate_sram(tech, SramSpec{32768, 16, 1, 1}, &t);  // not in the table: the model
  EXPECT_NEAR(g.area_mm2, evaluate_sram(tech, SramSpec{32768, 16, 1, 1}).area_mm2, 1e-12);
}

TEST(Cacti, MissingFieldNamesTheReportLine) {
  try {
    parse_cacti("x\nCache size : 1024\nBlock size : 8\nRead write ports : 1\n", "f.out");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "f.out");
    EXPECT_EQ(e.line(), 2);
    EXPECT_EQ(e.field(), "Total dynamic read energy per access (nJ)");
  }
  try {
    parse_cacti("Cache size : 1024\nBlock size : eight\n", "f.out");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 2);
    EXPECT_EQ(e.field(), "Block size");
  }
  EXPECT_THROW(parse_cacti("nothing here\n", "f.out"), InputError);
}

// Values that used to be accepted and silently became wrong figures: each names its line and field.
TEST(Cacti, RejectsOutOfRangeValues) {
  const std::string tail =
      "Read write ports : 1\nTotal dynamic read energy per access (nJ) : 0.01\n"
      "Total dynamic write energy per access (nJ) : 0.01\nTotal leakage power of a bank (mW) : 1\n"
      "Cache height x width (mm) : 0.5 x 0.5\n";
  struct Case {
    std::string text;
    int line;
    std::string field;
  };
  const std::vector<Case> cases = {
      {"Cache size : 1e30\nBlock size : 8\n" + tail, 1, "Cache size"},
      {"Cache size : inf\nBlock size : 8\n" + tail, 1, "Cache size"},
      {"Cache size : 9223372036854775808\nBlock size : 8\n" + tail, 1, "Cache size"},
      {"Cache size : 1024.5\nBlock size : 8\n" + tail, 1, "Cache size"},
      {"Cache size : 1024\nBlock size : 1e-320\n" + tail, 2, "Block size"},
      {"Cache size : 1024\nBlock size : 2048\n" + tail, 1, "Block size"},
      {"Cache size : 1024\nBlock size : 8\nSectors : 0\n" + tail, 3, "Sectors"},
      {"Cache size : 1024\nBlock size : 8\nSectors : 0.5\n" + tail, 3, "Sectors"},
      {"Cache size : 1024\nBlock size : 8\nTotal leakage power of a bank (mW) : 1e308\n" + tail, 3,
       "Total leakage power of a bank (mW)"},
      {"Cache size : 1024\nBlock size : 8\nWakeup energy (nJ) : nan\n" + tail, 3, "Wakeup energy (nJ)"},
      {"Cache size : 1024\nBlock size : 8\nNumber of banks : 0x10\n" + tail, 3, "Number of banks"},
  };
  for (const Case& c : cases) {
    try {
      parse_cacti(c.text, "f.out");
      ADD_FAILURE() << "accepted: " << c.text;
    } catch (const InputError& e) {
      EXPECT_EQ(e.file(), "f.out");
      EXPECT_EQ(e.line(), c.line) << e.what();
      EXPECT_EQ(e.field(), c.field) << e.what();
    }
  }
  // The same report with plain values is read.
  EXPECT_EQ(parse_cacti("Cache size : 1024\nBlock size : 8\nSectors : 2\n" + tail, "f.out").size(), 1u);
}

}  // namespace
}  // namespace capsgen::memory

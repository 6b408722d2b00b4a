// CACTI import: the hand-written sample (CACTI 6.5 / CACTI-P console layout) and reports built from
// reference rows of tests/data/cacti7/cacti7-sram.csv whose true totals are known, 1 and 3 ports.
#include <gtest/gtest.h>

#include <algorithm>
#include <fmt/format.h>
#include <sstream>

#include "config/yaml_util.hpp"
#include <string>
#include <vector>

#include "core/input_error.hpp"
#include "memory/cacti.hpp"

namespace capsgen::memory {
namespace {

std::string data(const std::string& f) { return std::string(CAPSGEN_TEST_DATA) + "/cacti/" + f; }
TechParams descnet() { return load_tech(std::string(CAPSGEN_REPO_ROOT) + "/configs/tech/sram-32nm.yaml"); }
TechParams cacti7() { return load_tech(std::string(CAPSGEN_REPO_ROOT) + "/configs/tech/sram-cacti7-32nm.yaml"); }

TEST(Cacti, ParsesSample) {
  const CactiTable t = load_cacti(data("sample.out"));
  ASSERT_EQ(t.size(), 2u);
  const CactiPoint& a = t.at({65536, 1, 8});
  EXPECT_NEAR(a.read_pj_per_byte, 9.6 / 16, 1e-12);   // 0.0096 nJ per 16-byte access
  EXPECT_NEAR(a.write_pj_per_byte, 11.2 / 16, 1e-12);
  EXPECT_NEAR(a.leak_mw, 16 * (3.5 + 0.5 - 1.5) + 1.5, 1e-12);  // banks x (bank lines - routing) + routing
  EXPECT_NEAR(a.area_mm2, 0.5 * 0.62, 1e-12);
  EXPECT_DOUBLE_EQ(a.wake_latency_ns, 0.072);
  EXPECT_LT(a.gated_leak_mw, 0);  // no CACTI-P block: no sleep leakage of its own
  const CactiPoint& b = t.at({110592, 3, 1});
  EXPECT_NEAR(b.area_mm2, 1.5 * 1.68, 1e-12);
  EXPECT_NEAR(b.leak_mw, 16 * (11.0 + 1.0 - 3.0) + 3.0, 1e-12);
}

TEST(Cacti, OverridesTheModel) {
  const CactiTable t = load_cacti(data("sample.out"));
  const TechParams tech = descnet();
  const SramFigures f = evaluate_sram(tech, SramSpec{65536, 16, 1, 8}, &t);
  EXPECT_NEAR(f.area_mm2, 0.31, 1e-12);
  EXPECT_NEAR(f.leak_mw, 41.5, 1e-12);
  EXPECT_EQ(f.source, "cacti + model gating");  // its wake-up energy and sleep leakage are the model's
  const SramFigures g = evaluate_sram(tech, SramSpec{32768, 16, 1, 1}, &t);  // not in the table: the model
  EXPECT_NEAR(g.area_mm2, evaluate_sram(tech, SramSpec{32768, 16, 1, 1}).area_mm2, 1e-12);
  EXPECT_EQ(g.source, "model");
}

// Reports built from the reference rows (32 nm, 8 KiB, 16 B, 16 banks; the file headers say how).
struct RefRow {
  int ports;
  double leak, pg_leak, wake_all_nj, wake_ns, area, pg_area, leak_1bank;
};
const RefRow kRows[] = {
    {1, 8.23568, 5.58829, 0.0170383, 0.00845524, 0.0608627, 0.0812181, 6.31184},
    {3, 16.4989, 12.9518, 0.0177382, 0.00841329, 0.331849, 0.347459, 8.48807},
};

TEST(Cacti, ReferenceRowTotals) {
  for (const RefRow& r : kRows) {
    SCOPED_TRACE(r.ports);
    const CactiTable t = load_cacti(data(fmt::format("ref-32nm-8k-{}p.out", r.ports)));
    ASSERT_EQ(t.size(), 2u);
    const CactiPoint& u = t.at({8192, r.ports, 1});
    EXPECT_NEAR(u.leak_mw / r.leak, 1.0, 1e-4);  // not banks x "a bank" (that over-counts the routing)
    EXPECT_NEAR(u.area_mm2 / r.area, 1.0, 1e-4);
    const CactiPoint& g = t.at({8192, r.ports, 4});
    EXPECT_NEAR(g.leak_mw / r.leak, 1.0, 1e-4);  // active leakage: the ungated report's
    EXPECT_NEAR(g.gated_leak_mw / r.pg_leak, 1.0, 1e-4);
    EXPECT_NEAR(g.area_mm2 / r.pg_area, 1.0, 1e-4);
    EXPECT_NEAR(g.wake_nj_per_sector * 4 / r.wake_all_nj, 1.0, 1e-4);
    EXPECT_DOUBLE_EQ(g.wake_latency_ns, r.wake_ns);
    const CactiTable one = load_cacti(data(fmt::format("ref-32nm-8k-{}p-1bank.out", r.ports)));
    EXPECT_NEAR(one.at({8192, r.ports, 1}).leak_mw / r.leak_1bank, 1.0, 1e-4);
  }
}

TEST(Cacti, GatedFiguresComeFromCactiPOrSaySo) {
  for (const RefRow& r : kRows) {
    SCOPED_TRACE(r.ports);
    const CactiTable t = load_cacti(data(fmt::format("ref-32nm-8k-{}p.out", r.ports)));
    TechParams tech = cacti7();
    tech.sleep = SleepStyle::Retentive;
    // CACTI-P's own gated point: every figure CACTI's, retentive sleep leakage from its report.
    const SramFigures g = evaluate_sram(tech, SramSpec{8192, 16, r.ports, 4}, &t);
    EXPECT_EQ(g.source, "cacti");
    EXPECT_NEAR(g.sleep_leak_fraction, r.pg_leak / r.leak, 1e-4);
    EXPECT_NEAR(g.area_mm2, r.pg_area, 1e-4 * r.pg_area);
    // Non-retentive: CACTI has no such state, the model's residual is used and the source says so.
    tech.sleep = SleepStyle::NonRetentive;
    EXPECT_EQ(evaluate_sram(tech, SramSpec{8192, 16, r.ports, 4}, &t).source, "cacti + model gating");
    // A sector count the file lacks: CACTI's ungated memory with the model's sectoring ratios, never
    // the fitted model alone beside CACTI's ungated figures.
    const SramFigures h = evaluate_sram(tech, SramSpec{8192, 16, r.ports, 2}, &t);
    const SramFigures m1 = evaluate_sram(tech, SramSpec{8192, 16, r.ports, 1}), m2 = evaluate_sram(tech, SramSpec{8192, 16, r.ports, 2});
    EXPECT_EQ(h.source, "cacti + model gating");
    EXPECT_NEAR(h.leak_mw / r.leak, m2.leak_mw / m1.leak_mw, 1e-4);
    EXPECT_NEAR(h.area_mm2 / r.area, m2.area_mm2 / m1.area_mm2, 1e-4);
    EXPECT_EQ(evaluate_sram(tech, SramSpec{8192, 16, r.ports, 1}, &t).source, "cacti");
  }
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

std::string without(const std::string& text, const std::string& key) {
  std::string out, line;
  std::istringstream in(text);
  while (std::getline(in, line))
    if (line.find(key) == std::string::npos) out += line + "\n";
  return out;
}

TEST(Cacti, LeakageNeedsTheRoutingAndGatedNeedsUngated) {
  const std::string text = yaml::read_file(data("ref-32nm-8k-1p.out"));
  const std::string cut = without(text, "Inter-bank routing");
  const int first = 1 + int(std::count(cut.begin(), cut.begin() + long(cut.find("Cache size")), '\n'));
  try {  // 16 banks without the routing line: the total cannot be known
    parse_cacti(cut, "r.out");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "Inter-bank routing leakage (mW)");
    EXPECT_EQ(e.line(), first);  // the first report's "Cache size" line
  }
  // The CACTI-P report alone (from its "Cache size" line on): no active leakage to pair it with.
  const std::size_t second = text.find("Cache size", text.find("Cache size") + 1);
  try {
    parse_cacti(text.substr(second), "r.out");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "Total leakage power of a bank (mW)");
    EXPECT_EQ(e.line(), 1);
  }
  try {
    parse_cacti(without(text.substr(second), "Sectors"), "r.out");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "Sectors");
  }
}

// Values that used to be accepted and silently became wrong figures: each names its line and field.
TEST(Cacti, RejectsOutOfRangeValues) {
  const std::string tail =
      "Read write ports : 1\nTotal dynamic read energy per access (nJ) : 0.01\n"
      "Total dynamic write energy per access (nJ) : 0.01\nTotal leakage power of a bank (mW) : 1\n"
      "Total gate leakage power of a bank (mW) : 0.1\nCache height x width (mm) : 0.5 x 0.5\n";
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

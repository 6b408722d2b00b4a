// The SRAM model: the fitted technology file reproduces DESCNet's Table III (CapsNet rows) within
// the tolerances stated in docs/dse-memory.md, and the model is monotone where it must be.
#include <gtest/gtest.h>

#include <cmath>
#include <fmt/format.h>

#include "core/input_error.hpp"
#include "memory/sram_model.hpp"

namespace capsgen::memory {
namespace {

TechParams tech() { return load_tech(std::string(CAPSGEN_REPO_ROOT) + "/configs/tech/sram-32nm.yaml"); }
constexpr long long K = 1024;
// DESCNet's CapsNet inference: 116 frames per second.
constexpr double kSeconds = 1.0 / 116;

SramFigures fig(long long kib, int ports = 1, int sectors = 1) {
  static const TechParams t = tech();
  return evaluate_sram(t, SramSpec{kib * K, 16, ports, sectors});
}

TEST(SramModel, AreaMatchesTableIII) {
  // (KiB, ports, sectors, mm2): SEP data/weight/acc, SMP, HY shared; SEP-PG and SMP-PG.
  const struct { long long kib; int ports, sectors; double mm2, tol; } rows[] = {
      {25, 1, 1, 0.104, 0.10}, {64, 1, 1, 0.314, 0.10}, {32, 1, 1, 0.125, 0.10},
      {108, 3, 1, 2.521, 0.15}, {25, 3, 1, 0.519, 0.15},
      {25, 1, 2, 0.173, 0.15}, {64, 1, 8, 0.469, 0.15}, {32, 1, 2, 0.200, 0.15}, {108, 3, 2, 2.958, 0.15}};
  for (const auto& r : rows) {
    const double a = fig(r.kib, r.ports, r.sectors).area_mm2;
    ::testing::Test::RecordProperty(fmt::format("area_{}k_{}p_{}s", r.kib, r.ports, r.sectors), fmt::format("{:.3f}", a));
    EXPECT_NEAR(a / r.mm2, 1.0, r.tol) << r.kib << " KiB, " << r.ports << " ports, " << r.sectors << " sectors: " << a;
  }
}

TEST(SramModel, LeakageMatchesTableIII) {
  // Static energy without gating over one inference (mJ).
  const struct { long long kib; int ports; double mj; } rows[] = {
      {25, 1, 0.188}, {64, 1, 0.501}, {32, 1, 0.238}, {108, 3, 1.529}, {25, 3, 0.348}};
  for (const auto& r : rows) {
    const double mj = fig(r.kib, r.ports).leak_mw * kSeconds;
    ::testing::Test::RecordProperty(fmt::format("static_mj_{}k_{}p", r.kib, r.ports), fmt::format("{:.3f}", mj));
    EXPECT_NEAR(mj / r.mj, 1.0, 0.06) << r.kib;
  }
}

TEST(SramModel, WakeupOfTheSmpPgSector) {
  // SMP-PG: 0.352 nJ for waking one of two sectors of 108 KiB (Table III), within 10%.
  ::testing::Test::RecordProperty("wake_nj_108k_3p_2s", fmt::format("{:.3f}", fig(108, 3, 2).wake_nj_per_sector));
  EXPECT_NEAR(fig(108, 3, 2).wake_nj_per_sector / 0.352, 1.0, 0.10);
  EXPECT_DOUBLE_EQ(fig(64, 1, 8).wake_latency_ns, 0.072);
}

TEST(SramModel, Monotone) {
  for (int ports : {1, 3})
    for (long long kib = 1; kib < 8192; kib *= 2) {
      const SramFigures a = fig(kib, ports), b = fig(2 * kib, ports);
      EXPECT_LT(a.area_mm2, b.area_mm2);
      EXPECT_LT(a.leak_mw, b.leak_mw);
      EXPECT_LE(a.read_pj_per_byte, b.read_pj_per_byte);
      EXPECT_LE(a.write_pj_per_byte, b.write_pj_per_byte);
      EXPECT_LT(fig(kib, 1).area_mm2, fig(kib, 3).area_mm2);
      // More sectors: never less sleep-transistor area.
      double prev = fig(kib, ports, 1).area_mm2;
      for (int sc = 2; sc <= 512; sc *= 2) {
        const SramFigures g = fig(kib, ports, sc);
        EXPECT_GE(g.area_mm2, prev);
        EXPECT_GT(g.pg_area_mm2, 0.0);
        prev = g.area_mm2;
      }
    }
}

TEST(SramModel, BadTechFileNamesLineAndField) {
  const std::string path = std::string(CAPSGEN_TEST_DATA) + "/tech/bad-size-exp.yaml";
  try {
    load_tech(path);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "area.size_exp");
    EXPECT_EQ(e.line(), 6);
  }
}

}  // namespace
}  // namespace capsgen::memory

// The DESCNet exploration on a two-operation profile whose sizes, sector pools and configuration
// counts are worked out by hand, the Pareto filter, and determinism across thread counts.
#include <gtest/gtest.h>

#include <algorithm>

#include "memory/dse.hpp"

namespace capsgen::memory {
namespace {

TechParams tech() { return load_tech(std::string(CAPSGEN_REPO_ROOT) + "/configs/tech/sram-32nm.yaml"); }

// op0: D 1000, W 3000; op1: D 3000, A 2000 (bytes).
std::vector<OpProfile> two_ops() {
  OpProfile a, b;
  a.name = "a", b.name = "b";
  a.cycles = 1000, b.cycles = 3000;
  a.usage = {0, 1000, 3000, 0};
  b.usage = {0, 3000, 0, 2000};
  a.reads = {0, 5000, 6000, 0};
  b.reads = {0, 9000, 0, 8000};
  a.writes = {0, 1000, 3000, 0};
  b.writes = {0, 100, 0, 8000};
  return {a, b};
}

TEST(Dse, SizesAndSectorPools) {
  EXPECT_EQ(pow2_size(0), 0);
  EXPECT_EQ(pow2_size(1), 1024);
  EXPECT_EQ(pow2_size(1024), 1024);
  EXPECT_EQ(pow2_size(1025), 2048);
  EXPECT_EQ(sector_pool(1024, 512), (std::vector<int>{2, 4, 8}));  // s/128 = 8
  EXPECT_EQ(sector_pool(65536, 512).size(), 9u);                   // 2 .. 512
  EXPECT_EQ(sector_pool(65536, 16), (std::vector<int>{2, 4, 8, 16}));
}

TEST(Dse, HandCountedConfigurations) {
  DseOptions opt;
  opt.max_sectors = 4;  // every sigma(s) = {2, 4}
  opt.sample_every = 1;
  // SEP: 4096/4096/2048 -> 1 + 2^3; SMP: max(4000, 5000) -> 8192 -> 1 + 2; HY (Algorithm 1): data
  // 1024 leaves 1976 for the shared memory (2048), data 2048 leaves 952 (1024), data 4096 leaves
  // nothing (that is SEP, skipped) -> 2 + 2 * 2^4.
  EXPECT_EQ(count_configs(two_ops(), opt), 1 + 8 + 1 + 2 + 2 + 32);
  const DseResult r = run_dse(two_ops(), tech(), opt);
  EXPECT_EQ(r.evaluated, 46);
  EXPECT_EQ(r.per_option, (std::array<long long, kOptions>{1, 8, 1, 2, 2, 32}));
  ASSERT_EQ(r.sample.size(), 46u);
  for (int o = 0; o < kOptions; ++o) ASSERT_TRUE(r.has_best[std::size_t(o)]);
  EXPECT_EQ(r.best[kSep].bytes, (std::array<long long, kMems>{0, 4096, 4096, 2048}));
  EXPECT_EQ(r.best[kSmp].bytes, (std::array<long long, kMems>{8192, 0, 0, 0}));
  for (const auto& p : r.sample)
    if (p.option == kHy) {
      EXPECT_TRUE(p.bytes[kShared] == 2048 ? p.bytes[kData] == 1024 : p.bytes[kData] == 2048);
    }
  // Best per option and the front agree with a brute-force pass over all 46.
  for (int o = 0; o < kOptions; ++o) {
    double e = 1e300;
    for (const auto& p : r.sample)
      if (p.option == o) e = std::min(e, p.energy_mj());
    EXPECT_DOUBLE_EQ(r.best[std::size_t(o)].energy_mj(), e);
  }
  const auto front = pareto_front(r.sample);
  ASSERT_EQ(front.size(), r.pareto.size());
  for (std::size_t i = 0; i < front.size(); ++i) EXPECT_EQ(front[i].id, r.pareto[i].id);
  for (const auto& p : r.sample)
    for (const auto& q : r.pareto)
      EXPECT_FALSE(p.area_mm2 < q.area_mm2 && p.energy_mj() < q.energy_mj()) << p.id << " dominates " << q.id;
  // Power gating never changes dynamic energy; the gated SEP leaks less than the ungated one.
  for (const auto& p : r.sample)
    if (p.option == kSepPg) {
      EXPECT_DOUBLE_EQ(p.dynamic_mj, r.best[kSep].dynamic_mj);
      EXPECT_LT(p.static_mj, r.best[kSep].static_mj);
      EXPECT_GT(p.area_mm2, r.best[kSep].area_mm2);
    }
}

// SEP beyond Eq. 2: sep_range adds Algorithm 1's smaller sizes, size_steps larger powers of two.
TEST(Dse, SepRangeAndSizeSteps) {
  DseOptions opt;
  opt.max_sectors = 4;
  // Ranges (fit(min) .. fit(max)): data 1024..4096 (3 sizes), weight 4096 (1), acc 2048 (1).
  opt.sep_range = true;
  EXPECT_EQ(count_configs(two_ops(), opt), 3 * (1 + 2 * 2 * 2) + (1 + 2) + (2 + 32));  // sigma = {2, 4} everywhere
  opt.sep_range = false;
  opt.size_steps = 1;  // data 4096, 8192; weight 4096, 8192; acc 2048, 4096
  long long sep = 0, sep_pg = 0;
  for (long long d : {4096, 8192})
    for (long long w : {4096, 8192})
      for (long long a : {2048, 4096}) {
        sep += 1;
        sep_pg += (long long)sector_pool(d, 4).size() * sector_pool(w, 4).size() * sector_pool(a, 4).size();
      }
  EXPECT_EQ(count_configs(two_ops(), opt), sep + sep_pg + (1 + 2) + (2 + 32));
  const DseResult r = run_dse(two_ops(), tech(), opt);
  EXPECT_EQ(r.per_option[kSep], 8);
  // Larger memories cost area and leakage and save nothing in this flat model: Eq. 2's sizes stay best.
  EXPECT_EQ(r.best[kSep].bytes, (std::array<long long, kMems>{0, 4096, 4096, 2048}));
}

TEST(Dse, SectorsOnPerOperation) {
  DseOptions opt;
  ConfigPoint c;
  c.option = kSepPg;
  c.bytes = {0, 4096, 4096, 2048};
  c.sectors = {0, 4, 2, 2};
  const ConfigDetail d = evaluate_config(two_ops(), tech(), opt, c);
  // data sectors of 1 KiB: 1000 B -> 1, 3000 B -> 3; weight 2 KiB sectors: 3000 -> 2, 0 -> 0;
  // acc 1 KiB sectors: 0 -> 0, 2000 -> 2.
  EXPECT_EQ(d.sectors_on[0][kData], 1);
  EXPECT_EQ(d.sectors_on[1][kData], 3);
  EXPECT_EQ(d.sectors_on[0][kWeight], 2);
  EXPECT_EQ(d.sectors_on[1][kWeight], 0);
  EXPECT_EQ(d.sectors_on[0][kAcc], 0);
  EXPECT_EQ(d.sectors_on[1][kAcc], 2);
  // Wake-ups: data 1 then 2 more, weight 2, acc 2 -> 7 sector wake-ups in all.
  const double wake = (3 * d.figures[kData].wake_nj_per_sector + 2 * d.figures[kWeight].wake_nj_per_sector +
                       2 * d.figures[kAcc].wake_nj_per_sector) * 1e-6;
  EXPECT_NEAR(d.point.wakeup_mj, wake, 1e-15);
}

TEST(Dse, ParetoFilter) {
  auto pt = [](long long id, double a, double e) {
    ConfigPoint p;
    p.id = id, p.area_mm2 = a, p.dynamic_mj = e;
    return p;
  };
  const auto f = pareto_front({pt(0, 1, 5), pt(1, 2, 4), pt(2, 2, 6), pt(3, 3, 4), pt(4, 4, 1), pt(5, 1, 5)});
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ(f[0].id, 0);  // tie with 5: lowest id
  EXPECT_EQ(f[1].id, 1);
  EXPECT_EQ(f[2].id, 4);
}

TEST(Dse, SameResultOnAnyThreadCount) {
  DseOptions one, many;
  one.max_sectors = many.max_sectors = 8;
  many.threads = 3;
  std::string a, b;
  one.csv_sink = [&](const std::string& s) { a += s; };
  many.csv_sink = [&](const std::string& s) { b += s; };
  const DseResult r1 = run_dse(two_ops(), tech(), one), r3 = run_dse(two_ops(), tech(), many);
  EXPECT_EQ(a, b);
  ASSERT_EQ(r1.pareto.size(), r3.pareto.size());
  for (std::size_t i = 0; i < r1.pareto.size(); ++i) EXPECT_EQ(r1.pareto[i].id, r3.pareto[i].id);
}

}  // namespace
}  // namespace capsgen::memory

namespace capsgen::memory {
namespace {

TEST(Dse, ExtraSizes) {
  const std::vector<long long> ex{25 * 1024, 108 * 1024};
  EXPECT_EQ(fit_size(23040, ex), 25 * 1024);  // DESCNet's 25 KiB data memory
  EXPECT_EQ(fit_size(26000, ex), 32 * 1024);
  EXPECT_EQ(fit_size(100000, ex), 108 * 1024);
  EXPECT_EQ(fit_size(0, ex), 0);
  DseOptions opt;
  opt.max_sectors = 4;
  opt.extra_sizes = {3 * 1024};
  // Data range now 1, 2, 3 (extra), 4 KiB; 3 KiB leaves 3000 - 3072 < 0: no shared memory, skipped.
  // SEP data: 3000 B -> 3 KiB; sigma(3 KiB) = {2, 4} (24 >= 4).
  const DseResult r = run_dse(two_ops(), tech(), opt);
  EXPECT_EQ(r.best[kSep].bytes[kData], 3 * 1024);
  EXPECT_EQ(r.per_option[kHy], 2);
}

}  // namespace
}  // namespace capsgen::memory

namespace capsgen::memory {
namespace {

// Algorithms 1-2 on a profile with wider ranges: every HY shared memory holds each operation's
// overflow and is the smallest acceptable size that does; every sector count is in sigma(s).
TEST(Dse, AlgorithmBounds) {
  std::vector<OpProfile> ops(3);
  const long long u[3][3] = {{700, 9000, 0}, {20000, 300, 5000}, {3000, 0, 40000}};
  for (int i = 0; i < 3; ++i) {
    ops[std::size_t(i)].name = "op" + std::to_string(i);
    ops[std::size_t(i)].cycles = 1000 * (i + 1);
    for (int k = 0; k < 3; ++k) ops[std::size_t(i)].usage[std::size_t(k + 1)] = u[i][k];
  }
  DseOptions opt;
  opt.max_sectors = 16;
  opt.sample_every = 1;
  const DseResult r = run_dse(ops, tech(), opt);
  EXPECT_EQ(r.evaluated, (long long)r.sample.size());
  EXPECT_EQ(count_configs(ops, opt), r.evaluated);
  long long hy = 0;
  for (const auto& p : r.sample) {
    for (int m = 0; m < kMems; ++m) {
      if (p.bytes[m] == 0) continue;
      if (!option_pg(p.option)) {
        EXPECT_EQ(p.sectors[m], 1);
      } else {
        const auto pool = sector_pool(p.bytes[m], opt.max_sectors);
        EXPECT_NE(std::find(pool.begin(), pool.end(), p.sectors[m]), pool.end()) << p.id;
        EXPECT_LE(p.sectors[m], std::min<long long>(16, p.bytes[m] / 128));
      }
    }
    if (p.option != kHy) continue;
    ++hy;
    long long worst = 0;
    for (const auto& o : ops) {
      long long over = 0;
      for (int k = kData; k <= kAcc; ++k) over += std::max(0LL, o.usage[k] - p.bytes[k]);
      worst = std::max(worst, over);
    }
    EXPECT_GE(p.bytes[kShared], worst);
    EXPECT_LT(p.bytes[kShared] / 2, std::max(worst, 1024LL));  // the next power of two down is too small
    for (int k = kData; k <= kAcc; ++k) {
      long long lo = 1LL << 62, hi = 0;
      for (const auto& o : ops)
        if (o.usage[k] > 0) lo = std::min(lo, o.usage[k]), hi = std::max(hi, o.usage[k]);
      EXPECT_GE(p.bytes[k], pow2_size(lo));
      EXPECT_LE(p.bytes[k], pow2_size(hi));
    }
  }
  // Data 1..32 KiB (6 sizes), weight 1..16 KiB (5), acc 8..64 KiB (4): 120 tuples minus those
  // needing no shared memory (data 32 KiB, weight 16 KiB, acc 64 KiB: 1).
  EXPECT_EQ(hy, 6 * 5 * 4 - 1);
}

}  // namespace
}  // namespace capsgen::memory

// The exploration's streamed evaluation (gen/memory/streamed.hpp, docs/dse-memory.md section 7): its
// figures for a size tuple against the compiler's models computed independently — the stream timing,
// the access model (equal to the chip's counters in every chip run) and the frame check's PMU state
// (equal to the chip's sleep_ack edges) — and run_dse in streamed mode on a whole network.
#include <gtest/gtest.h>

#include <bit>
#include <mutex>
#include <numeric>

#include "../compiler/compile_fixture.hpp"
#include "compiler/access.hpp"
#include "compiler/frame_program.hpp"
#include "compiler/stream.hpp"
#include "memory/dse_config.hpp"
#include "memory/streamed.hpp"

namespace capsgen::memory {
namespace {

TechParams tech() { return load_tech(std::string(CAPSGEN_REPO_ROOT) + "/configs/tech/sram-32nm.yaml"); }

const test::Compiled& tiny() {
  static const test::Compiled c = test::compile("tiny-2x2", "capsnet-tiny", 1);
  return c;
}

// The figures of one configuration, recomputed from the compiler's models and the frame check.
void expect_figures_match(const AccelConfig& base, const isa::Program& prog, const std::vector<std::int32_t>& image,
                          const ConfigPoint& p) {
  const StreamedEvaluator ev(base, prog);
  std::array<std::vector<int>, kMems> pools;
  for (int m = 0; m < kMems; ++m)
    if (p.bytes[std::size_t(m)]) pools[std::size_t(m)] = {p.sectors[std::size_t(m)]};
  const StreamedFigures f = ev(p.option, p.bytes, pools);
  ASSERT_TRUE(f.ok) << f.why;

  const AccelConfig cfg = configured_preset(base, p);
  const StreamedProgram sp = stream_program(cfg, prog);
  const StreamTiming t = stream_timing(cfg, prog, sp);
  const FrameProgram fp = build_frame_program(cfg, prog, sp);
  const AccessModel a = count_accesses(cfg, sp, fp);
  std::vector<std::int32_t> dram = image;
  const FrameCheck ck = run_frame_program(cfg, prog, sp, fp.frames, dram);
  EXPECT_EQ(f.cycles, t.cycles);
  EXPECT_EQ(f.parts, (long long)sp.parts.size());
  EXPECT_EQ(std::accumulate(f.op_cycles.begin(), f.op_cycles.end(), 0LL), t.cycles);
  const std::array<const MemoryConfig*, kMems> mc = {&cfg.scratchpad.shared, &cfg.scratchpad.data, &cfg.scratchpad.weight,
                                                     &cfg.scratchpad.acc};
  for (int m = 0; m < kMems; ++m) {
    const std::size_t i = std::size_t(m);
    if (!p.bytes[i]) continue;
    const int c = m == kShared ? 3 : m - 1;
    const double wb = mc[i]->width_bits / 8.0;
    // SMP: the shared memory's accesses are those of its bytes and of its psum lanes (the acc range).
    MemoryAccesses ma = a.mem[std::size_t(c)];
    if (sp.map.smp && m == kShared) {
      const MemoryAccesses& lanes = a.mem[2];
      ma.eng_rd += lanes.eng_rd, ma.eng_wr += lanes.eng_wr, ma.dma_rd += lanes.dma_rd, ma.dma_wr += lanes.dma_wr;
      EXPECT_GT(lanes.eng_rd, 0) << "bias reads from the psum lanes";
      EXPECT_GT(lanes.dma_wr, 0) << "bias loads into the psum lanes";
    }
    EXPECT_DOUBLE_EQ(std::accumulate(f.rd_bytes[i].begin(), f.rd_bytes[i].end(), 0.0), double(ma.eng_rd + ma.dma_rd) * wb)
        << mem_name(m);
    EXPECT_DOUBLE_EQ(std::accumulate(f.wr_bytes[i].begin(), f.wr_bytes[i].end(), 0.0), double(ma.eng_wr + ma.dma_wr) * wb)
        << mem_name(m);
    ASSERT_EQ(f.sectors[i].size(), 1u);
    const SectorFigures& s = f.sectors[i][0];
    EXPECT_EQ(s.sectors, mc[i]->sectors);
    // Wake-ups: the frame check tracks every sector's state through the decoded PMU frames.
    EXPECT_EQ(s.wakes, std::accumulate(ck.sector_wakes[std::size_t(c)].begin(), ck.sector_wakes[std::size_t(c)].end(), 0LL))
        << mem_name(m);
    double awake = 0;
    for (std::size_t k = 0; k < sp.parts.size(); ++k) awake += double(t.part_cycles[k]) * std::popcount(fp.part_awake[k][std::size_t(c)]);
    awake += double(t.cycles - std::accumulate(t.part_cycles.begin(), t.part_cycles.end(), 0LL)) * std::popcount(fp.part_awake[0][std::size_t(c)]);
    EXPECT_DOUBLE_EQ(std::accumulate(s.awake_cycles.begin(), s.awake_cycles.end(), 0.0), awake) << mem_name(m);
    EXPECT_LT(awake, double(t.cycles) * s.sectors) << mem_name(m) << ": some sector sleeps some time";
    for (std::size_t o = 0; o < f.op_cycles.size(); ++o) {  // per sector, the same cycles
      EXPECT_DOUBLE_EQ(std::accumulate(s.sector_cycles[o].begin(), s.sector_cycles[o].end(), 0.0), s.awake_cycles[o]);
      for (std::size_t b = 0; b < s.sector_cycles[o].size(); ++b) {
        EXPECT_LE(s.sector_cycles[o][b], double(f.op_cycles[o]));
        EXPECT_EQ(s.sector_cycles[o][b] > 0, ((s.mask[o] >> b) & 1) != 0);
      }
    }
  }
}

TEST(Streamed, SepPgFiguresEqualTheCompilersModels) {
  ConfigPoint p;  // tiny-2x2's own memories
  p.option = kSepPg;
  p.bytes = {0, 2048, 4096, 1024};
  p.sectors = {0, 2, 4, 2};
  expect_figures_match(tiny().w.cfg, tiny().prog, tiny().image, p);
}

TEST(Streamed, SmpPgFiguresEqualTheCompilersModels) {
  const test::Compiled c = test::compile("tiny-2x2-smp", "capsnet-tiny", 1);
  ConfigPoint p;  // tiny-2x2-smp's own memory: 4 KiB of 32-bit words, 4 sectors
  p.option = kSmpPg;
  p.bytes = {4096, 0, 0, 0};
  p.sectors = {4, 0, 0, 0};
  expect_figures_match(c.w.cfg, c.prog, c.image, p);
}

TEST(Streamed, HyPgFiguresEqualTheCompilersModelsWithTheSharedMemoryInUse) {
  // tiny-2x2-hy's memories: conv1's output goes to the shared memory.
  const test::Compiled c = test::compile("tiny-2x2-hy", "capsnet-tiny", 1);
  ConfigPoint p;
  p.option = kHyPg;
  const ScratchpadConfig& s = c.w.cfg.scratchpad;
  p.bytes = {s.shared.size_kib * 1024LL, s.data.size_kib * 1024LL, s.weight.size_kib * 1024LL, s.acc.size_kib * 1024LL};
  p.sectors = {s.shared.sectors, s.data.sectors, s.weight.sectors, s.acc.sectors};
  expect_figures_match(c.w.cfg, c.prog, c.image, p);
  const StreamedFigures f = StreamedEvaluator(c.w.cfg, c.prog)(kHy, p.bytes, {});
  ASSERT_TRUE(f.ok) << f.why;
  EXPECT_GT(std::accumulate(f.wr_bytes[kShared].begin(), f.wr_bytes[kShared].end(), 0.0), 0.0);
}

TEST(Streamed, WhatTheChipCannotRunIsNotOk) {
  const StreamedEvaluator ev(tiny().w.cfg, tiny().prog);
  // SMP with tiny-2x2's 16-bit words as the stand-in: no 32-bit psum lane fits a word.
  const StreamedFigures smp = ev(kSmpPg, {8192, 0, 0, 0}, {{{2}, {}, {}, {}}});
  EXPECT_FALSE(smp.ok);
  EXPECT_NE(smp.why.find("scratchpad.shared.width_bits >= 32"), std::string::npos) << smp.why;
  // Smaller memories: the compiler cuts the network into more parts (not always slower: more parts
  // also overlap more of the DMA with compute).
  const StreamedFigures small = ev(kSep, {0, 1024, 1024, 1024}, {});
  const StreamedFigures own = ev(kSep, {0, 2048, 4096, 1024}, {});
  ASSERT_TRUE(small.ok && own.ok) << small.why << own.why;
  EXPECT_GT(small.parts, own.parts);
  const StreamedFigures odd = ev(kSepPg, {0, 2048, 4096, 1024}, {{{}, {2}, {1024}, {2}}});  // 1024 sectors: not whole words
  EXPECT_FALSE(odd.ok);
  EXPECT_NE(odd.why.find("sectors"), std::string::npos) << odd.why;
}

// run_dse in streamed mode: SMP skipped, every evaluated figure equal to evaluate_config's, an option
// with and without gating on the same sizes running the same cycles, and gating never raising the
// static energy of the same memories.
TEST(Streamed, RunDseOnANetwork) {
  const test::Compiled& c = tiny();
  const std::vector<OpProfile> ops = profiles_from(analyze_program(c.w.cfg, c.prog));
  const StreamedEvaluator ev(c.w.cfg, c.prog);
  ASSERT_EQ(ev.ops(), ops.size());
  DseOptions opt;
  opt.banks = 2;
  opt.max_sectors = 32;
  opt.word_bytes = {2, 2, 2, 4};
  opt.streamed = &ev;
  opt.threads = 2;
  std::vector<ConfigPoint> all;
  std::mutex mu;
  opt.sample_every = 1;
  const DseResult r = run_dse(ops, tech(), opt);
  EXPECT_EQ(r.evaluated, count_configs(ops, opt));
  EXPECT_EQ(r.per_option[kSmp] + r.per_option[kSmpPg], 0);
  EXPECT_GE(r.skipped, 2);
  EXPECT_EQ(r.evaluated - r.skipped, std::accumulate(r.per_option.begin(), r.per_option.end(), 0LL));
  ASSERT_TRUE(r.has_best[kSepPg] && r.has_best[kSep]);
  ASSERT_FALSE(r.pareto.empty());
  for (const ConfigPoint& p : r.sample) {
    const ConfigDetail d = evaluate_config(ops, tech(), opt, p);
    EXPECT_NEAR(d.point.energy_mj(), p.energy_mj(), 1e-12 + 1e-9 * p.energy_mj()) << p.id;
    EXPECT_NEAR(d.point.area_mm2, p.area_mm2, 1e-12) << p.id;
    EXPECT_GT(d.cycles, 0);
  }
  const ConfigDetail sep = evaluate_config(ops, tech(), opt, r.best[kSep]);
  ConfigPoint pg = r.best[kSep];
  pg.option = kSepPg;
  pg.sectors = {0, 2, 2, 2};
  const ConfigDetail gated = evaluate_config(ops, tech(), opt, pg);
  EXPECT_EQ(sep.cycles, gated.cycles);
  EXPECT_LE(gated.point.static_mj, sep.point.static_mj);
  EXPECT_GT(gated.point.wakeup_mj, 0);

  // Off-chip energy: the streamed program's DRAM traffic for each size tuple; ranked only with
  // objective_total, and then no option's best is worse in on-chip + off-chip energy.
  opt.offchip_rd_pj_per_byte = 100;
  opt.offchip_wr_pj_per_byte = 120;
  const DseResult onchip = run_dse(ops, tech(), opt);
  opt.objective_total = true;
  const DseResult total = run_dse(ops, tech(), opt);
  for (int o : {kSep, kSepPg, kHy, kHyPg}) {
    if (!onchip.has_best[o]) continue;
    const ConfigPoint& a = onchip.best[o];
    const ConfigPoint& b = total.best[o];
    EXPECT_GT(a.offchip_mj, 0);
    EXPECT_EQ(a.ranked_mj(), a.energy_mj());
    EXPECT_DOUBLE_EQ(b.ranked_mj(), b.energy_mj() + b.offchip_mj);
    EXPECT_LE(b.energy_mj() + b.offchip_mj, a.energy_mj() + a.offchip_mj) << option_name(o);
    const ConfigDetail d = evaluate_config(ops, tech(), opt, b);
    EXPECT_DOUBLE_EQ(d.point.offchip_mj, b.offchip_mj);
    EXPECT_DOUBLE_EQ(d.point.offchip_mj, (double(d.dram_read_bytes) * 100 + double(d.dram_write_bytes) * 120) * 1e-9);
  }
}

}  // namespace
}  // namespace capsgen::memory

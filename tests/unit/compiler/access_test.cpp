// The access model (gen/compiler/access.hpp): bank accesses per memory, sector and part, counted as
// capsgen_memsys counts them. tb_chip compares the model with the RTL's counters on every chip run
// (tests/rtl rtl_chip_*); here a hand-counted Gemm and the model's own consistency on whole networks.
#include <gtest/gtest.h>

#include "compile_fixture.hpp"
#include "compiler/access.hpp"
#include "compiler/frame_program.hpp"
#include "compiler/stream.hpp"

namespace capsgen {
namespace {

using test::Compiled;
using test::compile;
using test::preset;

// tiny-2x2: data 2 KiB of 16-bit words (2 codes per word) in 2 banks x 2 sectors, weight 4 KiB from
// element 2048, acc 1 KiB of 32-bit words (one psum code per word) from element 6144.
TEST(Access, HandCountedGemm) {
  const AccelConfig cfg = preset("tiny-2x2");
  StreamedProgram sp;
  sp.map = OnchipMap::from_config(cfg);
  ASSERT_EQ(sp.map.base[1], 2048);
  ASSERT_EQ(sp.map.base[2], 6144);
  isa::Gemm g;
  g.name = "hand";
  g.batch = 1;
  g.m_total = 3;
  g.m_block = 3;
  g.k_chunks = 2;
  g.n_tiles = 1;
  g.r_total = 3;  // chunk 1 holds one row
  g.n_total = 2;
  g.data.base = 0;  // vector m, chunk k at 3m + 2k: rows consecutive (vector walker)
  g.data.s_m = 3;
  g.data.s_k = 2;
  g.data.s_r = 1;
  g.tile.base = 2048;
  g.tile.s_k = 4;
  g.tile.s_r = 2;
  g.tile.s_c = 1;
  g.init.kind = isa::AccInit::Kind::kPerColumn;
  g.init.base = 6144;
  g.out.base = 100;  // vector m's two outputs at 100 + 2m: one record write each
  g.out.s_m = 2;
  g.out.s_o1 = 1;
  sp.parts.push_back({0, 0, g, {}, {}, {}});
  const AccessModel a = count_accesses(cfg, sp, FrameProgram{});
  // Data: six 2-element vector reads at 0, 2, 3, 5, 6, 8: words 1+1+2+2+1+1; three record writes.
  EXPECT_EQ(a.mem[0].eng_rd, 8);
  EXPECT_EQ(a.mem[0].eng_wr, 3);
  // Weight: rows 1 and 0 of chunk 0, row 0 of chunk 1 (row 1 is past r_total: no read); one word each.
  EXPECT_EQ(a.mem[1].eng_rd, 3);
  // Acc: a bias row of 2 psum codes (2 words) for each vector issued in chunk 0.
  EXPECT_EQ(a.mem[2].eng_rd, 6);
  EXPECT_EQ(a.mem[0].sector, (std::vector<long long>{11, 0}));
  EXPECT_EQ(a.mem[1].sector, (std::vector<long long>{3, 0, 0, 0}));
  EXPECT_EQ(a.mem[2].sector, (std::vector<long long>{6, 0}));
  EXPECT_EQ(a.parts.at(0).eng_rd, (std::array<long long, kOnchipMemories>{8, 3, 6, 0}));
  EXPECT_EQ(a.outside, 0);

  // The same Gemm split into a held part and its continuation writes nothing in the held part.
  isa::Gemm held = g;
  held.acc_hold = true;
  held.init.kind = isa::AccInit::Kind::kZero;
  sp.parts.assign(1, {0, 0, held, {}, {}, {}});
  const AccessModel h = count_accesses(cfg, sp, FrameProgram{});
  EXPECT_EQ(h.mem[0].eng_wr, 0);
  EXPECT_EQ(h.mem[2].eng_rd, 0);
  EXPECT_EQ(h.mem[0].eng_rd, 8);
}

// On whole networks: parts sum to the totals, sectors to every access, the DMA's accesses to the frame
// model's beats, nothing outside the memories.
TEST(Access, WholeNetworksAreConsistent) {
  for (const auto& [p, m] : {std::pair{"tiny-2x2", "capsnet-tiny"}, std::pair{"small-4x4", "capsnet-tiny"}}) {
    SCOPED_TRACE(std::string(p) + " " + m);
    const Compiled c = compile(p, m, 1);
    const StreamedProgram sp = stream_program(c.w.cfg, c.prog);
    const FrameProgram fp = build_frame_program(c.w.cfg, c.prog, sp);
    const AccessModel a = count_accesses(c.w.cfg, sp, fp);
    EXPECT_EQ(a.outside, 0);
    ASSERT_EQ(a.parts.size(), sp.parts.size());
    std::vector<std::int32_t> dram = c.image;
    dram.resize(std::size_t(c.prog.size), 0);
    const FrameCheck ck = run_frame_program(c.w.cfg, c.prog, sp, fp.frames, dram);
    long long dma_rd = 0, dma_wr = 0;
    for (int mem = 0; mem < kOnchipMemories; ++mem) {
      long long rd = 0, wr = 0, prd = 0, pwr = 0, sec = 0;
      for (const PartAccesses& x : a.parts) {
        rd += x.eng_rd[std::size_t(mem)];
        wr += x.eng_wr[std::size_t(mem)];
        prd += x.dma_rd[std::size_t(mem)];
        pwr += x.dma_wr[std::size_t(mem)];
      }
      const MemoryAccesses& t = a.mem[std::size_t(mem)];
      EXPECT_EQ(rd, t.eng_rd);
      EXPECT_EQ(wr, t.eng_wr);
      EXPECT_EQ(prd, t.dma_rd);
      EXPECT_EQ(pwr, t.dma_wr);
      for (long long s : t.sector) sec += s;
      EXPECT_EQ(sec, t.eng_rd + t.eng_wr + t.dma_rd + t.dma_wr);
      if (mem < 3) {
        EXPECT_GT(t.eng_rd, 0);
      }
      dma_rd += t.dma_rd;
      dma_wr += t.dma_wr;
    }
    EXPECT_EQ(dma_rd, ck.store_beats);
    EXPECT_EQ(dma_wr, ck.load_beats);
    EXPECT_EQ(a.mem[2].eng_wr, 0);  // nothing writes the acc memory but the DMA
  }
}

}  // namespace
}  // namespace capsgen

namespace capsgen {
namespace {

// With small sectors an engine access can span a word past its buffers (a bias row of `cols` psum
// codes, a `rows`-wide vector read): the PMU frame before each part must keep those sectors awake, and
// the frame model must accept the program (it checks every engine access's sectors). Found by the
// chip (error_o from the scratchpad's sleep check) on a 32-sector configuration the exploration chose.
TEST(Access, PmuKeepsEverySectorTheEngineSpansAwake) {
  for (const auto& [p, net] : {std::pair{"tiny-2x2", "capsnet-tiny"}, std::pair{"small-4x4", "capsnet-small"}}) {
    SCOPED_TRACE(p);
    const Compiled c = compile(p, net, 1);
    AccelConfig cfg = c.w.cfg;
    cfg.scratchpad.data.sectors = 8;
    cfg.scratchpad.weight.sectors = 16;
    cfg.scratchpad.acc.sectors = 32;
    validate_accel_config(cfg);
    const StreamedProgram sp = stream_program(cfg, c.prog);
    const FrameProgram fp = build_frame_program(cfg, c.prog, sp);
    const auto spans = engine_sectors(cfg, sp);
    ASSERT_EQ(fp.part_awake.size(), sp.parts.size());
    long long beyond = 0;  // parts whose engine spans reach a sector none of their moves touches
    for (std::size_t i = 0; i < sp.parts.size(); ++i)
      for (int m = 0; m < kOnchipMemories; ++m) {
        EXPECT_EQ(spans[i][std::size_t(m)] & ~fp.part_awake[i][std::size_t(m)], 0u) << "part " << i << " memory " << m;
        std::uint32_t moved = 0;
        const SectorMap sec(cfg, sp.map);
        for (const auto* list : {&sp.parts[i].loads, &sp.parts[i].stores})
          for (const Move& mv : *list)
            for_each_move_element(mv, [&](std::int64_t, std::int64_t a) {
              int mm = 0, s = 0;
              if (sec.of(a, mm, s) && mm == m) moved |= 1u << s;
            });
        beyond += (spans[i][std::size_t(m)] & ~moved) != 0;
      }
    std::vector<std::int32_t> dram = c.image;
    dram.resize(std::size_t(c.prog.size), 0);
    EXPECT_NO_THROW(run_frame_program(cfg, c.prog, sp, fp.frames, dram));
    RecordProperty(std::string("beyond_") + p, std::to_string(beyond));
    if (std::string(p) == "small-4x4") {
      EXPECT_GT(beyond, 0) << "the case this test is about does not occur any more";
    }
  }
}

}  // namespace
}  // namespace capsgen

// The frame program's packing (gen/isa/frames.hpp, docs/memory-system.md section 4): header, DMA and
// PMU payloads round-trip at their extremes and at random values, layouts do not overlap, and the
// engine payload is exactly the packed engine descriptor.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "isa/frames.hpp"

namespace capsgen::isa {
namespace {

// A frame of `kind` with every other field at its default.
Frame frame_of_kind(FrameKind kind) {
  Frame f;
  f.header.kind = kind;
  return f;
}

FrameGeometry geometry(int spm_bits = 17, int len_bits = 5, int size_bits = 2, int max_size = 3) {
  FrameGeometry g;
  g.spm_addr_bits = spm_bits;
  g.len_bits = len_bits;
  g.size_bits = size_bits;
  g.max_size = max_size;
  g.sectors[0] = 2;
  g.sectors[1] = 8;
  g.sectors[2] = 32;
  return g;
}

std::uint32_t top(int bits) { return bits >= 32 ? 0xFFFFFFFFu : (1u << bits) - 1; }

void no_overlap(const std::vector<PackedField>& l) {
  std::map<int, std::uint32_t> used;
  for (const PackedField& f : l) {
    ASSERT_GE(f.lsb, 0);
    ASSERT_LE(f.lsb + f.bits, 32) << f.name;
    const std::uint32_t m = top(f.bits) << f.lsb;
    EXPECT_EQ(used[f.word] & m, 0u) << f.name << " overlaps";
    used[f.word] |= m;
  }
}

TEST(Frames, LayoutsHaveNoOverlaps) {
  const FrameGeometry g = geometry();
  no_overlap(frame_header_layout());
  no_overlap(dma_frame_layout(g));
  no_overlap(pmu_frame_layout(g));
  EXPECT_EQ(frame_header_layout()[0].name, "kind");
  EXPECT_EQ(frame_header_layout()[0].lsb, 0);
  EXPECT_EQ(dma_frame_layout(g).size(), 15u);
  EXPECT_EQ(payload_words(FrameKind::kEngine, g), engine_descriptor_words());
  EXPECT_EQ(payload_words(FrameKind::kEnd, g), 0);
  FrameGeometry off = g;
  off.sectors[0] = off.sectors[1] = off.sectors[2] = 0;
  EXPECT_TRUE(pmu_frame_layout(off).empty());
  EXPECT_THROW(pack_frame(frame_of_kind(FrameKind::kPmu), off), std::invalid_argument);
}

Frame dma_frame(std::mt19937& rng, const FrameGeometry& g, bool extreme) {
  const auto r = [&](int bits) { return extreme ? top(bits) : std::uint32_t(rng()) & top(bits); };
  Frame f;
  f.header.kind = FrameKind::kDma;
  f.header.wait_engine = extreme || (rng() & 1);
  f.dma.store = extreme || (rng() & 1);
  f.dma.dram_addr = r(32);
  f.dma.spm_addr = r(g.spm_addr_bits);
  for (int i = 0; i < 3; ++i) {
    f.dma.count[i] = r(16);
    f.dma.dram_stride[i] = r(32);
    f.dma.spm_stride[i] = r(g.spm_addr_bits);
  }
  f.dma.burst = r(g.len_bits);
  f.dma.size = r(g.size_bits);
  f.dma.widen = extreme || (rng() & 1);
  return f;
}

TEST(Frames, DmaAndPmuFramesRoundTrip) {
  std::mt19937 rng(5);
  for (const FrameGeometry& g : {geometry(), geometry(13, 1, 1, 1), geometry(32, 8, 3, 6)})
    for (int t = 0; t < 200; ++t) {
      const bool extreme = t == 0;
      Frame d = dma_frame(rng, g, extreme);
      if (t == 1) d = frame_of_kind(FrameKind::kDma);  // all zeros but the counts
      std::size_t at = 0;
      const auto w = pack_frame(d, g);
      ASSERT_EQ(int(w.size()), 1 + payload_words(FrameKind::kDma, g));
      const Frame back = unpack_frame(w, at, g);
      EXPECT_EQ(at, w.size());
      EXPECT_EQ(back.header.kind, FrameKind::kDma);
      EXPECT_EQ(back.header.wait_engine, d.header.wait_engine);
      EXPECT_TRUE(back.dma == d.dma) << frame_text(d, g) << "\n" << frame_text(back, g);

      Frame p;
      p.header.kind = FrameKind::kPmu;
      p.pmu.wait = extreme || (rng() & 1);
      for (int m = 0; m < 3; ++m) p.pmu.awake[m] = extreme ? top(g.sectors[m]) : std::uint32_t(rng()) & top(g.sectors[m]);
      at = 0;
      EXPECT_TRUE(unpack_frame(pack_frame(p, g), at, g).pmu == p.pmu);

      Frame h;
      h.header.kind = FrameKind::kEngine;
      h.header.pending = true;
      h.header.wait_dma = extreme ? 0xFFFF : rng() & 0xFFFF;
      at = 0;
      const Frame hb = unpack_frame(pack_frame(h, g), at, g);
      EXPECT_EQ(hb.header.wait_dma, h.header.wait_dma);
      EXPECT_TRUE(hb.header.pending);
    }
}

TEST(Frames, EnginePayloadIsThePackedDescriptor) {
  const FrameGeometry g = geometry();
  EngineDescriptor d;
  d.kind = 1;
  d.a_count = 0xFFFFFFFFu;
  d.a_n = 7;
  d.o_base = 12345;
  d.relu = true;
  Frame f;
  f.header.kind = FrameKind::kEngine;
  f.header.wait_dma = 3;
  f.engine = d;
  const auto w = pack_frame(f, g);
  const auto e = pack_engine_descriptor(d);
  ASSERT_EQ(w.size(), e.size() + 1);
  EXPECT_TRUE(std::equal(e.begin(), e.end(), w.begin() + 1));
  EXPECT_EQ(w[0] & 3u, 0u);
  std::size_t at = 0;
  EXPECT_EQ(pack_engine_descriptor(unpack_frame(w, at, g).engine), e);
}

TEST(Frames, ProgramsEndWithTheEndFrameAndRejectOverflows) {
  const FrameGeometry g = geometry();
  std::mt19937 rng(9);
  std::vector<Frame> fs{dma_frame(rng, g, false), frame_of_kind(FrameKind::kPmu)};
  const auto w = pack_frames(fs, g);
  const auto back = unpack_frames(w, g);
  ASSERT_EQ(back.size(), 3u);
  EXPECT_EQ(back.back().header.kind, FrameKind::kEnd);
  auto truncated = w;
  truncated.pop_back();
  truncated.pop_back();
  EXPECT_THROW(unpack_frames(truncated, g), std::invalid_argument);
  Frame big = fs[0];
  big.dma.spm_addr = 1u << g.spm_addr_bits;
  EXPECT_THROW(pack_frame(big, g), std::invalid_argument);
  Frame wd = frame_of_kind(FrameKind::kEngine);
  wd.header.wait_dma = 1u << 16;
  EXPECT_THROW(pack_frame(wd, g), std::invalid_argument);
  Frame pm = frame_of_kind(FrameKind::kPmu);
  pm.pmu.awake[0] = 4;  // 2 sectors
  EXPECT_THROW(pack_frame(pm, g), std::invalid_argument);
}

}  // namespace
}  // namespace capsgen::isa

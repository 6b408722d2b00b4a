// The streamed program as a frame program (gen/compiler/frame_program.hpp, docs/memory-system.md section 4):
// Move lowering to DMA descriptor fields, and the reference model that runs the decoded frames must
// reproduce the flat program's memory and reject a loosened dependency or an early sleep.
#include <gtest/gtest.h>

#include "compiler/compiler.hpp"
#include "compiler/executor.hpp"
#include "compiler/frame_program.hpp"
#include "core/input_error.hpp"
#include "emit/dma.hpp"
#include "emit/memsys.hpp"
#include "compile_fixture.hpp"
#include "golden/fixed_model.hpp"
#include "golden/workload.hpp"

namespace capsgen {
namespace {

using test::Compiled;
using test::compile;
using test::model;
using test::preset;
using test::run_flat;

// A hand-made image: an 8-bit region of 100 codes, then a 32-bit (psum) region of 10 codes, then 8-bit again.
struct Hand {
  isa::Program prog;
  StreamedProgram sp;
  isa::FrameGeometry g;
  Hand() {
    prog.regions.push_back({"a", 0, {100}, 8});
    prog.regions.push_back({"bias", 100, {10}, 25});
    prog.regions.push_back({"b", 110, {50}, 8});
    prog.size = 160;
    g.spm_addr_bits = 13;
    g.len_bits = 5;
    g.size_bits = 2;
    g.max_size = 2;
  }
};

TEST(Frames, DramBytesCountCodeWidths) {
  Hand h;
  const DramBytes b(h.prog, h.sp);
  EXPECT_EQ(b.byte_of(99), 99);
  EXPECT_EQ(b.byte_of(100), 100);
  EXPECT_EQ(b.byte_of(101), 104);
  EXPECT_EQ(b.byte_of(110), 140);
  EXPECT_EQ(b.total_bytes(), 190);
  EXPECT_EQ(b.element_at(104), 101);
  EXPECT_EQ(b.element_at(105), -1);
  EXPECT_EQ(b.element_at(141), 111);
}

TEST(Frames, LowersMovesToBytesAndElements) {
  Hand h;
  const DramBytes b(h.prog, h.sp);
  Move m;  // 8-bit codes into the data memory: 2 levels
  m.dram = 10;
  m.chip = 64;
  m.dims = {{4, 1, 1}, {3, 20, 4}};
  isa::DmaFields f = lower_move(m, b, h.g, "t");
  EXPECT_EQ(f.dram_addr, 10u);
  EXPECT_EQ(f.spm_addr, 64u);
  EXPECT_EQ(f.size, 0u);
  EXPECT_EQ(f.count[0], 4u);
  EXPECT_EQ(f.count[1], 3u);
  EXPECT_EQ(f.count[2], 1u);
  EXPECT_EQ(f.dram_stride[1], 20u);
  EXPECT_EQ(f.spm_stride[1], 4u);
  Move acc;  // psum codes into acc lanes: bytes x4, elements x1
  acc.mem = Onchip::kAcc;
  acc.dram = 102;
  acc.chip = 7000;
  acc.dims = {{4, 2, 1}};
  f = lower_move(acc, b, h.g, "t");
  EXPECT_EQ(f.dram_addr, 108u);
  EXPECT_EQ(f.dram_stride[0], 8u);
  EXPECT_EQ(f.spm_stride[0], 1u);
  EXPECT_EQ(f.size, 2u);
  EXPECT_FALSE(f.widen);
  Move w = m;  // 8-bit init codes widened into acc lanes
  w.mem = Onchip::kAcc;
  w.widen = true;
  f = lower_move(w, b, h.g, "t");
  EXPECT_EQ(f.size, 0u);
  EXPECT_TRUE(f.widen);
  EXPECT_EQ(f.dram_addr, 10u);
  Move neg = m;  // negative on-chip stride: two's complement in 13 bits
  neg.dims = {{4, 1, -1}};
  f = lower_move(neg, b, h.g, "t");
  EXPECT_EQ(f.spm_stride[0], (1u << 13) - 1);
}

TEST(Frames, RejectsWhatTheDmaCannotExpress) {
  Hand h;
  const DramBytes b(h.prog, h.sp);
  Move m;
  m.dram = 0;
  m.chip = 0;
  m.dims = {{2, 1, 1}, {2, 2, 2}, {2, 4, 4}, {2, 8, 8}};
  try {
    lower_move(m, b, h.g, "part 3 load 1");
    FAIL();
  } catch (const StreamError& e) {
    EXPECT_NE(std::string(e.what()).find("part 3 load 1"), std::string::npos);
  }
  m.dims = {{70000, 1, 1}};
  try {  // past the image (and a count beyond 16 bits): the message names the move and its span
    lower_move(m, b, h.g, "part 3 load 2");
    FAIL();
  } catch (const StreamError& e) {
    EXPECT_NE(std::string(e.what()).find("part 3 load 2: DRAM element"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("outside the image (the move from 0 spans [0, 69999]"), std::string::npos) << e.what();
  }
  m.dims = {{2, 1, 1 << 13}};
  EXPECT_THROW(lower_move(m, b, h.g, "t"), StreamError);  // on-chip stride beyond 13 bits
  m.dims = {{20, 1, 1}};
  m.dram = 95;
  EXPECT_THROW(lower_move(m, b, h.g, "t"), StreamError);  // across the 8-bit/32-bit regions
  m.dram = 100;
  m.dims = {{2, 1, 1}};
  EXPECT_THROW(lower_move(m, b, h.g, "t"), StreamError);  // psum codes into the data memory
  m.mem = Onchip::kAcc;
  m.dram = 0;
  EXPECT_THROW(lower_move(m, b, h.g, "t"), StreamError);  // 8-bit codes into acc without widening
  m.chip = 1 << 13;
  m.dram = 100;
  EXPECT_THROW(lower_move(m, b, h.g, "t"), StreamError);  // on-chip address beyond 13 bits
}

struct Case {
  const char* preset;
  const char* model;
  int seed;
};

class FrameModelTest : public ::testing::TestWithParam<Case> {};

TEST_P(FrameModelTest, DecodedFramesReproduceTheFlatProgram) {
  const Case tc = GetParam();
  const Compiled c = compile(tc.preset, tc.model, tc.seed);
  const std::vector<std::int32_t> flat = run_flat(c);
  const StreamedProgram sp = stream_program(c.w.cfg, c.prog);
  const FrameProgram fp = build_frame_program(c.w.cfg, c.prog, sp);
  const auto words = isa::pack_frames(fp.frames, fp.geometry);
  EXPECT_EQ((long long)words.size(), fp.words());
  const auto frames = isa::unpack_frames(words, fp.geometry);
  ASSERT_EQ(frames.size(), fp.frames.size());
  std::vector<std::int32_t> dram = c.image;
  const FrameCheck ck = run_frame_program(c.w.cfg, c.prog, sp, frames, dram);
  EXPECT_EQ(ck.engine, (long long)sp.parts.size());
  EXPECT_EQ(ck.engine, fp.engine);
  EXPECT_EQ(ck.dma, fp.dma);
  EXPECT_GT(ck.sleeps, 0);
  for (std::size_t a = 0; a < flat.size(); ++a) ASSERT_EQ(dram[a], flat[a]) << "DRAM element " << a;
  std::printf("%s/%s: %lld frames (%lld engine, %lld pending, %lld DMA, %lld PMU), %lld words, %lld sector sleeps\n",
              tc.preset, tc.model, (long long)fp.frames.size(), fp.engine, fp.pending, fp.dma, fp.pmu, fp.words(), ck.sleeps);
}

INSTANTIATE_TEST_SUITE_P(Presets, FrameModelTest,
                         ::testing::Values(Case{"tiny-2x2", "capsnet-tiny", 5}, Case{"small-4x4", "capsnet-small", 6},
                                           Case{"tiny-2x2-smp", "capsnet-small", 8},
                                           Case{"tiny-2x2-hy-lanes", "capsnet-small", 9},
                                           Case{"capsacc-16x16", "capsnet-mnist", 7},
                                           Case{"capsacc-16x16", "tests/data/networks/last-chunk-past-image", 4}));

TEST(Frames, ModelRejectsALoosenedWaitOrAnEarlySleep) {
  const Compiled c = compile("tiny-2x2", "capsnet-tiny", 5);
  const StreamedProgram sp = stream_program(c.w.cfg, c.prog);
  const FrameProgram fp = build_frame_program(c.w.cfg, c.prog, sp);
  // Loosen one wait_dma: the engine frame of a part with loads may start before its last load.
  bool loosened = false;
  std::uint32_t dma_before = 0;
  for (std::size_t i = 1; i < fp.frames.size() && !loosened; ++i) {
    dma_before += fp.frames[i].header.kind == isa::FrameKind::kDma;
    if (fp.frames[i].header.kind != isa::FrameKind::kEngine || dma_before <= fp.frames[i].header.wait_dma) continue;
    auto frames = fp.frames;
    frames[i].header.wait_dma += 1;
    std::vector<std::int32_t> dram = c.image;
    try {
      run_frame_program(c.w.cfg, c.prog, sp, frames, dram);
      ADD_FAILURE() << "engine frame " << i << " with wait_dma + 1 accepted";
    } catch (const StreamError& e) {
      EXPECT_NE(std::string(e.what()).find("wait_dma"), std::string::npos) << e.what();
    }
    loosened = true;
  }
  EXPECT_TRUE(loosened);
  // Move a sleep earlier, one frame at a time: before long it sleeps a sector a frame still uses.
  int sleeps_tried = 0;
  for (std::size_t i = 2; i < fp.frames.size() && sleeps_tried < 5; ++i) {
    const isa::Frame& f = fp.frames[i];
    if (f.header.kind != isa::FrameKind::kPmu || f.pmu.wait) continue;
    // A sleep: drops a sector the previous PMU frame kept awake.
    std::size_t prev = i - 1;
    while (prev > 0 && fp.frames[prev].header.kind != isa::FrameKind::kPmu) --prev;
    bool drops = false;
    for (int m = 0; m < 3; ++m) drops |= (fp.frames[prev].pmu.awake[m] & ~f.pmu.awake[m]) != 0;
    if (!drops) continue;
    ++sleeps_tried;
    bool rejected = false;
    for (std::size_t to = i; to-- > 1 && !rejected;) {
      auto frames = fp.frames;
      const isa::Frame moved = frames[i];
      frames.erase(frames.begin() + long(i));
      frames.insert(frames.begin() + long(to), moved);
      std::vector<std::int32_t> dram = c.image;
      try {
        run_frame_program(c.w.cfg, c.prog, sp, frames, dram);
      } catch (const StreamError& e) {
        const std::string w = e.what();
        EXPECT_TRUE(w.find("sleep") != std::string::npos || w.find("nothing defined") != std::string::npos ||
                    w.find("barrier") != std::string::npos)
            << w;
        rejected = true;
      }
    }
    EXPECT_TRUE(rejected) << "sleep frame " << i;
  }
  EXPECT_GT(sleeps_tried, 0);
}


// The store beats the frame model records are the chip's off-chip writes: one per element a store
// frame moves, in DMA order, and replaying them onto the initial DRAM gives the final DRAM.
TEST(Frames, StoreBeatsReplayToTheFinalDram) {
  const Compiled c = compile("tiny-2x2", "capsnet-tiny", 3);
  const StreamedProgram sp = stream_program(c.w.cfg, c.prog);
  const FrameProgram fp = build_frame_program(c.w.cfg, c.prog, sp);
  std::vector<std::int32_t> dram = c.image;
  dram.resize(std::size_t(c.prog.size), 0);
  const std::vector<std::int32_t> before = dram;
  std::vector<StoreBeat> beats;
  const FrameCheck ck = run_frame_program(c.w.cfg, c.prog, sp, fp.frames, dram, &beats);
  ASSERT_EQ((long long)beats.size(), ck.store_elements);
  EXPECT_GT(ck.load_elements, ck.store_elements);
  const DramBytes bytes(c.prog, sp);
  std::vector<std::int32_t> replay = before;
  long long last_dma = -1;
  for (const StoreBeat& b : beats) {
    EXPECT_GE(b.dma, last_dma);  // in DMA order
    last_dma = b.dma;
    EXPECT_EQ(fp.frames.at(b.frame).header.kind, isa::FrameKind::kDma);
    EXPECT_TRUE(fp.frames.at(b.frame).dma.store);
    EXPECT_EQ(bytes.byte_of(b.element), b.byte);
    EXPECT_EQ(bytes.code_bytes(b.element), b.bytes);
    replay.at(std::size_t(b.element)) = b.value;
  }
  EXPECT_EQ(replay, dram);
}

// The chip's emitter derives the frame fields' widths from its own modules (capsgen_dma's ports, the
// memories' sectors); the compiler packs with its own derivation: they must agree wherever the chip is
// generated (capsgen_memsys supported): the presets and variants of them in sectors, power gating,
// word widths, memory sizes and burst length.
TEST(Frames, GeometryEqualsTheChipEmitters) {
  std::vector<AccelConfig> cfgs;
  for (const char* p : {"tiny-2x2", "small-4x4", "capsacc-16x16"}) {
    const AccelConfig base = preset(p);
    cfgs.push_back(base);
    AccelConfig c = base;
    c.scratchpad.power_gating = false;
    cfgs.push_back(c);
    c = base;
    c.scratchpad.data.sectors = 1;
    c.scratchpad.weight.sectors = 8;
    c.scratchpad.acc.sectors = 1;
    c.offchip.max_burst = 31;
    cfgs.push_back(c);
    c = base;
    c.scratchpad.weight.width_bits = 128;
    c.scratchpad.acc.width_bits = 64;
    c.scratchpad.data.size_kib *= 2;
    c.offchip.max_burst = 1;
    cfgs.push_back(c);
  }
  int chips = 0;
  for (const AccelConfig& cfg : cfgs) {
    SCOPED_TRACE(cfg.name);
    try {
      validate_accel_config(cfg);
    } catch (const InputError&) {
      continue;
    }
    if (!emit::memsys_unsupported_reason(cfg).empty()) continue;
    ++chips;
    const isa::FrameGeometry a = isa::frame_geometry(cfg);
    const emit::DmaGeometry b = emit::dma_geometry(cfg);
    EXPECT_EQ(a.dram_addr_bits, emit::kDmaDramAddrBits);
    EXPECT_EQ(a.count_bits, emit::kDmaCountBits);
    EXPECT_EQ(a.spm_addr_bits, b.spm_addr_bits);
    EXPECT_EQ(a.len_bits, b.len_bits);
    EXPECT_EQ(a.size_bits, b.size_bits);
    EXPECT_EQ(a.max_size, b.max_size);
  }
  EXPECT_GE(chips, 8);
}

}  // namespace
}  // namespace capsgen

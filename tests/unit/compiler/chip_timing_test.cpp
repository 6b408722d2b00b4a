// The chip's timing model (gen/compiler/chip_timing.hpp): hand-worked frame programs whose cycles
// follow from the RTL's rules (docs/rtl-chip.md "Timing model"), and a compiled network whose
// figures must agree with the frame model's and the engine's cycle model.
#include <gtest/gtest.h>

#include "compile_fixture.hpp"
#include "compiler/access.hpp"
#include "compiler/chip_timing.hpp"
#include "compiler/frame_program.hpp"
#include "compiler/stream.hpp"
#include "dram/dram_spec.hpp"

namespace capsgen {
namespace {

using test::compile;
using test::Compiled;
using test::preset;

// tiny-2x2 with a minimum read latency long enough that every burst's data is due at its request
// cycle + latency (the DDR3 chip completes a 32-byte burst in a few of the preset's 10 ns cycles).
AccelConfig slow_port() {
  AccelConfig cfg = preset("tiny-2x2");
  cfg.offchip.latency_cycles = 40;
  return cfg;
}

isa::Frame dma_frame(bool store, std::uint32_t words, const isa::FrameGeometry& g) {
  isa::Frame f;
  f.header.kind = isa::FrameKind::kDma;
  f.dma.store = store;
  f.dma.dram_addr = 4096;
  f.dma.spm_addr = 0;
  f.dma.count[0] = words;
  f.dma.dram_stride[0] = 1u << g.max_size;  // whole words, contiguous: bursts of max_burst beats
  f.dma.spm_stride[0] = 1u << g.max_size;
  f.dma.size = std::uint32_t(g.max_size);
  return f;
}

isa::Frame end_frame() {
  isa::Frame f;
  f.header.kind = isa::FrameKind::kEnd;
  return f;
}

ChipTiming run(const AccelConfig& cfg, const std::vector<isa::Frame>& frames) {
  StreamedProgram sp;
  sp.map = OnchipMap::from_config(cfg);
  FrameProgram fp;
  fp.geometry = checked_frame_geometry(cfg);
  fp.frames = frames;
  return chip_timing(cfg, sp, fp, dram::offchip_dram(cfg.offchip.dram));
}

// Fetching a frame: the header request, the header a cycle later, then one payload word per cycle.
long long fetch(isa::FrameKind k, const isa::FrameGeometry& g) {
  const int words = isa::payload_words(k, g);
  return words > 0 ? words + 3 : 2;
}

TEST(ChipTiming, HandWorkedLoad) {
  const AccelConfig cfg = slow_port();
  const isa::FrameGeometry g = checked_frame_geometry(cfg);
  const long long k = 20, latency = cfg.offchip.latency_cycles;
  const ChipTiming t = run(cfg, {dma_frame(false, std::uint32_t(k), g), end_frame()});
  // Taken in cycle F (the fetch's length); bursts requested from F+1, the first beat F+1+latency, a
  // beat per cycle, each written to the SPM the cycle after; the DMA finishes the cycle after the
  // last write (F+latency+k+2), done_o the next, the outstanding count is 0 a cycle later and the
  // end frame finishes the program then.
  const long long f = fetch(isa::FrameKind::kDma, g);
  EXPECT_EQ(t.cycles, f + latency + k + 5);
  EXPECT_EQ(t.read_beats, k);
  EXPECT_EQ(t.write_beats, 0);
  EXPECT_EQ(t.classes.fetch, f + fetch(isa::FrameKind::kEnd, g));
  EXPECT_EQ(t.classes.dma, 1);
  EXPECT_EQ(t.classes.sum(), t.cycles);
  EXPECT_EQ(t.dram.reads, (unsigned long long)(k * (1 << g.max_size) / 8));  // 8-byte column accesses of the x8 chip
}

TEST(ChipTiming, HandWorkedStore) {
  const AccelConfig cfg = slow_port();
  const isa::FrameGeometry g = checked_frame_geometry(cfg);
  const long long k = 20;
  const ChipTiming t = run(cfg, {dma_frame(true, std::uint32_t(k), g), end_frame()});
  // SPM reads from F+1 (data a cycle later into the FIFO), write beats from F+3, one per cycle (the
  // posted writes never fill the DRAM's backlog); the last beat in F+k+2, finish F+k+3, done_o F+k+4,
  // the program's last cycle F+k+5.
  const long long f = fetch(isa::FrameKind::kDma, g);
  EXPECT_EQ(t.cycles, f + k + 6);
  EXPECT_EQ(t.write_beats, k);
  EXPECT_EQ(t.classes.drain, t.cycles - f - 1 - fetch(isa::FrameKind::kEnd, g));
  EXPECT_EQ(t.dram.writes, (unsigned long long)(k * (1 << g.max_size) / 8));
}

// A DMA frame waits for the one before it (one descriptor at a time): the second starts the cycle
// the first's done_o shows, k + 4 cycles after the first was taken, plus its own fetch.
TEST(ChipTiming, SecondDescriptorWaitsForTheFirst) {
  const AccelConfig cfg = slow_port();
  const isa::FrameGeometry g = checked_frame_geometry(cfg);
  const long long k = 20;
  const ChipTiming one = run(cfg, {dma_frame(true, std::uint32_t(k), g), end_frame()});
  const ChipTiming two = run(cfg, {dma_frame(true, std::uint32_t(k), g), dma_frame(true, std::uint32_t(k), g), end_frame()});
  const long long f = fetch(isa::FrameKind::kDma, g);
  EXPECT_EQ(two.classes.dma_busy, (k + 4) - (1 + f));  // the first's run less the second's fetch
  EXPECT_EQ(two.cycles, one.cycles + k + 4);
}

// A barrier on a sector the prefetch before it put to sleep waits W + 2 cycles (docs/rtl-pmu.md).
TEST(ChipTiming, BarrierAfterSleepWaitsForTheWakeUp) {
  const AccelConfig cfg = preset("tiny-2x2");
  const isa::FrameGeometry g = checked_frame_geometry(cfg);
  ASSERT_GT(g.sectors[0], 0);
  isa::Frame sleep;
  sleep.header.kind = isa::FrameKind::kPmu;  // every sector asleep
  isa::Frame wake = sleep;
  wake.pmu.wait = true;
  wake.pmu.awake[0] = 1;  // data sector 0
  const ChipTiming t = run(cfg, {sleep, wake, end_frame()});
  const long long w = cfg.scratchpad.wakeup_cycles, f = fetch(isa::FrameKind::kPmu, g);
  EXPECT_EQ(t.classes.pmu_wait, w + 2);
  EXPECT_EQ(t.classes.pmu, 2);
  EXPECT_EQ(t.cycles, 2 * f + 2 + (w + 2) + fetch(isa::FrameKind::kEnd, g) + 1);
}

// A compiled network: the beats are the frame model's, the engine's cycles its cycle model's, every
// frame issues in one cycle and the classes add up.
TEST(ChipTiming, CompiledNetworkAgreesWithTheFrameModel) {
  const Compiled c = compile("tiny-2x2", "capsnet-tiny", 3);
  const StreamedProgram sp = stream_program(c.w.cfg, c.prog);
  const FrameProgram fp = build_frame_program(c.w.cfg, c.prog, sp);
  std::vector<std::int32_t> dram = c.image;
  const FrameCheck ck = run_frame_program(c.w.cfg, c.prog, sp, fp.frames, dram);
  const ChipTiming t = chip_timing(c.w.cfg, sp, fp, dram::offchip_dram(c.w.cfg.offchip.dram));
  EXPECT_EQ(t.read_beats, ck.load_beats);
  EXPECT_EQ(t.write_beats, ck.store_beats);
  long long engine = 0, fetches = 0;
  for (const Part& p : sp.parts) engine += part_engine_cycles(c.w.cfg, p);
  for (const isa::Frame& f : fp.frames) fetches += fetch(f.header.kind, fp.geometry);
  EXPECT_EQ(t.engine_cycles, engine);
  EXPECT_EQ(t.classes.fetch, fetches);
  EXPECT_EQ(t.classes.engine, fp.engine);
  EXPECT_EQ(t.classes.dma, fp.dma);
  EXPECT_EQ(t.classes.pmu, fp.pmu);
  EXPECT_EQ(t.classes.sum(), t.cycles);
  // Slower than the engine alone, and than the stream model without DRAM latency.
  EXPECT_GT(t.cycles, engine);
  EXPECT_GT(t.cycles, stream_timing(c.w.cfg, c.prog, sp).cycles);
}

TEST(ChipTiming, GemmAccessesCarryTheirEngineCycles) {
  // Every Gemm part's accesses lie within the part's modelled cycles, the writer's one per cycle
  // (records in order); activation passes and fills stay unscheduled (spread over their part).
  const Compiled c = compile("capsacc-16x16", "capsnet-tiny", 3);
  const StreamedProgram sp = stream_program(c.w.cfg, c.prog);
  int gemms = 0;
  for (std::size_t p = 0; p < sp.parts.size(); ++p) {
    const std::vector<EngineAccess> trace = engine_access_trace(c.w.cfg, sp, p);
    const bool gemm = std::holds_alternative<isa::Gemm>(sp.parts[p].op);
    const long long cycles = part_engine_cycles(c.w.cfg, sp.parts[p]);
    long long last_write = 0;
    for (const EngineAccess& a : trace) {
      if (!gemm) {
        EXPECT_EQ(a.cycle, -1) << "part " << p;
        continue;
      }
      EXPECT_GE(a.cycle, 1) << "part " << p;
      EXPECT_LE(a.cycle, cycles) << "part " << p;
      if (a.write) {
        EXPECT_GT(a.cycle, last_write) << "part " << p;
        last_write = a.cycle;
      }
    }
    gemms += gemm;
  }
  EXPECT_GT(gemms, 3);
}

TEST(ChipTiming, EngineWriteWaitsEqualTheChipsOnCapsnetTiny) {
  // The cycles the engine's writes wait for a bank its own reads use: the chip's wr_wait counter
  // on these runs (`capsgen sim --memory dram --model models/capsnet-tiny.yaml`, "write port" in the
  // report: 140 on tiny-2x2, 20 on capsacc-16x16), too few to make a part longer.
  for (const auto& [preset_name, waits] : {std::pair<const char*, long long>{"tiny-2x2", 140}, {"capsacc-16x16", 20}}) {
    const Compiled c = compile(preset_name, "capsnet-tiny", 3);
    const StreamedProgram sp = stream_program(c.w.cfg, c.prog);
    const FrameProgram fp = build_frame_program(c.w.cfg, c.prog, sp);
    const ChipTiming t = chip_timing(c.w.cfg, sp, fp, dram::offchip_dram(c.w.cfg.offchip.dram));
    EXPECT_EQ(t.engine_write_waits, waits) << preset_name;
    EXPECT_EQ(t.engine_late, 0) << preset_name;
  }
}

}  // namespace
}  // namespace capsgen

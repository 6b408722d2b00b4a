// The engine's cycle model (isa::engine_timing) on cases worked out by hand from the engine's
// documented timing (docs/rtl-engine.md "Timing and throughput"). The model's agreement with the RTL
// itself is checked on every descriptor the engine's block test runs (tb/engine_tb.cpp asserts
// measured == modelled cycles and stall cycles), and on whole compiled networks in test_compiler.
#include <gtest/gtest.h>

#include <algorithm>

#include "isa/engine_timing.hpp"

namespace capsgen::isa {
namespace {

// An affine Gemm: `batch` x `m_total` vectors of r_total elements, n_total outputs.
EngineDescriptor affine(int m_total, int m_block, int k_chunks, int n_tiles, int n_total, int r_total) {
  EngineDescriptor d;
  d.kind = 0;
  d.gather.batch = 1;
  d.gather.m_total = static_cast<std::uint16_t>(m_total);
  d.gather.m_block = static_cast<std::uint16_t>(m_block);
  d.gather.k_chunks = static_cast<std::uint16_t>(k_chunks);
  d.gather.r_total = static_cast<std::uint16_t>(r_total);
  d.n_tiles = static_cast<std::uint16_t>(n_tiles);
  d.n_total = static_cast<std::uint16_t>(n_total);
  return d;
}

TEST(EngineTiming, OneBlockOneTileByHand) {
  // 2x2 array, 4 vectors of 2 elements, 2 outputs. Gather: elements in cycles 1..8, the block is
  // readable in 10 (written in 9, committed). Tile loaded in 1..2, ready from 3. Vectors issued in
  // 10..13; each reaches the output FIFO 1 + (2 + 2) + 5 = 10 cycles later (20..23); the writer
  // stores 2 elements per record: 20-21, 22-23, 24-25, 26-27; done the cycle after the last pop.
  const EngineTiming t = engine_timing(affine(4, 4, 1, 1, 2, 2), {2, 2, false, 8});
  EXPECT_EQ(t.cycles, 29);
  EXPECT_EQ(t.stall_data, 9);  // the streamer runs from cycle 1, data is there in 10
  EXPECT_EQ(t.stall_tile, 0);
  EXPECT_EQ(t.stall_out, 0);
  // A pipelined PE adds one array cycle.
  EXPECT_EQ(engine_timing(affine(4, 4, 1, 1, 2, 2), {2, 2, true, 8}).cycles, 30);
}

TEST(EngineTiming, ScheduleOfTheHandWorkedGemm) {
  // The Gemm above: where each port acts (the chip's timing model lays the memory accesses there).
  GemmSchedule when;
  const EngineTiming t = engine_timing(affine(4, 4, 1, 1, 2, 2), {2, 2, false, 8}, &when);
  EXPECT_EQ(t.cycles, 29);
  EXPECT_EQ(when.step_data, (std::vector<long long>{1}));
  EXPECT_EQ(when.tile_load, (std::vector<long long>{1}));
  EXPECT_EQ(when.issue, (std::vector<long long>{10, 11, 12, 13}));
  EXPECT_EQ(when.record, (std::vector<long long>{20, 22, 24, 26}));
  // Two chunks of 2 rows: the second chunk's block goes to the other staging buffer, from the cycle
  // after the one the first block's last element (cycle 8) leaves free; only the last chunk's
  // vectors make records.
  GemmSchedule two;
  engine_timing(affine(4, 4, 2, 1, 2, 4), {2, 2, false, 8}, &two);
  EXPECT_EQ(two.step_data, (std::vector<long long>{1, 10}));
  EXPECT_EQ(two.tile_load.size(), 2u);
  EXPECT_EQ(two.issue.size(), 8u);
  EXPECT_EQ(std::count(two.record.begin(), two.record.begin() + 4, -1), 4);
  EXPECT_EQ(std::count(two.record.begin() + 4, two.record.end(), -1), 0);
}

TEST(EngineTiming, VectorWideGatherStagesAVectorPerCycle) {
  // 4x4 array, 64 vectors of 4 elements used once (one tile): the element-wise gather needs 4
  // cycles per vector, the vector-wide one 1, so the Gemm drops from about 4 to about 1 cycle per
  // vector.
  EngineDescriptor d = affine(64, 16, 1, 1, 1, 4);
  const EngineTiming elem = engine_timing(d, {4, 4, false, 8});
  d.v_mode = true;
  d.v_len = 4;
  const EngineTiming vec = engine_timing(d, {4, 4, false, 8});
  EXPECT_GE(elem.cycles, 64 * 4);
  EXPECT_LE(vec.cycles, 64 + 40);
  EXPECT_GT(elem.stall_data, 3 * 64 - 40);
}

TEST(EngineTiming, ShortBlocksWaitForTileLoads) {
  // 4x4 array, 2 tiles per chunk, 1 vector per block: each tile costs `rows` cycles, so the
  // streamer waits rows - 1 cycles before each tile but the first.
  const EngineTiming one = engine_timing(affine(1, 1, 1, 2, 8, 4), {4, 4, false, 8});
  EXPECT_EQ(one.stall_tile, 4 - 1);
  // Blocks of at least `rows` vectors hide the next tile's load completely.
  const EngineTiming many = engine_timing(affine(8, 8, 1, 2, 8, 4), {4, 4, false, 8});
  EXPECT_EQ(many.stall_tile, 0);
}

TEST(EngineTiming, WriteBoundGemmWaitsForCredits) {
  // 1 element per vector on a 1-row array with 8 columns, blocks of 8 vectors: the gather and the
  // streamer manage a vector per cycle, the writer one per 8 cycles, so the streamer waits for FIFO
  // credits once the 16 records in flight are promised, and the Gemm takes about 8 cycles per vector
  // (plus the first block's gather and the pipeline latency).
  const EngineTiming t = engine_timing(affine(200, 8, 1, 1, 8, 1), {1, 8, false, 8});
  EXPECT_GT(t.stall_out, 0);
  EXPECT_GE(t.cycles, 200 * 8);
  EXPECT_LE(t.cycles, 200 * 8 + 40);
}

TEST(EngineTiming, StridedTileLoadsColumnByColumn) {
  // A strided tile reads each row holding elements once per valid column: 4 rows x 3 columns = 12
  // cycles instead of 4 before the first vector may start.
  EngineDescriptor d = affine(1, 1, 1, 1, 3, 4);
  const EngineTiming plain = engine_timing(d, {4, 4, false, 8});
  d.t_strided = true;
  const EngineTiming strided = engine_timing(d, {4, 4, false, 8});
  // The single vector waits on its data (4 elements) in both; the strided tile is ready 8 cycles later.
  EXPECT_EQ(strided.cycles - plain.cycles, (1 + 12) - (4 + 2));
}

TEST(EngineTiming, ActivationPassesByUnitLatency) {
  EngineDescriptor d;
  d.kind = 1;
  d.a_count = 10;
  d.a_n = 16;
  d.a_func = 2;  // norm: result t_last + 6, written, done: 10 x 16 + 9
  EXPECT_EQ(engine_timing(d, {2, 2, false, 8}).cycles, 169);
  d.a_func = 3;  // squash: last result n - 1 after the first (t_last + 7)
  EXPECT_EQ(engine_timing(d, {2, 2, false, 8}).cycles, 185);
  d.a_func = 4;  // softmax: exp pass, divide pass with act_bits stages
  d.a_count = 12;
  d.a_n = 10;
  EXPECT_EQ(engine_timing(d, {2, 2, false, 8}).cycles, 154);
  EngineDescriptor f;
  f.kind = 2;
  f.a_count = 12;
  EXPECT_EQ(engine_timing(f, {2, 2, false, 8}).cycles, 14);
}

}  // namespace
}  // namespace capsgen::isa

// The streamed program (gen/compiler/stream.hpp, docs/memory-system.md): every instruction split into
// parts that fit half of each on-chip memory, run on a DRAM image and bounded on-chip memories, must
// leave DRAM equal to the flat program's memory, element for element.
#include <gtest/gtest.h>

#include <algorithm>

#include <map>

#include <fmt/format.h>

#include "compiler/compiler.hpp"
#include "compiler/executor.hpp"
#include "compiler/stream.hpp"
#include "compile_fixture.hpp"
#include "golden/fixed_model.hpp"
#include "golden/workload.hpp"
#include "isa/engine_descriptor.hpp"
#include "isa/gemm_ref.hpp"

namespace capsgen {
namespace {

using test::Compiled;
using test::compile;
using test::model;
using test::preset;
using test::run_flat;

struct Case {
  const char* preset;
  const char* model;
  int seed;
  bool split_reduction;  // the preset's memories force a reduction into parts (sums held in the accumulators)
};

class StreamTest : public ::testing::TestWithParam<Case> {};

// The shared-memory bytes of part pi's moves: owner[b] = 1 for a byte buffer's, 2 for a buffer of the
// lane view `view` (4 bytes per lane); fails when a byte belongs to both or lies outside the part's
// half of the shared memory. Moves into other memories are skipped.
void own_shared_bytes(const OnchipMap& map, const Part& p, std::size_t pi, Onchip view, std::map<std::int64_t, int>& owner) {
  const std::int64_t sh = map.base[int(Onchip::kShared)], lv = map.base[int(view)];
  for (const auto* list : {&p.loads, &p.stores})
    for (const Move& m : *list) {
      if (m.mem != Onchip::kShared && m.mem != view) continue;
      const int kind = m.mem == view ? 2 : 1;
      for_each_move_element(m, [&](std::int64_t, std::int64_t e) {
        const std::int64_t b0 = kind == 2 ? sh + 4 * (e - lv) : e;
        for (std::int64_t b = b0; b < b0 + (kind == 2 ? 4 : 1); ++b) {
          ASSERT_GE(b, sh + p.half * map.half(Onchip::kShared)) << "part " << pi;
          ASSERT_LT(b, sh + (p.half + 1) * map.half(Onchip::kShared)) << "part " << pi;
          auto [it, fresh] = owner.emplace(b, kind);
          ASSERT_TRUE(fresh || it->second == kind) << "part " << pi << ": shared byte " << b << " in a byte and a lane buffer";
        }
      });
    }
}

// The stream compiler plans for the narrower of the off-chip port and the DRAM's peak data rate, in
// bytes per accelerator cycle: one DDR3-1600 x8 chip moves 1.6 GB/s = 6.4 bytes per cycle at 250 MHz,
// below capsacc-16x16's 64-bit port (8); a 64-bit rank (12.8 GB/s) leaves the port the limit, as
// does tiny-2x2's 32-bit port at 100 MHz (4 bytes against the chip's 16).
TEST(StreamBandwidth, NarrowerOfPortAndDram) {
  AccelConfig cfg = preset("capsacc-16x16");
  EXPECT_DOUBLE_EQ(offchip_bytes_per_cycle(cfg), 6.4);
  cfg.offchip.dram = std::string(CAPSGEN_REPO_ROOT) + "/configs/dram/micron-mt41j256m8-ddr3-1600-x64.yaml";
  EXPECT_DOUBLE_EQ(offchip_bytes_per_cycle(cfg), 8.0);
  EXPECT_DOUBLE_EQ(offchip_bytes_per_cycle(preset("tiny-2x2")), 4.0);
}

// Each element a move touches is counted once per direction however often it is moved, at its
// region's code width: two parts load the same 4 x 3 box of 8-bit codes (12 bytes once); a third
// loads two rows of 3, one inside that box (3 bytes more), and three 32-bit codes (12 bytes); a
// store of two 32-bit codes done twice writes 8 distinct bytes.
TEST(StreamDistinctBytes, EachElementOnce) {
  isa::Program prog;
  prog.size = 100;
  prog.regions.push_back({"a", 0, {50}, 8});
  prog.regions.push_back({"b", 50, {50}, 32});
  Move box;
  box.dram = 10;
  box.dims = {{3, 1, 1}, {4, 10, 3}};  // elements 10-12, 20-22, 30-32, 40-42 (region a)
  Move below = box;
  below.dram = 40;
  below.dims = {{3, 1, 1}, {2, 5, 3}};  // 40-42 (in the box) and 45-47
  Move wide = box;
  wide.dram = 50;
  wide.dims = {{3, 1, 1}};  // 50-52, region b
  Move out;
  out.store = true;
  out.dram = 60;
  out.dims = {{2, 1, 1}};
  StreamedProgram sp;
  sp.parts.resize(3);
  sp.parts[0].loads = {box};
  sp.parts[1].loads = {box};
  sp.parts[2].loads = {below, wide};
  sp.parts[2].stores = {out, out};
  const DistinctBytes d = stream_distinct_bytes(prog, sp);
  EXPECT_EQ(d.read, 12 + 3 + 3 * 4);
  EXPECT_EQ(d.written, 2 * 4);
}

TEST_P(StreamTest, StreamedProgramLeavesDramEqualToTheFlatProgram) {
  const Case tc = GetParam();
  const Compiled c = compile(tc.preset, tc.model, tc.seed);
  const std::vector<std::int32_t> flat = run_flat(c);

  const StreamedProgram sp = stream_program(c.w.cfg, c.prog);
  int held = 0;
  for (const Part& p : sp.parts)
    if (const auto* g = std::get_if<isa::Gemm>(&p.op)) held += g->acc_hold;
  EXPECT_EQ(held > 0, tc.split_reduction);
  std::vector<std::int32_t> dram = c.image;
  const StreamStats st = execute_streamed(c.w.cfg, c.prog, sp, dram);
  ASSERT_EQ(std::int64_t(dram.size()), c.prog.size);
  for (std::size_t a = 0; a < flat.size(); ++a) ASSERT_EQ(dram[a], flat[a]) << "DRAM element " << a;

  // Every instruction has parts, in program order, each with at least one store (its outputs) except
  // the parts that hold their sums in the accumulators; a holding part is followed by one of the same
  // instruction that continues them, with the same block (one block: batch 1, m_total <= m_block).
  std::size_t prev = 0;
  std::vector<int> parts(c.prog.instrs.size(), 0);
  for (std::size_t i = 0; i < sp.parts.size(); ++i) {
    const Part& p = sp.parts[i];
    EXPECT_GE(p.instr, prev);
    prev = p.instr;
    ++parts[p.instr];
    const auto* g = std::get_if<isa::Gemm>(&p.op);
    EXPECT_EQ(p.stores.empty(), g && g->acc_hold) << "part " << i;
    for (const Move& m : p.loads) EXPECT_LE(m.dims.size(), 3u);
    if (g && g->acc_hold) {
      ASSERT_LT(i + 1, sp.parts.size());
      const auto* n = std::get_if<isa::Gemm>(&sp.parts[i + 1].op);
      ASSERT_NE(n, nullptr);
      EXPECT_TRUE(n->acc_continue) << "part " << i + 1;
      EXPECT_EQ(sp.parts[i + 1].instr, p.instr);
      EXPECT_EQ(n->m_total, g->m_total);
      EXPECT_EQ(n->n_tiles, g->n_tiles);
      EXPECT_EQ(g->batch, 1);
      EXPECT_LE(g->m_total, g->m_block);
    }
    // The engine can run every part (the chip's frames have none pending).
    if (g) {
      EXPECT_NO_THROW(isa::encode_engine(*g, c.w.cfg.array.rows, c.w.cfg.array.cols, c.w.cfg.accumulator.depth))
          << "part " << i << " " << g->name;
    }
  }
  for (std::size_t i = 0; i < parts.size(); ++i) EXPECT_GT(parts[i], 0) << isa::instr_name(c.prog.instrs[i]);
  EXPECT_EQ(st.parts, (long long)sp.parts.size());
  EXPECT_GT(st.dram_read_bytes, 0);

  // Placement (docs/memory-system.md section 2): Gemm results in the data memory, Activate and Fill results in the part's half of the weight memory, stored from there;
  // Activate's inputs in the data memory. SMP (section 2.2): data and weight buffers in the shared memory.
  // HY (section 2.1): a data or weight buffer may have overflowed into the shared memory.
  const OnchipMap& map = sp.map;
  const bool hy = map.has_shared() && !map.smp;
  const auto place = [&](Onchip m) { return map.smp && (m == Onchip::kData || m == Onchip::kWeight) ? Onchip::kShared : m; };
  const auto in_mem_half = [&](const Part& p, Onchip m, std::int64_t a) {
    const std::int64_t lo = map.base[int(m)] + p.half * map.half(m);
    return a >= lo && a < lo + map.half(m);
  };
  const auto in_half = [&](const Part& p, Onchip kind, std::int64_t a) {
    return in_mem_half(p, place(kind), a) || (hy && in_mem_half(p, Onchip::kShared, a));
  };
  const auto placed = [&](Onchip got, Onchip kind) { return got == place(kind) || (hy && got == Onchip::kShared); };
  int activate_parts = 0, fill_parts = 0;
  for (std::size_t i = 0; i < sp.parts.size(); ++i) {
    const Part& p = sp.parts[i];
    Onchip out_mem = Onchip::kWeight;
    if (const auto* g = std::get_if<isa::Gemm>(&p.op)) {
      out_mem = Onchip::kData;
      if (!g->acc_hold) {
        EXPECT_TRUE(in_half(p, out_mem, g->out.base)) << "part " << i;
      }
    } else if (const auto* a = std::get_if<isa::Activate>(&p.op)) {
      ++activate_parts;
      EXPECT_TRUE(in_half(p, Onchip::kWeight, a->out_base)) << "part " << i << " " << a->name;
      EXPECT_TRUE(in_half(p, Onchip::kData, a->in_base)) << "part " << i << " " << a->name;
      // Loads: the input (data), and only read-modify-write loads of the output box (weight).
      for (const Move& m : p.loads) {
        EXPECT_TRUE(placed(m.mem, Onchip::kData) || placed(m.mem, Onchip::kWeight)) << "part " << i;
        EXPECT_TRUE(in_half(p, m.mem, m.chip)) << "part " << i;
        if (m.mem == Onchip::kWeight) {  // (SMP: input and output loads share a memory; not told apart)
          EXPECT_EQ(m.chip, a->out_base) << "part " << i;
        }
      }
    } else if (const auto* f = std::get_if<isa::Fill>(&p.op)) {
      ++fill_parts;
      EXPECT_TRUE(in_half(p, Onchip::kWeight, f->base)) << "part " << i << " " << f->name;
      for (const Move& m : p.loads) EXPECT_TRUE(placed(m.mem, Onchip::kWeight)) << "part " << i;
    }
    for (const Move& m : p.stores) {
      EXPECT_TRUE(placed(m.mem, out_mem)) << "part " << i << " " << isa::instr_name(p.op);
      EXPECT_TRUE(in_half(p, out_mem, m.chip)) << "part " << i;
    }
  }
  EXPECT_GT(activate_parts, 0);
  EXPECT_GT(fill_parts, 0);

  // The modelled time covers at least the engine's work and the moves at the port's width.
  const StreamTiming t = stream_timing(c.w.cfg, c.prog, sp);
  EXPECT_GE(t.cycles, t.engine_cycles);
  EXPECT_GE(t.cycles, (st.dram_read_bytes + st.dram_write_bytes) / (c.w.cfg.offchip.bus_bits / 8));
}

INSTANTIATE_TEST_SUITE_P(Workloads, StreamTest,
                         ::testing::Values(Case{"tiny-2x2", "capsnet-tiny", 1, false},
                                           Case{"small-4x4", "capsnet-tiny", 2, false},
                                           Case{"tiny-2x2-smp", "capsnet-tiny", 7, false},
                                           Case{"tiny-2x2-smp", "capsnet-small", 8, true},
                                           Case{"tiny-2x2-hy-lanes", "capsnet-tiny", 9, false},
                                           Case{"tiny-2x2-hy-lanes", "capsnet-small", 10, true},
                                           Case{"tiny-2x2", "capsnet-small", 3, true},
                                           Case{"small-4x4", "capsnet-small", 4, true},
                                           Case{"capsacc-16x16", "capsnet-small", 5, true},
                                           Case{"capsacc-16x16", "capsnet-mnist", 6, true}),
                         [](const ::testing::TestParamInfo<Case>& i) {
                           std::string s = fmt::format("{}_{}_seed{}", i.param.preset, i.param.model, i.param.seed);
                           for (auto& ch : s)
                             if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return s;
                         });

// The checker can fail: a load that misses one element a part reads is reported by part and
// element, and so is a store of an element the part never defined.
TEST(Stream, ExecutorCatchesAMissingLoadAndAnUndefinedStore) {
  const Compiled c = compile("tiny-2x2", "capsnet-tiny", 1);
  StreamedProgram sp = stream_program(c.w.cfg, c.prog);
  {
    StreamedProgram bad = sp;
    Move& m = bad.parts[0].loads[0];
    ASSERT_GT(m.dims[0].count, 1);
    ASSERT_EQ(m.dims[0].dram_stride, 1);
    ASSERT_EQ(m.dims[0].chip_stride, 1);
    m.dims[0].count -= 1;  // the first element of the first run (the first tile's first weight) is missing
    m.dram += 1;
    m.chip += 1;
    std::vector<std::int32_t> dram = c.image;
    try {
      execute_streamed(c.w.cfg, c.prog, bad, dram);
      FAIL() << "a missing load went unnoticed";
    } catch (const StreamError& e) {
      EXPECT_NE(std::string(e.what()).find("part 0 (conv1"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("no move of the part loaded"), std::string::npos) << e.what();
    }
  }
  {
    StreamedProgram bad = sp;
    Move& m = bad.parts[0].stores[0];
    m.dims[0].count += 1;
    std::vector<std::int32_t> dram = c.image;
    EXPECT_THROW(execute_streamed(c.w.cfg, c.prog, bad, dram), StreamError);
  }
}

// Kept loads (Part::kept) are moves the part two before made (same instruction and half), and the
// executor checks the data is there: a kept move that no earlier part of that half loaded fails.
TEST(Stream, KeptLoadsComeFromThePartTwoBefore) {
  const Compiled c = compile("tiny-2x2", "capsnet-tiny", 1);
  const StreamedProgram sp = stream_program(c.w.cfg, c.prog);
  std::size_t first = 0, kept = 0;
  for (std::size_t p = 0; p < sp.parts.size(); ++p) {
    const Part& part = sp.parts[p];
    if (part.kept.empty()) continue;
    ASSERT_GE(p, 2u);
    const Part& before = sp.parts[p - 2];
    EXPECT_EQ(before.instr, part.instr);
    EXPECT_EQ(before.half, part.half);
    for (const Move& m : part.kept) {
      const bool loaded = std::find(before.loads.begin(), before.loads.end(), m) != before.loads.end();
      const bool chained = std::find(before.kept.begin(), before.kept.end(), m) != before.kept.end();
      EXPECT_TRUE(loaded || chained) << "part " << p;
    }
    if (kept++ == 0) first = p;
  }
  ASSERT_GT(kept, 0u) << "capsnet-tiny's conv1 parts share their weights";
  std::vector<std::int32_t> dram = c.image;
  EXPECT_NO_THROW(execute_streamed(c.w.cfg, c.prog, sp, dram));
  // The part that made the move keeps it instead: nothing loaded it.
  StreamedProgram bad = sp;
  Part& maker = bad.parts[first - 2];
  const Move m = bad.parts[first].kept.front();
  const auto at = std::find(maker.loads.begin(), maker.loads.end(), m);
  ASSERT_NE(at, maker.loads.end());
  maker.loads.erase(at);
  maker.kept.push_back(m);
  dram = c.image;
  try {
    execute_streamed(c.w.cfg, c.prog, bad, dram);
    FAIL() << "a kept load without its data went unnoticed";
  } catch (const StreamError& e) {
    EXPECT_NE(std::string(e.what()).find(fmt::format("part {} ", first - 2)), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("the data is not there"), std::string::npos) << e.what();
  }
}

// Activate results belong in the weight memory: an Activate part whose output base is moved into
// the data memory (its half there, so only the memory is wrong) is reported by part.
TEST(Stream, ExecutorCatchesAnActivateResultInTheDataMemory) {
  const Compiled c = compile("tiny-2x2", "capsnet-tiny", 1);
  StreamedProgram sp = stream_program(c.w.cfg, c.prog);
  std::vector<std::int32_t> dram = c.image;
  execute_streamed(c.w.cfg, c.prog, sp, dram);  // as compiled: passes
  std::size_t pi = 0;
  while (pi < sp.parts.size() && !std::holds_alternative<isa::Activate>(sp.parts[pi].op)) ++pi;
  ASSERT_LT(pi, sp.parts.size());
  StreamedProgram bad = sp;
  Part& p = bad.parts[pi];
  auto& a = std::get<isa::Activate>(p.op);
  const std::int64_t data_half = bad.map.base[int(Onchip::kData)] + p.half * bad.map.half(Onchip::kData);
  a.out_base = data_half + bad.map.half(Onchip::kData) - 1;  // the last element of the part's data half
  dram = c.image;
  try {
    execute_streamed(c.w.cfg, c.prog, bad, dram);
    FAIL() << "an Activate result in the data memory went unnoticed";
  } catch (const StreamError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(fmt::format("part {} (", pi)), std::string::npos) << what;
    EXPECT_NE(what.find("weight memory"), std::string::npos) << what;
  }
  // A store that claims the data memory for the weight memory's buffer is caught too.
  bad = sp;
  bad.parts[pi].stores[0].mem = Onchip::kData;
  dram = c.image;
  EXPECT_THROW(execute_streamed(c.w.cfg, c.prog, bad, dram), StreamError);
}

// SMP (docs/memory-system.md section 2.2): one memory holds every buffer of a part, its psum lanes
// (the acc view) beside its data and weight bytes. No byte belongs to two buffers of a part, every
// buffer lies in the part's half; and the executor notices when two do overlap.
TEST(Stream, SmpPartsKeepByteAndLaneBuffersApart) {
  const Compiled c = compile("tiny-2x2-smp", "capsnet-tiny", 1);
  const StreamedProgram sp = stream_program(c.w.cfg, c.prog);
  const OnchipMap& map = sp.map;
  ASSERT_TRUE(map.smp);
  EXPECT_EQ(map.elements[int(Onchip::kData)], 0);
  EXPECT_EQ(map.elements[int(Onchip::kWeight)], 0);
  EXPECT_EQ(map.elements[int(Onchip::kAcc)] * 4, map.elements[int(Onchip::kShared)]);
  const std::int64_t sh = map.base[int(Onchip::kShared)], acc = map.base[int(Onchip::kAcc)];
  int both = 0;
  for (std::size_t pi = 0; pi < sp.parts.size(); ++pi) {
    const Part& p = sp.parts[pi];
    for (const auto* list : {&p.loads, &p.stores})
      for (const Move& m : *list) ASSERT_TRUE(m.mem == Onchip::kShared || m.mem == Onchip::kAcc) << "part " << pi;
    std::map<std::int64_t, int> owner;  // shared byte -> 1 byte buffer, 2 lane buffer
    own_shared_bytes(map, p, pi, Onchip::kAcc, owner);
    bool lanes = false, bytes = false;
    for (const auto& [b, k] : owner) (k == 2 ? lanes : bytes) = true;
    both += lanes && bytes;
  }
  EXPECT_GT(both, 0) << "no part with psum lanes beside byte buffers";

  // A part whose bias lanes are moved onto its data buffer's bytes: the bias load overwrites the
  // data, and the executor's aliasing model reports the read of the lost data.
  std::size_t pi = 0;
  for (; pi < sp.parts.size(); ++pi) {
    const auto* g = std::get_if<isa::Gemm>(&sp.parts[pi].op);
    if (g && g->init.kind == isa::AccInit::Kind::kPerColumn) break;
  }
  ASSERT_LT(pi, sp.parts.size());
  StreamedProgram bad = sp;
  Part& p = bad.parts[pi];
  auto& g = std::get<isa::Gemm>(p.op);
  Move* bias = nullptr;
  for (Move& m : p.loads)
    if (m.mem == Onchip::kAcc) bias = &m;
  ASSERT_NE(bias, nullptr);
  const std::int64_t lane = acc + (g.data.base - sh) / 4;  // the data buffer starts on a word
  bias->chip = lane;
  g.init.base = lane;
  std::vector<std::int32_t> dram = c.image;
  execute_streamed(c.w.cfg, c.prog, sp, dram);  // as compiled: passes
  dram = c.image;
  try {
    execute_streamed(c.w.cfg, c.prog, bad, dram);
    FAIL() << "bias lanes on the data buffer's bytes went unnoticed";
  } catch (const StreamError& e) {
    EXPECT_NE(std::string(e.what()).find("that no move of the part loaded"), std::string::npos) << e.what();
  }
}

// HY with 32-bit shared words (docs/memory-system.md 2.1): acc buffers that do not fit the acc
// memory's half take psum lanes of the shared memory's half (the lanes range, a view of its words),
// disjoint from the part's byte buffers there; with 16-bit shared words there is no lanes range.
TEST(Stream, HyAccBuffersOverflowIntoTheSharedMemorysLanes) {
  EXPECT_FALSE(OnchipMap::from_config(preset("tiny-2x2-hy")).has_lanes());
  const Compiled c = compile("tiny-2x2-hy-lanes", "capsnet-tiny", 1);
  const StreamedProgram sp = stream_program(c.w.cfg, c.prog);
  const OnchipMap& map = sp.map;
  ASSERT_TRUE(map.has_lanes());
  ASSERT_FALSE(map.smp);
  EXPECT_EQ(map.elements[int(Onchip::kLanes)] * 4, map.elements[int(Onchip::kShared)]);
  EXPECT_EQ(map.base[int(Onchip::kLanes)], map.base[int(Onchip::kShared)] + map.elements[int(Onchip::kShared)]);
  EXPECT_EQ(map.phys(int(Onchip::kLanes)), int(Onchip::kShared));
  EXPECT_EQ(map.phys(int(Onchip::kAcc)), int(Onchip::kAcc));
  const std::int64_t sh = map.base[int(Onchip::kShared)], ln = map.base[int(Onchip::kLanes)];
  EXPECT_EQ(map.aliases(ln + 3), (std::vector<std::int64_t>{sh + 12, sh + 13, sh + 14, sh + 15}));
  EXPECT_EQ(map.aliases(sh + 13), (std::vector<std::int64_t>{ln + 3}));
  EXPECT_TRUE(map.aliases(map.base[int(Onchip::kAcc)]).empty());  // HY's own acc memory aliases nothing
  int overflow_parts = 0, with_bytes = 0;
  for (std::size_t pi = 0; pi < sp.parts.size(); ++pi) {
    const Part& p = sp.parts[pi];
    long long acc_lanes = 0;
    bool lanes = false;
    for (const auto* list : {&p.loads, &p.stores})
      for (const Move& m : *list) {
        if (m.mem == Onchip::kAcc) acc_lanes += m.elements();
        ASSERT_FALSE(m.store && m.mem == Onchip::kLanes) << "part " << pi << ": psum lanes are only loaded";
        lanes |= m.mem == Onchip::kLanes;
      }
    std::map<std::int64_t, int> owner;  // shared byte -> 1 byte buffer, 2 lane buffer
    own_shared_bytes(map, p, pi, Onchip::kLanes, owner);
    if (!lanes) continue;
    ++overflow_parts;
    // Only what does not fit goes over: the acc buffers the part keeps in the acc memory plus the
    // first one that went to the lanes exceed the acc memory's half.
    long long first_over = 0;
    for (const Move& m : p.loads)
      if (m.mem == Onchip::kLanes) {
        first_over = m.elements();
        break;
      }
    EXPECT_GT(acc_lanes + first_over, map.half(Onchip::kAcc)) << "part " << pi;
    bool bytes = false;
    for (const auto& [b, k] : owner) bytes |= k == 1;
    with_bytes += bytes;
  }
  EXPECT_GT(overflow_parts, 0) << "no acc buffer overflowed into the shared memory's lanes";
  EXPECT_GT(with_bytes, 0) << "no part with psum lanes beside byte buffers in the shared memory";
  std::vector<std::int32_t> dram = c.image;
  execute_streamed(c.w.cfg, c.prog, sp, dram);
}

TEST(Stream, OnlyFittingPartsAreStreamed) {
  // SMP keeps psum codes in 32-bit lanes of the shared memory's words: 16-bit words cannot hold one.
  AccelConfig cfg = preset("tiny-2x2-smp");
  cfg.scratchpad.shared.width_bits = 16;
  EXPECT_NE(OnchipMap::unsupported_reason(cfg).find("scratchpad.shared.width_bits >= 32"), std::string::npos);
  EXPECT_THROW(OnchipMap::from_config(cfg), std::invalid_argument);
  try {
    stream_program(cfg, compile("tiny-2x2-smp", "capsnet-tiny", 1).prog);
    FAIL() << "no error";
  } catch (const StreamError& e) {
    EXPECT_NE(std::string(e.what()).find("scratchpad.shared.width_bits >= 32"), std::string::npos) << e.what();
  }

  // A data memory too small for one part of conv1 (one output row needs 5 input rows of 12).
  Compiled c = compile("tiny-2x2", "capsnet-tiny", 1);
  c.w.cfg.scratchpad.data.size_kib = 0;
  try {
    stream_program(c.w.cfg, c.prog);
    FAIL() << "no error";
  } catch (const StreamError& e) {
    EXPECT_NE(std::string(e.what()).find("conv1: no part fits"), std::string::npos) << e.what();
  }
}

// A reduction split in two: the first part holds its sums in the accumulators, the second continues
// from them; the outputs equal the whole Gemm's bit for bit (saturation after every chunk included).
TEST(Stream, SplitReductionEqualsTheWholeGemm) {
  const isa::GemmShape shape{2, 3, 12, 8};  // narrow psums: saturation happens
  isa::Gemm g;
  g.name = "split";
  g.m_total = 4;
  g.m_block = 4;
  g.k_chunks = 4;
  g.n_tiles = 2;
  g.r_total = 7;
  g.n_total = 5;
  g.tile = {0, 0, 2 * 2 * 3, 2 * 3, 3, 1, 1};
  g.data = {isa::DataSource::Kind::kAffine, 100, 0, 7 * 0 + 8, 2, 1};
  g.init = {isa::AccInit::Kind::kPerColumn, 200, 0, 0, 0};
  g.out = {300, 0, 5, 1, 0, 1, 0};
  g.shift = 2;
  g.relu = true;
  std::vector<std::int64_t> mem(400);
  std::uint64_t x = 12345;
  for (auto& v : mem) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    v = std::int64_t((x >> 33) % 255) - 127;
  }
  for (int o = 0; o < 5; ++o) mem[std::size_t(200 + o)] = (o % 2 ? 1 : -1) * 1500;
  const auto read = [&](std::int64_t a) { return mem.at(std::size_t(a)); };
  std::vector<std::int64_t> whole(400, 0), split(400, 0);
  isa::run_gemm_reference(g, shape, read, [&](std::int64_t a, std::int64_t v) { whole.at(std::size_t(a)) = v; });

  isa::AccState acc;
  isa::Gemm first = g;
  first.k_chunks = 2;
  first.r_total = 4;
  first.acc_hold = true;
  int held_writes = 0;
  isa::run_gemm_reference(first, shape, read, [&](std::int64_t, std::int64_t) { ++held_writes; }, nullptr, &acc);
  EXPECT_EQ(held_writes, 0);
  ASSERT_EQ(acc.sums.size(), std::size_t(4 * 2 * 3));
  bool saturated = false;
  for (std::int64_t v : acc.sums) saturated |= (v == 2047 || v == -2048);
  EXPECT_TRUE(saturated) << "the test should reach psum saturation in the first part";
  isa::Gemm second = g;
  second.k_chunks = 2;
  second.r_total = 3;
  second.tile.base = 2 * g.tile.s_k;
  second.data.base = g.data.base + 2 * g.data.s_k;
  second.init = {};
  second.acc_continue = true;
  isa::run_gemm_reference(second, shape, read, [&](std::int64_t a, std::int64_t v) { split.at(std::size_t(a)) = v; }, nullptr,
                          &acc);
  EXPECT_EQ(whole, split);

  // Continuing without accumulators of the block's size is a program error.
  isa::AccState none;
  EXPECT_THROW(isa::run_gemm_reference(second, shape, read, [](std::int64_t, std::int64_t) {}, nullptr, &none), std::logic_error);
  // The engine runs both parts; not a part of several blocks, nor one that continues and reads an init.
  const isa::EngineDescriptor d1 = isa::encode_engine(first, 2, 3, 64), d2 = isa::encode_engine(second, 2, 3, 64);
  EXPECT_TRUE(d1.acc_hold);
  EXPECT_FALSE(d1.acc_continue);
  EXPECT_TRUE(d2.acc_continue);
  EXPECT_FALSE(d2.init_bias);
  isa::Gemm blocks = first;
  blocks.m_block = 2;
  EXPECT_THROW(isa::encode_engine(blocks, 2, 3, 64), std::invalid_argument);
  isa::Gemm with_init = second;
  with_init.init = g.init;
  EXPECT_THROW(isa::encode_engine(with_init, 2, 3, 64), std::invalid_argument);
}

}  // namespace
}  // namespace capsgen

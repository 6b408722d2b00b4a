// Streaming a program through the scratchpad (docs/memory-system.md): the flat program addresses one
// memory that holds the whole network; on the accelerator that memory is off-chip DRAM and the
// engine sees only the on-chip memories. stream_program() splits every instruction into parts whose
// operands fit half of each on-chip memory (the other half belongs to the part being loaded or
// stored), rebases each part's addresses to the on-chip element space, and adds the DMA moves that
// bring its inputs and take its outputs. execute_streamed() runs the result on a DRAM image and
// bounded on-chip memories, so the split is checked in C++ before any RTL runs it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "config/accel_config.hpp"
#include "isa/onchip_map.hpp"
#include "isa/program.hpp"

namespace capsgen {

// The on-chip element space (isa/onchip_map.hpp).
using isa::kOnchipMemories;
using isa::Onchip;
using isa::OnchipMap;

// Element -> (memory, word, sector) of the on-chip element space (docs/rtl-memsys.md "Address map").
// Ranges index wps/banks/sectors; SMP's acc range has the shared memory's (its words are the shared
// memory's words), and of() names the physical memory.
struct SectorMap {
  OnchipMap map;
  std::int64_t wps[kOnchipMemories] = {1, 1, 1, 1};  // words per sector in one bank
  int banks[kOnchipMemories] = {1, 1, 1, 1};
  int sectors[kOnchipMemories] = {1, 1, 1, 1};
  bool gating = false;
  SectorMap(const AccelConfig& cfg, const OnchipMap& m);
  // Memory of element a, -1 outside the element space.
  int memory_of(std::int64_t a) const;
  std::int64_t word_of(int mem, std::int64_t a) const { return (a - map.base[mem]) / map.word_elements[mem]; }
  int sector_of_word(int mem, std::int64_t word) const { return int(word / banks[mem] / wps[mem]); }
  // Physical memory and sector of element a; false outside the element space.
  bool of(std::int64_t a, int& mem, int& sector) const;
};

// One level of a DMA move: count elements, DRAM stride and on-chip stride in elements.
struct MoveDim {
  std::int64_t count = 1, dram_stride = 0, chip_stride = 0;
  bool operator==(const MoveDim& o) const {
    return count == o.count && dram_stride == o.dram_stride && chip_stride == o.chip_stride;
  }
};

// A DMA move in element units (capsgen_dma moves an element per beat with desc_size_i, or whole words;
// docs/rtl-dma.md, docs/memory-system.md section 8).
struct Move {
  bool store = false;   // false: DRAM -> on-chip, true: on-chip -> DRAM
  Onchip mem = Onchip::kData;
  std::int64_t dram = 0;  // element address in the flat image
  std::int64_t chip = 0;  // element address in the on-chip space
  std::vector<MoveDim> dims;  // innermost first, at most 3 (the DMA's levels)
  bool widen = false;     // 8-bit codes into 32-bit acc lanes (per-output accumulator init)
  std::int64_t elements() const;
  // The first and the last element the move touches on one side (DRAM or on chip).
  std::pair<std::int64_t, std::int64_t> extent(bool chip = false) const;
  bool operator==(const Move& o) const;
};

// Visits every element of a move in the DMA's order (level 0 innermost): f(DRAM element address,
// on-chip element address).
template <typename F>
void for_each_move_element(const Move& m, F f) {
  std::vector<MoveDim> d = m.dims;
  while (d.size() < 3) d.push_back({1, 0, 0});
  for (std::int64_t i2 = 0; i2 < d[2].count; ++i2)
    for (std::int64_t i1 = 0; i1 < d[1].count; ++i1)
      for (std::int64_t i0 = 0; i0 < d[0].count; ++i0)
        f(m.dram + i0 * d[0].dram_stride + i1 * d[1].dram_stride + i2 * d[2].dram_stride,
          m.chip + i0 * d[0].chip_stride + i1 * d[1].chip_stride + i2 * d[2].chip_stride);
}

// One part: an instruction of the flat program restricted to a sub-range and rebased on chip.
struct Part {
  std::size_t instr = 0;  // index of the flat instruction
  int half = 0;           // which half of every memory its buffers use
  isa::Instr op;
  std::vector<Move> loads, stores;
  // Loads the part needs that are still on chip: the part two before it (the same half, the same
  // instruction) made the same move, did not write that on-chip range, and no store since changed
  // the DRAM it came from. They move nothing (no DMA frame); execute_streamed checks the data is there.
  std::vector<Move> kept;
};

struct StreamedProgram {
  OnchipMap map;
  std::vector<Part> parts;
};

class StreamError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws StreamError naming the instruction when no split of it fits the on-chip memories (even one
// batch item, the smallest vector range, one output tile and one reduction chunk).
StreamedProgram stream_program(const AccelConfig& cfg, const isa::Program& prog);

struct StreamStats {
  long long parts = 0, loads = 0, stores = 0;
  long long load_elements = 0, store_elements = 0;
  long long dram_read_bytes = 0, dram_write_bytes = 0;  // by the regions' code widths
  long long rmw_loads = 0;  // loads of output buffers that a part writes only partly
  long long kept_loads = 0;  // loads a part needs that stay on chip from the part two before (Part::kept)
};

// Runs the streamed program: `dram` is the flat image (one int32 per element); the on-chip memories
// are bounded by `sp.map`. Throws StreamError naming the part when a load or store is outside its
// memory's (Move::mem) half for the part, an engine read is of an element no load or write of the
// part defined (or outside the part's halves; for Activate, outside the data memory), an engine
// write lands outside the part's half of the memory its kind writes (docs/memory-system.md
// section 2: Gemm results in the data memory; Activate and Fill results in
// the weight memory), or a store would write an element the part never defined.
StreamStats execute_streamed(const AccelConfig& cfg, const isa::Program& prog, const StreamedProgram& sp,
                             std::vector<std::int32_t>& dram);

// Static statistics of the streamed program (moves and DRAM bytes), without running it.
StreamStats stream_stats(const isa::Program& prog, const StreamedProgram& sp);

// The DRAM bytes the parts' moves touch, each element counted once however often it is moved: the
// traffic of the same parts if nothing were moved twice (the minimum for what they compute). For the
// parts of one instruction, that instruction's minimum traffic.
struct DistinctBytes {
  long long read = 0, written = 0;
};
DistinctBytes stream_distinct_bytes(const isa::Program& prog, const StreamedProgram& sp);

// The engine's cycles for one part (isa::instr_timing; a split reduction's parts, which keep their
// sums in the accumulators, timed as ordinary Gemms). Throws StreamError when the engine cannot time it.
long long part_engine_cycles(const AccelConfig& cfg, const Part& p);

// Modelled time of the streamed program with double buffering: the loads of part p+1 and the stores
// of part p-1 run while part p computes, so
//   cycles = load(0) + sum_p max(max(engine(p), fetch), load(p+1) + store(p-1)) + store(last)
// with engine(p) the engine's cycle model (isa::engine_timing; a split reduction's parts, which keep
// their sums in the accumulators, timed as ordinary Gemms) and a move costing its bytes at
// offchip_bytes_per_cycle (no latency, no row misses: an upper bound on speed; docs/accelerator.md
// section 6).
// Where part p+1 loads DRAM that part p stores (the next instruction's input when p is its
// producer's last part), p's stores and p+1's loads cannot overlap
// p's compute: that term is max(engine(p), store(p-1)) + store(p) + load(p+1).
struct StreamTiming {
  long long cycles = 0;
  long long engine_cycles = 0;  // sum of engine(p)
  long long dma_bound_parts = 0;  // parts whose moves take longer than their compute
  long long serialized_parts = 0;  // parts whose successor loads what they store (no overlap there)
  // Each part's term of the sum above (the first load and the last store are in no part's).
  std::vector<long long> part_cycles;
};
StreamTiming stream_timing(const AccelConfig& cfg, const isa::Program& prog, const StreamedProgram& sp);

// Bytes per accelerator cycle the off-chip side can move at best: the port's width (offchip.bus_bits)
// or the DRAM's peak data rate at the preset's clock (offchip.dram), whichever is lower. The stream
// compiler plans its parts with it (fewer DRAM bytes win when the DRAM is the narrower side) and
// stream_timing costs the moves with it.
double offchip_bytes_per_cycle(const AccelConfig& cfg);

}  // namespace capsgen

// The on-chip memory accesses of a streamed program, counted the way capsgen_memsys's counters count
// them (docs/rtl-memsys.md "Counters", docs/dse-memory.md section 6): per memory the engine's bank
// reads and writes and the DMA's accesses, per sector the bank accesses of every port. The engine's
// port traffic is enumerated from each part's engine descriptor with the rules of the RTL
// (docs/rtl-engine.md: gather, vector walker, tile reader, bias and per-output init reads, writer,
// activation pass), the DMA's from the frame program's decoded DMA frames (one access per beat).
// tb_chip checks every figure against the chip's counters: they must agree exactly.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "compiler/frame_program.hpp"
#include "compiler/stream.hpp"

namespace capsgen {

// Counter units: bank accesses (a vector read spanning 3 words counts 3), DMA accesses (one per beat).
struct MemoryAccesses {
  long long eng_rd = 0, eng_wr = 0, dma_rd = 0, dma_wr = 0;
  std::vector<long long> sector;  // every port's bank accesses per sector
};

struct PartAccesses {
  std::array<long long, kOnchipMemories> eng_rd{}, eng_wr{};  // per range (data, weight, acc, shared, lanes)
  std::array<long long, kOnchipMemories> dma_rd{}, dma_wr{};  // the part's own moves (stores read, loads write)
};

struct AccessModel {
  std::array<MemoryAccesses, kOnchipMemories> mem;  // per range; shared and lanes stay empty without HY
  int ranges = 3;  // ranges with counters: 3 (SEP), 4 (+ shared: HY, SMP), 5 (+ HY's lanes view)
  std::vector<PartAccesses> parts;  // per part of the streamed program
  // Accesses the enumeration found outside every memory (a program the RTL would flag with err_o).
  long long outside = 0;
};

// One engine access: its range (data, weight, acc, shared, lanes), whether it writes, the banks of
// that range's memory it enables (bit b: bank b), its port and its cycle.
struct EngineAccess {
  // The engine port: the data port (gather, vector walker, activation passes: drd), the tile reader
  // (wrd), the psum init port (brd), the result writer (wr).
  enum class Port { kData, kTile, kPsum, kWriter };
  int range = 0;
  bool write = false;
  std::uint64_t banks = 0;  // up to 64 banks (config limit)
  Port port = Port::kData;
  // The engine cycle of the access from the part's accept (the first is 1), where the engine's cycle
  // model schedules it (a Gemm's accesses); -1: unscheduled (activation passes, fills).
  long long cycle = -1;
};

// Part `part`'s engine accesses in the order of its ports' loops (each port's own accesses in the
// order it makes them), a Gemm's with the cycles the engine's cycle model gives them.
std::vector<EngineAccess> engine_access_trace(const AccelConfig& cfg, const StreamedProgram& sp, std::size_t part);

// Counts the engine's accesses from each part's descriptor and the DMA's from `fp`'s DMA frames.
// Throws StreamError naming the part for a part the encoder cannot express (a pending frame).
AccessModel count_accesses(const AccelConfig& cfg, const StreamedProgram& sp, const FrameProgram& fp);

// Per part, the sectors the engine's accesses touch (bit s of memory m): every word a vector, tile row,
// bias row or record spans, the lanes the engine discards included (a `rows`-wide vector read of a
// shorter vector, a `cols`-wide bias row for a per-output init). The PMU must keep them awake while
// the part runs: the memory flags an access to a sleeping sector even where the engine drops the lane.
std::vector<std::array<std::uint32_t, kOnchipMemories>> engine_sectors(const AccelConfig& cfg, const StreamedProgram& sp);
// The same for several sector layouts at once (presets that differ from `cfg` only in their memories'
// sector counts; one enumeration of the engine's accesses): result[k][part] for layouts[k].
std::vector<std::vector<std::array<std::uint32_t, kOnchipMemories>>> engine_sectors(const AccelConfig& cfg,
                                                                                   const StreamedProgram& sp,
                                                                                   const std::vector<AccelConfig>& layouts);

// The model as lines for tb_chip (access.txt): totals per memory, per sector, per part (the memories of
// the organization only: the shared memory with HY).
std::string access_text(const AccessModel& a);

}  // namespace capsgen

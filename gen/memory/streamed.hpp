// The streamed evaluation of the memory exploration (docs/dse-memory.md section 7): a configuration's
// cycles, accesses and sector power from the program the chip runs for its memories, not from the
// flat program's per-operation profile. For one organization and size tuple the compiler splits the
// network into parts that fit the memories (stream_program), the stream timing model gives each
// part's cycles, the access model (count_accesses: equal to the chip's counters) each part's bank
// accesses, and the frame program, built once per sector count, the sectors each part's PMU frame
// keeps awake and the wake-ups the PMU frames order (equal to the chip's sleep_ack edges).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "config/accel_config.hpp"
#include "isa/program.hpp"
#include "memory/dse.hpp"

namespace capsgen::memory {

// One memory with one sector count.
struct SectorFigures {
  int sectors = 1;
  std::vector<double> awake_cycles;  // per operation: its cycles times the sectors awake, summed
  std::vector<std::uint32_t> mask;   // per operation: the sectors awake at some time in it
  std::vector<std::vector<double>> sector_cycles;  // per operation and sector: its cycles awake
  long long wakes = 0;               // OFF->ON transitions ordered by the PMU frames (reset: all ON)
};

// Everything the exploration needs of one (organization, sizes): per operation (the DESCNet rows of
// the flat program, compiler/compiler.hpp) its cycles and per memory the bytes its parts move through
// the memory's ports (bank accesses of the engine and the DMA times the word's bytes).
struct StreamedFigures {
  bool ok = false;
  std::string why;  // when !ok: why the chip cannot run the network with these memories
  long long cycles = 0, parts = 0;
  long long dram_read_bytes = 0, dram_write_bytes = 0;  // stream_stats
  std::vector<long long> op_cycles;  // the first load's and the last store's cycles go to the first operation
  std::array<std::vector<double>, kMems> rd_bytes, wr_bytes;
  std::array<std::vector<SectorFigures>, kMems> sectors;  // per entry of the memory's sector pool
};

class StreamedEvaluator {
 public:
  // `ops`: the number of DESCNet rows of `prog` (profiles_from(analyze_program(...)).size()).
  StreamedEvaluator(const AccelConfig& base, const isa::Program& prog);
  std::size_t ops() const { return ops_; }
  // The figures of `option`'s organization (SEP, SMP or HY; SMP needs shared words of at least 32 bits) with
  // memory sizes `bytes` (0: absent), with power gating for each sector count in `pools` (a memory's
  // pool {1} or empty: not gated). Thread-safe.
  StreamedFigures operator()(int option, const std::array<long long, kMems>& bytes,
                             const std::array<std::vector<int>, kMems>& pools) const;

 private:
  const AccelConfig& base_;
  const isa::Program& prog_;
  std::vector<std::size_t> op_of_instr_;
  std::size_t ops_ = 0;
};

}  // namespace capsgen::memory

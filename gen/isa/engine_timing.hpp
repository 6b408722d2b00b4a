// Cycle model of the compute engine (capsgen_engine, docs/rtl-engine.md "Cycle model"): how many
// cycles one descriptor takes on the generated RTL, from the descriptor alone. The compiler's
// statistics use it (stats.json "cycles"), and the engine's block test prints it beside the measured
// count of every descriptor it runs, so the model's error is measured on every preset.
//
// It follows the engine's resources vector by vector instead of bounding them: the gather unit (one
// element per cycle into a double-buffered staging block), the tile reader (a tile loads while the
// previous one streams), the streamer (one vector per cycle when its block is staged, its tile
// loaded and, on the last chunk, an output FIFO entry free), the output writer (one element per
// cycle, credits returned when a record is written), the pipeline latencies in between; and for
// Activate and Fill passes the one-element-per-cycle data port and the activation unit's latency.
#pragma once

#include <vector>

#include "isa/engine_descriptor.hpp"

namespace capsgen::isa {

// Result vectors the engine's output FIFO holds (capsgen_engine; the streamer's credits). A credit
// comes back only when the writer has stored the record, array_latency + 7 cycles after the vector
// was issued at the earliest, so the FIFO must cover that loop for the writer to take one record
// per cycle: the next power of two of array_latency + 8, at least 16.
inline int engine_out_fifo_depth(int array_latency) {
  int f = 16;
  while (f < array_latency + 8) f *= 2;
  return f;
}

// What of the generated RTL the timing depends on besides the descriptor.
struct EngineTimingShape {
  int rows = 1, cols = 1;
  bool pe_pipeline = false;  // one more array latency cycle
  int act_bits = 8;          // softmax divider stages
  int array_latency() const { return rows + cols + (pe_pipeline ? 1 : 0); }
};

struct EngineTiming {
  long long cycles = 0;  // accept to done, as the engine's stat_cycles_o counts
  // Streamer cycles lost, by first missing condition (as stat_stall_*_o): staged data, tile, credit.
  long long stall_data = 0, stall_tile = 0, stall_out = 0;
};

// When a Gemm's ports act, in engine cycles from the descriptor's accept (the first is 1), for the
// models of the memories behind them (compiler/chip_timing.hpp). Vectors are numbered in the
// streamer's order (batch, output block, k chunk, tile, vector), tiles and steps in theirs.
struct GemmSchedule {
  std::vector<long long> step_data;  // per (batch, block, k chunk): the gather's first element (or vector)
  std::vector<long long> tile_load;  // per tile: the tile reader's first row
  std::vector<long long> issue;      // per vector: the cycle the streamer issues it
  std::vector<long long> record;     // per vector: the writer's first cycle on its record (-1: not the last chunk)
};

// The modelled cycles of one descriptor (kind 0, 1 or 2). Cost is linear in the vectors streamed.
// A Gemm's schedule goes to `schedule` when it is not null.
EngineTiming engine_timing(const EngineDescriptor& d, const EngineTimingShape& shape, GemmSchedule* schedule = nullptr);

// The modelled cycles of one program instruction as the engine would run it. The accumulator depth
// does not enter the timing, so a Gemm with more tiles than accumulator entries (which the encoder
// rejects until the compiler splits it) is timed as if it fitted. Returns false, leaving `out`
// untouched, when the instruction cannot be encoded at all (a count beyond the engine's 16 bits).
bool instr_timing(const Instr& in, const EngineTimingShape& shape, EngineTiming* out);

// Cycles of a whole program on the accelerator (capsgen_accel: the sequencer in front of the engine,
// docs/rtl-sequencer.md), from start_i to the cycle before done_o, as stat_prog_cycles_o counts, with
// a program memory that answers every fetch request in the next cycle. The sequencer fetches a
// descriptor in `words` + 2 cycles (requests, the last response, the hand-over) and starts the next
// fetch when the engine takes the current descriptor, so descriptor i occupies the engine for
// max(cycles_i, words + 2) cycles and the first fetch is not hidden:
//   (words + 2) + sum_i max(cycles_i, words + 2)
// The end marker's fetch is the last term's (its descriptor's cycles hide it or it is waited for).
long long program_cycles(const std::vector<long long>& descriptor_cycles, int words);

}  // namespace capsgen::isa
